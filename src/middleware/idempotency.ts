import type { MiddlewareHandler } from "hono";
import { sha256Hex } from "../auth/crypto";
import { IDEMPOTENCY } from "../config";
import { digestedBody, multipartBoundary } from "../http/body-digest";
import { ApiError } from "../http/errors";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import { claimKey, completeKey, releaseKey, sweepExpiredKeys, type KeyRow } from "../stores/idempotency-keys";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** Printable ASCII, 1 to 255 characters (a UUID is the usual choice). */
const VALID_KEY = new RegExp(`^[\\x20-\\x7E]{1,${IDEMPOTENCY.keyMaxLength}}$`);
/** One claim in this many also deletes a few expired keys of any caller. */
const SWEEP_ONE_IN = 64;
const SWEEP_ROWS = 50;

const conflict = (detail: string) => new ApiError(409, `'${IDEMPOTENCY_HEADER}' ${detail}`);

/**
 * `Idempotency-Key` on POST (as Stripe and Mastodon accept it): a creation retried with the same
 * key, by the same caller (the token's user, or the app of an app token), within
 * `IDEMPOTENCY.windowSeconds` returns the first response with `Idempotent-Replayed: true` and
 * runs nothing. Requests without the header, anonymous ones and other methods pass untouched.
 *
 * The key is claimed in the database before the handler runs (one round trip) and its outcome
 * stored after it (one more): a 2xx/3xx response is kept and replayed; a 4xx frees the key
 * (nothing was written, so a retry runs again); a 5xx, or a runtime that died between the
 * creation's commit and storing the response, leaves the key without a response, and every
 * retry is a 409 saying it was interrupted, never a second run: the client checks whether the
 * object exists and uses a new key. Same key with another method, path, query or body: 409.
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header(IDEMPOTENCY_HEADER);
  const auth = c.var.auth;
  if (key === undefined || c.req.method !== "POST" || !auth) return next();
  if (!VALID_KEY.test(key)) {
    throw ApiError.badRequest(`'${IDEMPOTENCY_HEADER}' must be 1 to ${IDEMPOTENCY.keyMaxLength} printable ASCII characters`);
  }
  const db = c.var.db;
  const scope = auth.user ? `user:${auth.user.id}` : `app:${auth.app.id}`;
  const at = now(c);
  const requestHash = await sha256Hex(`${c.req.method} ${requestTarget(c.req.url)}`);
  const { claimed, row } = await claimKey(db, { scope, key, requestHash, createdAt: at }, IDEMPOTENCY.windowSeconds);
  if (Math.random() * SWEEP_ONE_IN < 1) {
    c.executionCtx.waitUntil(sweepExpiredKeys(db, at - IDEMPOTENCY.windowSeconds, SWEEP_ROWS).catch(logFailure("sweep")));
  }
  const body = digestedBody(c.req.raw.body, multipartBoundary(c.req.header("content-type")));
  if (!claimed) return replay(row, requestHash, body.digest, at);

  if (c.req.raw.body) c.req.raw = new Request(c.req.raw, { body: body.stream });
  try {
    await next();
  } catch (err) {
    // (Hono renders thrown errors itself; this is for anything that escapes it.)
    await completeKey(db, scope, key, { bodyHash: null, status: 500, responseType: null, responseBody: null }).catch(logFailure("store outcome"));
    throw err;
  }
  const status = c.res.status;
  try {
    if (status >= 500) await completeKey(db, scope, key, { bodyHash: null, status, responseType: null, responseBody: null });
    else if (status >= 400) await releaseKey(db, scope, key);
    else {
      const [bodyHash, text] = await Promise.all([body.digest(), c.res.clone().text()]);
      const kept = new TextEncoder().encode(text).length <= IDEMPOTENCY.maxStoredResponseBytes;
      const type = c.res.headers.get("content-type");
      await completeKey(db, scope, key, { bodyHash, status, responseType: type, responseBody: kept ? text : null });
    }
  } catch (err) {
    // The response stands; the key stays without an outcome, so a retry is told "interrupted".
    logFailure("store outcome")(err);
  }
};

/** The answer to a key already claimed: the kept response, or a 409 saying why not. */
async function replay(row: KeyRow, requestHash: string, bodyHash: () => Promise<string>, at: number): Promise<Response> {
  if (row.requestHash !== requestHash) throw conflict("was already used for a different request (method, path or query); use a new key");
  if (row.status === null && at - row.createdAt < IDEMPOTENCY.runningSeconds) {
    throw conflict("belongs to a request that is still in progress; retry once it has answered");
  }
  if (row.status === null || row.status >= 500) {
    throw conflict("belongs to a request that was interrupted before it answered; check whether it was created, then retry with a new key");
  }
  if ((await bodyHash()) !== row.bodyHash) throw conflict("was already used with a different body; use a new key");
  if (row.responseBody === null) throw conflict("belongs to a request that completed, but its response was too large to keep; fetch the object instead");
  const noBody = row.status === 204 || row.status === 205 || row.status === 304;
  const res = new Response(noBody ? null : row.responseBody, { status: row.status });
  if (row.responseType) res.headers.set("Content-Type", row.responseType);
  res.headers.set(REPLAYED_HEADER, "true");
  return res;
}

/** Path and query of a URL, without `access_token` (a token renewed between retries is the same caller). */
function requestTarget(url: string): string {
  const u = new URL(url);
  u.searchParams.delete("access_token");
  u.searchParams.sort();
  return u.pathname + (u.search || "");
}

const logFailure = (step: string) => (err: unknown) => console.error(JSON.stringify({ idempotency: `${step} failed`, error: String(err) }));
