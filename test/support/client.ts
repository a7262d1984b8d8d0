import { SELF } from "cloudflare:test";
import { expect } from "vitest";

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
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** The body of a call that must answer `status` (the response text is the failure message). */
export async function must(p: Promise<ApiResponse>, status = 200) {
  const res = await p;
  expect(res.status, res.text).toBe(status);
  return res.body;
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

/**
 * A random IPv6 client address in the documentation range (2001:db8::/32). Requests only pass the
 * rate limiter with a `CF-Connecting-IP` header (as every request through Cloudflare's edge has);
 * `call()` sends none, so tests are not rate limited unless they send one.
 */
export function randomIp(): string {
  const part = () => Math.floor(Math.random() * 0x10000).toString(16);
  return `2001:db8:${part()}:${part()}:${part()}:${part()}:${part()}:${part()}`;
}

/** A stream socket opened through the Worker (GET /v1/app or /v1/user with `Upgrade: websocket`). */
export interface StreamSocket {
  ws: WebSocket;
  /** Every frame received so far, parsed, in order. */
  frames: any[];
  /** The first frame not yet taken that matches (default: any), waiting up to `timeoutMs`. */
  next(match?: (frame: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Resolves when the socket closes, with the server's code and reason. */
  closed: Promise<{ code: number; reason: string }>;
}

/**
 * Opens a stream socket: `path` like `/app?key=k` or `/user`, `token` added as `access_token`.
 * Answers `{status, body}` when the server refuses the upgrade, the socket otherwise.
 */
export async function openStream(path: string, token?: string): Promise<StreamSocket | { status: number; body: any }> {
  const url = BASE + path + (token ? `${path.includes("?") ? "&" : "?"}access_token=${encodeURIComponent(token)}` : "");
  const res = await SELF.fetch(url, { headers: { Upgrade: "websocket", "CF-Connecting-IP": randomIp() } });
  if (res.status !== 101 || !res.webSocket) {
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  const ws = res.webSocket;
  const frames: any[] = [];
  const pending: any[] = [];
  let wake: (() => void)[] = [];
  let onClose!: (c: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (onClose = resolve));
  ws.addEventListener("message", (e) => {
    const frame = typeof e.data === "string" && e.data.startsWith("{") ? JSON.parse(e.data) : e.data;
    frames.push(frame);
    pending.push(frame);
    const w = wake;
    wake = [];
    for (const f of w) f();
  });
  ws.addEventListener("close", (e) => {
    onClose({ code: e.code, reason: e.reason });
    const w = wake;
    wake = [];
    for (const f of w) f();
  });
  ws.accept();
  async function next(match: (frame: any) => boolean = () => true, timeoutMs = 5000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = pending.findIndex(match);
      if (i >= 0) return pending.splice(i, 1)[0];
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms; received: ${JSON.stringify(frames).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        wake.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
  return { ws, frames, next, closed };
}
