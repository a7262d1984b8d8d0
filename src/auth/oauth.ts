import type { Scope } from "../config";
import { ApiError, BASIC_CHALLENGE } from "../http/errors";
import type { StampedEvent } from "../events/publish";
import type { Auth } from "../http/types";
import type { Db } from "../db";
import { getAppByClientId, type AppRecord } from "../stores/apps";
import { insertToken } from "../stores/tokens";
import type { UserRecord } from "../stores/users";
import { randomToken, sha256Hex, timingSafeEqual } from "./crypto";

/**
 * An OAuth failure. Rendered (by the app's error handler) as RFC 6749 `error` and
 * `error_description` plus the usual `meta`, so either kind of client can read it.
 */
export class OAuthError extends ApiError {
  constructor(
    status: 400 | 401,
    readonly error: "invalid_request" | "invalid_client" | "invalid_grant" | "unsupported_grant_type" | "invalid_scope",
    readonly description: string,
  ) {
    // A 401 names the scheme the token endpoint takes (RFC 6749 §5.2: the client's own, Basic).
    super(status, description, {}, status === 401 ? { "WWW-Authenticate": BASIC_CHALLENGE } : {});
  }
}

/** A form-urlencoded part of Basic credentials: `+` is a space (RFC 6749 §2.3.1, Appendix B). */
function formDecode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    throw new OAuthError(401, "invalid_client", "the Basic credentials are not form-urlencoded");
  }
}

/**
 * Client credentials sent as `Authorization: Basic base64(urlencode(client_id):urlencode(secret))`
 * (RFC 6749 §2.3.1, client_secret_basic); undefined when the request has no Basic header.
 */
export function basicClientCredentials(authorization: string | undefined): { clientId: string; secret: string } | undefined {
  const m = /^Basic\s+(\S*)\s*$/i.exec(authorization ?? "");
  if (!m) return undefined;
  let decoded: string;
  try {
    decoded = atob(m[1]);
  } catch {
    throw new OAuthError(401, "invalid_client", "the Basic credentials are not base64");
  }
  // atob gives one character per byte: read the bytes as UTF-8 before form-decoding.
  const text = new TextDecoder().decode(Uint8Array.from(decoded, (ch) => ch.charCodeAt(0)));
  const at = text.indexOf(":");
  if (at < 0) throw new OAuthError(401, "invalid_client", "the Basic credentials must be 'client_id:secret'");
  return { clientId: formDecode(text.slice(0, at)), secret: formDecode(text.slice(at + 1)) };
}

/**
 * The client's id and secret from the Basic header or else the body (`secretField` names the
 * body field the grant's secret goes in). Both at once must agree: a mismatch is invalid_request.
 */
export function clientCredentials(authorization: string | undefined, fields: Record<string, unknown>, secretField: string) {
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const body = { clientId: str(fields.client_id), secret: str(fields[secretField]) };
  const basic = basicClientCredentials(authorization);
  if (!basic) return body;
  if (body.clientId !== undefined && body.clientId !== basic.clientId) {
    throw new OAuthError(400, "invalid_request", "'client_id' in the body differs from the one in the Authorization header");
  }
  if (body.secret !== undefined && body.secret !== basic.secret) {
    throw new OAuthError(400, "invalid_request", `'${secretField}' in the body differs from the secret in the Authorization header`);
  }
  return basic;
}

/** Fields an error reply of the token endpoint carries besides `meta`. */
export function oauthErrorFields(err: unknown, status: number, message: string) {
  if (err instanceof OAuthError) return { error: err.error, error_description: err.description };
  return { error: status === 401 ? "invalid_client" : "invalid_request", error_description: message.replace(/^[^:]+: /, "") };
}

/** The app named by `client_id` if `secret` matches the stored hash of the chosen secret. */
export async function authenticateClient(
  db: Db,
  clientId: string | undefined,
  secret: string | undefined,
  which: "clientSecretHash" | "passwordGrantSecretHash",
  field: string,
): Promise<AppRecord> {
  if (!clientId) throw new OAuthError(400, "invalid_request", "'client_id' is required");
  if (!secret) throw new OAuthError(400, "invalid_request", `'${field}' is required`);
  const app = await getAppByClientId(db, clientId);
  if (!app || app.deletedAt != null || !timingSafeEqual(await sha256Hex(secret), app[which])) {
    throw new OAuthError(401, "invalid_client", `unknown 'client_id' or wrong '${field}'`);
  }
  return app;
}

/** Issues a token; returns the secret (shown once) and the caller identity it stands for. */
/**
 * Issues a token. `event`: for a user token, renders its `token` event from what it will be (the
 * event's data has no token id), written in the insert's batch; `seq` is that event's sequence.
 */
export async function issueToken(
  db: Db,
  app: AppRecord,
  user: UserRecord | null,
  scopes: string[],
  at: number,
  event?: (auth: Auth) => StampedEvent,
): Promise<{ accessToken: string; auth: Auth; seq?: number }> {
  const accessToken = randomToken();
  const tokenHash = await sha256Hex(accessToken);
  const draft = { id: 0, tokenHash, appId: app.id, userId: user?.id ?? null, scopes: scopes.join(" "), createdAt: at } as unknown as Auth["token"];
  const rendered = user && event ? event({ kind: "user", token: draft, scopes, app, user }) : undefined;
  if (rendered?.route) delete rendered.route.tokenId; // not known yet; only a revocation needs it
  const { seq, ...token } = await insertToken(db, { tokenHash, appId: app.id, userId: user?.id ?? null, scopes, createdAt: at }, rendered);
  const auth: Auth = { kind: user ? "user" : "app", token, scopes, app, user };
  return { accessToken, auth, seq };
}

/** What each scope lets an app do, in plain words: the consent page and the OpenAPI document show these. */
export const SCOPE_TEXT: Record<Scope, string> = {
  basic: "See your profile and read what you can read, as you",
  email: "See your email address",
  files: "Upload, change and delete your files",
  follow: "Follow, unfollow, mute and block accounts for you",
  messages: "Read and send your private messages and channel messages",
  public_messages: "Send messages for you in channels that everyone can read",
  polls: "Create polls, answer polls and see the polls you can open",
  presence: "Show you as online and set your status text",
  stream: "Read your timelines and receive your live updates",
  update_profile: "Change your profile: name, description and images",
  write_post: "Write, edit, repost, bookmark and delete posts for you",
};

/** The plain-words text for a granted scope, extended forms (`messages:<type>`) included. */
export function scopeText(scope: string): string {
  const i = scope.indexOf(":");
  const base = (i < 0 ? scope : scope.slice(0, i)) as Scope;
  const text = SCOPE_TEXT[base] ?? scope;
  return i < 0 ? text : `${text} (only of the kind “${scope.slice(i + 1)}”)`;
}

const CONSENT_FORM_TTL_SECONDS = 3600;
const enc = new TextEncoder();

async function hmacBase64Url(key: string, message: string): Promise<string> {
  const k = await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const sig = new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(message)));
  return btoa(String.fromCharCode(...sig))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/**
 * The consent form's anti-forgery token: `<issued at>.<HMAC>` over the authorization request,
 * keyed by a random secret the browser holds in an HttpOnly, SameSite=Strict cookie (so no server
 * session). A page on another site can neither read that cookie nor send it with a forged POST,
 * and a token is good only for the request it was issued with, for an hour.
 */
export async function consentFormToken(cookieSecret: string, request: Record<string, string | undefined>, at: number): Promise<string> {
  return `${at}.${await hmacBase64Url(cookieSecret, formMessage(request, at))}`;
}

/** Whether `token` was issued by `consentFormToken` for this cookie secret and request, less than an hour ago. */
export async function checkConsentFormToken(
  cookieSecret: string | undefined,
  request: Record<string, string | undefined>,
  token: string | undefined,
  at: number,
) {
  const [issued, mac] = (token ?? "").split(".");
  const issuedAt = Number(issued);
  if (!cookieSecret || !mac || !Number.isInteger(issuedAt) || issuedAt > at + 60 || at - issuedAt > CONSENT_FORM_TTL_SECONDS) return false;
  return timingSafeEqual(mac, await hmacBase64Url(cookieSecret, formMessage(request, issuedAt)));
}

const formMessage = (r: Record<string, string | undefined>, at: number) =>
  [at, r.client_id, r.redirect_uri, r.response_type, r.scope, r.state].map((v) => v ?? "").join("\n");
