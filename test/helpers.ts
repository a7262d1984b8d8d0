import { SELF } from "cloudflare:test";

export const BASE = "http://api.test/v1";
export const ADMIN = "test-admin-token";

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string;
  json?: unknown;
  form?: Record<string, string>;
  body?: BodyInit;
  headers?: Record<string, string>;
  /** Unix seconds for the injectable clock (X-Test-Now). */
  now?: number;
}

/** Calls the Worker through its HTTP surface, as a client would. */
export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.now !== undefined) headers["X-Test-Now"] = String(opts.now);
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["Content-Type"] ??= "application/json";
  } else if (opts.form) {
    body = new URLSearchParams(opts.form);
    headers["Content-Type"] ??= "application/x-www-form-urlencoded";
  }
  const res = await SELF.fetch(path.startsWith("http") ? path : BASE + path, { method, headers, body, redirect: "manual" });
  const text = await res.text();
  let parsed: any = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

let counter = 0;
/** A username unique across the whole test run (≤ 20 chars). */
export function uniqueName(prefix = "u"): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36).slice(-5)}${Math.random().toString(36).slice(2, 6)}${counter}`.slice(0, 20).toLowerCase();
}

export interface TestApp {
  id: string;
  client_id: string;
  client_secret: string;
  password_grant_secret: string;
  name: string;
}

export async function makeApp(fields: Record<string, unknown> = {}): Promise<TestApp> {
  const res = await call("POST", "/admin/apps", { token: ADMIN, json: { name: "Test app", url: "https://app.example.com", ...fields } });
  if (res.status !== 201) throw new Error(`makeApp: ${res.status} ${res.text}`);
  return res.body.data;
}

export async function makeUser(fields: Record<string, unknown> = {}) {
  const username = (fields.username as string) ?? uniqueName();
  const res = await call("POST", "/admin/users", { token: ADMIN, json: { username, password: "password123", ...fields } });
  if (res.status !== 201) throw new Error(`makeUser: ${res.status} ${res.text}`);
  return { ...res.body.data, password: (fields.password as string) ?? "password123" };
}

export async function appToken(app: TestApp): Promise<string> {
  const res = await call("POST", "/oauth/access_token", {
    form: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret },
  });
  if (res.status !== 200) throw new Error(`appToken: ${res.status} ${res.text}`);
  return res.body.access_token;
}

export async function userToken(app: TestApp, user: { username: string; password: string }, scope = ""): Promise<string> {
  const res = await call("POST", "/oauth/access_token", {
    form: {
      grant_type: "password",
      client_id: app.client_id,
      password_grant_secret: app.password_grant_secret,
      username: user.username,
      password: user.password,
      scope,
    },
  });
  if (res.status !== 200) throw new Error(`userToken: ${res.status} ${res.text}`);
  return res.body.access_token;
}

/** An app, a user and a token for that user with the given scopes. */
export async function actor(scope = "", userFields: Record<string, unknown> = {}) {
  const app = await makeApp();
  const user = await makeUser(userFields);
  const token = await userToken(app, user, scope);
  return { app, user, token };
}
