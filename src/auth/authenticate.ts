import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { ApiError } from "../http/errors";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import type { Statement } from "../db/batch";
import type { RawResult } from "../db";
import { activityDay, claimActivity, findTokenWith, scopeList, touchActivity, type TokenRow } from "../stores/tokens";
import { knownToken, rememberToken, tokenCheck, usable } from "./token-cache";
import { bearerHash } from "./crypto";

/** The statements a GET path's handler will need, given the request and its token's viewer; none when unsure. */
type AlongsideReads = (c: Context<AppEnv>, viewer: { tokenHash: string }) => Statement[] | undefined;

/** Reads of GET paths that ride with the token lookup (`c.var.alongside` has their results). */
const alongsideReads = new Map<string, AlongsideReads>();

/**
 * Declares the reads a GET of `path` (under /v1) will make, to run in the token lookup's round
 * trip and snapshot: an authenticated read then costs one round trip, as the one-read floor does.
 * Statements name the caller through `viewerSql(viewer)` (the token's user, looked up inside the
 * statement). The handler must use the results only when access checks pass, and must compute
 * the same statements from the same parameters; a factory that cannot (bad parameters) returns
 * undefined and the handler reads on its own.
 */
export function readAlongsideToken(path: string, statements: AlongsideReads): void {
  alongsideReads.set("/v1" + path, statements);
}

/** Writes (`METHOD /v1/path/:param`) whose token check may ride in their first read: see `checkTokenInFirstRead`. */
const writesCheckedInFirstRead = new Set<string>();

/**
 * Declares a write route (path under /v1, Hono's `:param` form) whose handler reads before it
 * writes and touches nothing but the database before that read: a token this isolate knows is
 * then checked in that read's round trip instead of one of its own (the write waits for it as
 * always: nothing is written under a token that fails, and `c.var.auth` is the fresh row by then).
 */
export function checkTokenInFirstRead(method: string, path: string): void {
  writesCheckedInFirstRead.add(`${method.toUpperCase()} /v1${path}`);
}

/** The bearer token of a request: the Authorization header, or `access_token` in the query. */
export function bearerToken(authorization: string | undefined, query: string | undefined): string | undefined {
  if (authorization) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) throw ApiError.unauthorized("the Authorization header must be 'Bearer <token>'");
    return m[1];
  }
  return query || undefined;
}

function alongsideFor(c: Context<AppEnv>, path: string, tokenHash: string): Statement[] | undefined {
  try {
    return alongsideReads.get(path)?.(c, { tokenHash });
  } catch {
    return undefined; // bad parameters: the route reports them, after authentication
  }
}

/** Whether the token check may ride in the request's first read: a plain read (not a socket), or a write declared so. */
function deferrable(c: Context<AppEnv>, reads: Statement[] | undefined): boolean {
  if (reads?.length || c.req.header("upgrade") !== undefined) return false;
  if (c.req.method === "GET" || c.req.method === "HEAD") return true;
  const endpoint = matchedRoutes(c).findLast((r) => r.method !== "ALL");
  return endpoint !== undefined && writesCheckedInFirstRead.has(`${c.req.method} ${endpoint.path}`);
}

/** `c.var.auth` from a token row; its scopes. */
function setAuth(c: Context<AppEnv>, found: TokenRow): string[] {
  const scopes = scopeList(found.token);
  c.set("auth", { kind: found.token.userId == null ? "app" : "user", token: found.token, scopes, app: found.app, user: found.user });
  return scopes;
}

/**
 * `c.var.auth` as of the request's own reads: a handler that shows the token's user or app (not
 * just whose it is) without reading anything first waits for the token's deferred check here.
 */
export async function freshAuth(c: Context<AppEnv>) {
  await c.var.db.settle();
  return c.var.auth;
}

/** Once per activity day per token; the day turns at a per-user time after midnight (activityDay). */
function markActivity(c: Context<AppEnv>, found: TokenRow) {
  const day = found.user ? activityDay(found.user.id, now(c)) : "";
  if (found.user && claimActivity(found.token.id, found.token.lastSeenDay, day)) {
    c.executionCtx.waitUntil(touchActivity(c.var.db.background(), found.token.id, found.user.id, day).catch(() => {}));
  }
}

/**
 * Resolves the caller from the token (one indexed query, token + app + user) and sets
 * `c.var.auth`; a token that is given but unknown or deleted is a 401 on every endpoint.
 * Whether the endpoint needs a token at all is decided per route by `access()`.
 */
export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("auth", null);
  const authorization = c.req.header("authorization");
  // The token endpoint takes client credentials as HTTP Basic (RFC 6749 §2.3.1): not a bearer token.
  const clientBasic = authorization !== undefined && /^Basic(\s|$)/i.test(authorization) && c.req.path.startsWith("/v1/oauth/");
  const raw = clientBasic ? undefined : bearerToken(authorization, c.req.query("access_token"));
  if (raw !== undefined && !c.req.path.startsWith("/v1/admin") && !c.req.path.startsWith("/v1/oauth")) {
    const path = c.req.path.length > 1 && c.req.path.endsWith("/") ? c.req.path.slice(0, -1) : c.req.path;
    const hash = await bearerHash(raw);
    const reads = c.req.method === "GET" ? alongsideFor(c, path, hash) : undefined;
    // A read with a token this isolate knows starts at once; the token is checked again inside
    // the request's first read (src/auth/token-cache.ts), or alone before any write.
    let found = deferrable(c, reads) ? knownToken(hash) : undefined;
    const deferredOn = found ? c.var.db : undefined;
    if (found) c.var.db.defer(tokenCheck(hash, (row) => setAuth(c, row)));
    else {
      let results: RawResult[];
      [found, results] = await findTokenWith(c.var.db, hash, reads ?? []);
      if (!found && c.var.db.readsMayLag) {
        // A token issued moments ago (to another client: an OAuth redirect carries no bookmark) may
        // not have reached the replica yet: ask the primary before answering 401, and stay there.
        c.set("db", c.var.db.onPrimary());
        [found, results] = await findTokenWith(c.var.db, hash, reads ?? []);
      }
      if (reads) c.set("alongside", results);
      if (!usable(found)) throw ApiError.unauthorized("the access token is unknown or was deleted");
      rememberToken(hash, found);
    }
    const scopes = setAuth(c, found);
    if (!deferredOn) markActivity(c, found);
    await next();
    if (deferredOn) {
      // Whatever the handler answered, a token that no longer passes is a 401.
      await deferredOn.settle();
      markActivity(c, found);
    }
    c.header("X-OAuth-Scopes", scopes.join(","));
    return;
  }
  await next();
};
