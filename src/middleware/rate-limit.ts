import type { Context, MiddlewareHandler } from "hono";
import { bearerToken } from "../auth/authenticate";
import { bearerHash } from "../auth/crypto";
import { oauthErrorFields } from "../auth/oauth";
import { LIMITS } from "../config";
import { ApiError } from "../http/errors";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import type { BanRecord } from "../objects/rate-limiter";
import { findBan, knownBan, saveBan } from "../stores/bans";
import { LeasePools, type LeaseAnswer, type Verdict } from "./lease-pools";

interface Rule {
  bucket: "read" | "write";
  limit: number;
  windowSeconds: number;
}

const { anonymous, authorized } = LIMITS.rate_limit;

/**
 * The buckets of decisions §9, from the constants GET /sys/config reports. Writes without a token
 * (the OAuth token endpoint and login form, or a write refused for lack of one) count per IP with
 * the write limit: /sys/config names no anonymous write limit.
 */
const RULES = {
  anon: {
    read: { bucket: "read", limit: anonymous.reads, windowSeconds: anonymous.read_reset_seconds },
    write: { bucket: "write", limit: authorized.writes, windowSeconds: authorized.write_reset_seconds },
  },
  token: {
    read: { bucket: "read", limit: authorized.reads, windowSeconds: authorized.read_reset_seconds },
    write: { bucket: "write", limit: authorized.writes, windowSeconds: authorized.write_reset_seconds },
  },
} as const satisfies Record<string, Record<string, Rule>>;

interface Subject {
  caller: string;
  rule: Rule;
}

/**
 * Rate limits and bans (decisions §9): counts every /v1 request from a client except CORS
 * preflights and the admin API (guarded by ADMIN_TOKEN), puts X-RateLimit-* on every response,
 * refuses with 429 and a 600-second ban when a bucket is exhausted.
 *
 * Runs BEFORE `authenticate` and keys a token's counters on the SHA-256 of the token, which needs
 * no database, so for reads the limiter (KV ban check, then the caller's Durable Object) runs in
 * parallel with authentication and the handler: it adds no serial round trip. A read the limiter
 * refuses has its response discarded; a caller whose ban this isolate already knows is refused
 * before any work. Writes (and WebSocket upgrades) must not run when refused, so for them the
 * limiter is awaited first. A token that authentication refuses (401) is no caller
 * of its own: the request then counts against its IP as an anonymous one.
 *
 * The caller's Durable Object is not asked per request: this isolate leases blocks of requests
 * from it and spends them from memory (`LeasePools`), so most requests cost no I/O at all. Blocks
 * are sized by how many isolates hold leases of the caller and hand back what they did not spend
 * when renewed, so a caller spread over many isolates is not banned early; near the limit the
 * blocks shrink to one request and the object decides each (src/objects/lease-ledger.ts).
 *
 * `RATE_LIMITS = "0"` turns all of it off (the benchmark's "limits off" run).
 */
export const rateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const path = c.req.path;
  // Cloudflare's edge (and `wrangler dev`) sets CF-Connecting-IP on every request from a client;
  // a request without it came from inside (a service binding, the test harness) and is not limited.
  const ip = c.req.header("cf-connecting-ip");
  if (!ip || c.env.RATE_LIMITS === "0" || c.req.method === "OPTIONS" || path === "/v1/admin" || path.startsWith("/v1/admin/")) {
    return next();
  }
  const at = now(c);
  const kind = c.req.method === "GET" || c.req.method === "HEAD" ? "read" : "write";
  const anon: Subject = { caller: `anon:${ip}`, rule: RULES.anon[kind] };
  // The OAuth endpoints take no bearer token (authentication skips them): always per IP.
  const raw = path.startsWith("/v1/oauth/") ? undefined : tokenOf(c);
  const subject: Subject = raw === undefined ? anon : { caller: `token:${await bearerHash(raw)}`, rule: RULES.token[kind] };

  // A ban this isolate has seen is refused before any work is done, reads included.
  const known = knownBan(subject.caller, at);
  if (known) return refusal(c, banned(known, subject.rule, at));

  let verdict: Verdict | null;
  if (kind === "read" && c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    const pending = admit(c, subject, at);
    await next();
    verdict = await pending;
  } else {
    verdict = await admit(c, subject, at);
    if (verdict && !verdict.allowed) return refusal(c, verdict);
    await next();
  }

  if (raw !== undefined && !c.var.auth && c.res.status === 401) verdict = await admit(c, anon, at);
  if (!verdict) return;
  if (!verdict.allowed) {
    const discarded = c.res;
    c.res = undefined; // so the refusal does not inherit the discarded response's headers
    c.res = refusal(c, verdict, discarded);
    await discarded.body?.cancel().catch(() => {});
    return;
  }
  if (c.res.status !== 101) setHeaders(c, rateHeaders(verdict));
};

/** The request's bearer token, or undefined (also for a malformed Authorization header: authentication answers that). */
function tokenOf(c: Context<AppEnv>): string | undefined {
  try {
    return bearerToken(c.req.header("authorization"), c.req.query("access_token"));
  } catch {
    return undefined;
  }
}

/** This isolate's pools of leased requests, and its name as a lease holder (made on first use: no randomness at startup). */
const pools = new LeasePools();
let holder: string | undefined;

/** Admits or refuses one request: from this isolate's pool, or by leasing a new block (`consult`). */
function admit(c: Context<AppEnv>, subject: Subject, at: number): Promise<Verdict | null> {
  const { limit, windowSeconds, bucket } = subject.rule;
  return pools.admit(`${subject.caller}|${bucket}`, limit, windowSeconds, at, (returned, from) => consult(c, subject, at, returned, from));
}

/**
 * Asks whether the caller is banned (isolate memory, then KV), and if not, leases a block of
 * requests from the caller's Durable Object; a ban that the request starts is written to KV. A
 * limiter failure lets the request through (logged): availability over enforcement.
 */
async function consult(c: Context<AppEnv>, { caller, rule }: Subject, at: number, returned: number, from: number | undefined): Promise<LeaseAnswer> {
  try {
    const ban = await findBan(c.var.bans, caller, at).catch((err) => {
      console.error(JSON.stringify({ rate_limit: "kv read failed", error: String(err) }));
      return null;
    });
    if (ban) return { ...banned(ban, rule, at), granted: 0 };
    const result = await c.var.rateLimiter(caller).lease(rule.bucket, rule.limit, rule.windowSeconds, at, (holder ??= crypto.randomUUID()), returned, from);
    if (result.ban) {
      await saveBan(c.var.bans, caller, result.ban, at, result.newBan === true).catch((err) =>
        console.error(JSON.stringify({ rate_limit: "kv ban write failed", error: String(err) })),
      );
    }
    const { allowed, granted, limit, remaining, resetIn, retryIn } = result;
    return { allowed, granted, limit, remaining, resetIn, retryIn };
  } catch (err) {
    console.error(JSON.stringify({ rate_limit: "limiter failed", error: String(err) }));
    return null;
  }
}

/** A refusal from a known ban: Reset is when this bucket takes requests again (the ban's end, or its window's if later). */
function banned(ban: BanRecord, rule: Rule, at: number): Verdict {
  const windowEnd = ban.ends[rule.bucket] ?? 0;
  return { allowed: false, limit: rule.limit, remaining: 0, resetIn: Math.max(ban.until, windowEnd) - at, retryIn: ban.until - at };
}

function rateHeaders(v: Verdict): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(v.limit),
    "X-RateLimit-Remaining": String(v.remaining),
    "X-RateLimit-Reset": String(v.resetIn),
  };
}

/** The 429 envelope with Retry-After and meta.retry_in; keeps the CORS headers of a discarded response. */
function refusal(c: Context<AppEnv>, v: Verdict, discarded?: Response): Response {
  const retryIn = v.retryIn ?? v.resetIn;
  const error = new ApiError(429, `rate limit exceeded; banned for ${retryIn} more seconds`);
  const headers = new Headers({ "Content-Type": "application/json", ...rateHeaders(v), "Retry-After": String(retryIn) });
  for (const [k, value] of discarded?.headers ?? []) if (k.startsWith("access-control-")) headers.set(k, value);
  // The OAuth token endpoint answers errors in OAuth's format as well (as the app's error handler does).
  const oauth = c.req.path === "/v1/oauth/access_token" ? oauthErrorFields(error, 429, error.message) : {};
  const body = { ...oauth, meta: { code: 429, error_message: error.message, retry_in: retryIn } };
  return new Response(JSON.stringify(body), { status: 429, headers });
}

function setHeaders(c: Context<AppEnv>, headers: Record<string, string>): void {
  try {
    for (const [k, v] of Object.entries(headers)) c.res.headers.set(k, v);
  } catch {
    // Immutable headers (a response passed through from fetch): copy the response once.
    const res = new Response(c.res.body, c.res);
    for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
    c.res = undefined;
    c.res = res;
  }
}
