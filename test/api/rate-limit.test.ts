import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { sha256Hex } from "../../src/auth/crypto";
import { LIMITS } from "../../src/config";
import { FIRST_LEASE } from "../../src/objects/lease-ledger";
import { MAX_LEASE, type RateLimiter } from "../../src/objects/rate-limiter";
import { actor, call, makeApp, makeUser, randomIp, type ApiResponse, type CallOptions } from "../support/client";
import { DB } from "../support/db";

const { anonymous, authorized, seconds_banned: BAN } = LIMITS.rate_limit;
/** A fixed clock far from the real one: every window below is driven by X-Test-Now. */
const T = 2_000_000_000;

const rate = (res: ApiResponse) => ({
  limit: Number(res.headers.get("x-ratelimit-limit")),
  remaining: Number(res.headers.get("x-ratelimit-remaining")),
  reset: Number(res.headers.get("x-ratelimit-reset")),
});

/** A caller of its own: every request from one client IP. */
function client() {
  const ip = randomIp();
  return {
    ip,
    get: (path: string, opts: CallOptions = {}) => call("GET", path, { ...opts, headers: { "CF-Connecting-IP": ip, ...opts.headers } }),
    send: (method: string, path: string, opts: CallOptions = {}) => call(method, path, { ...opts, headers: { "CF-Connecting-IP": ip, ...opts.headers } }),
  };
}

function expectBanned(res: ApiResponse, retryIn: number, limit: number) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ meta: { code: 429, error_message: expect.stringMatching(/^Too Many Requests/), retry_in: retryIn } });
  expect(res.headers.get("retry-after")).toBe(String(retryIn));
  expect(rate(res).limit).toBe(limit);
  expect(rate(res).remaining).toBe(0);
}

describe("anonymous reads: 40 per 60 s per IP", { timeout: 60_000 }, () => {
  it("counts down the headers and refuses the 41st read with a 600 s ban", async () => {
    const c = client();
    for (let i = 1; i <= anonymous.reads; i++) {
      const res = await c.get("/sys/config", { now: T + i });
      expect(res.status).toBe(200);
      // The window opened with the first read, at T+1.
      expect(rate(res)).toEqual({ limit: anonymous.reads, remaining: anonymous.reads - i, reset: anonymous.read_reset_seconds - (i - 1) });
    }
    const refused = await c.get("/sys/config", { now: T + 45 });
    expectBanned(refused, BAN, anonymous.reads);
    expect(rate(refused).reset).toBe(BAN);
    expect(refused.body).not.toHaveProperty("data");
    // Another IP is another caller.
    expect((await client().get("/sys/config", { now: T + 45 })).status).toBe(200);
  });

  it("keeps the ban for 600 s, past the window's reset, and lifts it then", async () => {
    const c = client();
    for (let i = 0; i < anonymous.reads; i++) expect((await c.get("/sys/config", { now: T })).status).toBe(200);
    expectBanned(await c.get("/sys/config", { now: T + 10 }), BAN, anonymous.reads); // the ban starts at T+10
    expectBanned(await c.get("/sys/config", { now: T + 70 }), BAN - 60, anonymous.reads); // window over, still banned
    expectBanned(await c.get("/sys/config", { now: T + 10 + BAN - 1 }), 1, anonymous.reads);
    const lifted = await c.get("/sys/config", { now: T + 10 + BAN });
    expect(lifted.status).toBe(200);
    expect(rate(lifted)).toEqual({ limit: anonymous.reads, remaining: anonymous.reads - 1, reset: anonymous.read_reset_seconds });
  });

  it("lets a new window start after 60 s without a ban when the limit was not hit", async () => {
    const c = client();
    for (let i = 0; i < anonymous.reads; i++) expect((await c.get("/sys/config", { now: T })).status).toBe(200);
    const next = await c.get("/sys/config", { now: T + anonymous.read_reset_seconds });
    expect(next.status).toBe(200);
    expect(rate(next).remaining).toBe(anonymous.reads - 1);
  });

  it("counts HEAD as a read and leaves CORS preflights uncounted", async () => {
    const c = client();
    const head = await c.send("HEAD", "/sys/config", { now: T });
    expect(head.status).toBe(200);
    expect(rate(head).remaining).toBe(anonymous.reads - 1);
    const preflight = await c.send("OPTIONS", "/sys/config", {
      now: T,
      headers: { Origin: "https://elsewhere.example", "Access-Control-Request-Method": "GET" },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get("x-ratelimit-limit")).toBeNull();
    expect(rate(await c.get("/sys/config", { now: T })).remaining).toBe(anonymous.reads - 2);
  });

  it("never lets more than the limit through under concurrency", async () => {
    const c = client();
    const all = await Promise.all(Array.from({ length: 60 }, () => c.get("/sys/config", { now: T })));
    const passed = all.filter((r) => r.status === 200);
    expect(passed).toHaveLength(anonymous.reads);
    expect(all.filter((r) => r.status === 429)).toHaveLength(60 - anonymous.reads);
    // Each admitted request saw its own count: remaining 39, 38, ..., 0 exactly once.
    expect(passed.map((r) => rate(r).remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: anonymous.reads }, (_, i) => i));
  });
});

describe("headers on every response", { timeout: 60_000 }, () => {
  it("puts them on errors: 404, 405, 400 and a 401 for a bad token (counted against the IP)", async () => {
    const c = client();
    const missing = await c.get("/no/such/route", { now: T });
    expect(missing.status).toBe(404);
    expect(rate(missing)).toEqual({ limit: anonymous.reads, remaining: anonymous.reads - 1, reset: 60 });
    const invalid = await c.get("/users/abc", { now: T });
    expect(invalid.status).toBe(400);
    expect(rate(invalid).remaining).toBe(anonymous.reads - 2);
    const wrongMethod = await c.send("PATCH", "/sys/config", { now: T });
    expect(wrongMethod.status).toBe(405);
    expect(rate(wrongMethod)).toEqual({ limit: authorized.writes, remaining: authorized.writes - 1, reset: authorized.write_reset_seconds });
    const badToken = await c.get("/token", { now: T, token: "no-such-token" });
    expect(badToken.status).toBe(401);
    expect(rate(badToken)).toEqual({ limit: anonymous.reads, remaining: anonymous.reads - 3, reset: 60 });
    const malformed = await c.get("/token", { now: T, headers: { Authorization: "Basic abc" } });
    expect(malformed.status).toBe(401);
    expect(rate(malformed).remaining).toBe(anonymous.reads - 4);
  });

  it("exposes them to browsers through CORS, also on a 429", async () => {
    const c = client();
    const origin = { Origin: "https://elsewhere.example" };
    const ok = await c.get("/sys/config", { now: T, headers: origin });
    expect(ok.headers.get("access-control-expose-headers")).toContain("X-RateLimit-Remaining");
    for (let i = 1; i < anonymous.reads; i++) await c.get("/sys/config", { now: T });
    const refused = await c.get("/sys/config", { now: T, headers: origin });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    expect(refused.headers.get("access-control-expose-headers")).toContain("Retry-After");
  });

  it("leaves the admin API (guarded by ADMIN_TOKEN) unlimited", async () => {
    const res = await client().send("POST", "/admin/apps", { token: "test-admin-token", json: { name: "x", url: "https://x.example" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
  });
});

describe("authenticated callers: per token", { timeout: 60_000 }, () => {
  it("counts reads 5000 per 3600 s per token, not per IP", async () => {
    const { token, app, user } = await actor();
    const first = await client().get("/token", { token, now: T });
    expect(first.status).toBe(200);
    expect(rate(first)).toEqual({ limit: authorized.reads, remaining: authorized.reads - 1, reset: authorized.read_reset_seconds });
    // From another IP, the same token's bucket.
    const second = await client().get("/users/me", { token, now: T + 100 });
    expect(rate(second)).toEqual({ limit: authorized.reads, remaining: authorized.reads - 2, reset: authorized.read_reset_seconds - 100 });
    // Another token of the same user has its own bucket.
    const other = await call("POST", "/oauth/access_token", {
      form: {
        grant_type: "password",
        client_id: app.client_id,
        password_grant_secret: app.password_grant_secret,
        username: user.username,
        password: user.password,
      },
    });
    const otherRead = await client().get("/token", { token: other.body.access_token, now: T + 100 });
    expect(rate(otherRead).remaining).toBe(authorized.reads - 1);
  });

  it("refuses the 21st write in 60 s and bans the token for reads too", async () => {
    const { token } = await actor();
    const c = client();
    for (let i = 1; i <= authorized.writes; i++) {
      const res = await c.send("POST", "/sys/config", { token, now: T + i });
      expect(res.status).toBe(405); // a write all the same: counted
      expect(rate(res)).toEqual({ limit: authorized.writes, remaining: authorized.writes - i, reset: authorized.write_reset_seconds - (i - 1) });
    }
    expectBanned(await c.send("POST", "/sys/config", { token, now: T + 30 }), BAN, authorized.writes);
    // Known to be banned: refused before authentication or the handler touch the database.
    const again = await c.get("/token", { token, now: T + 31 });
    expectBanned(again, BAN - 1, authorized.reads);
    expect(again.headers.get("x-debug-db-calls")).toBe("0");
    // The ban is the caller's: its reads are refused as well, with the read bucket's headers.
    const read = await client().get("/token", { token, now: T + 40 });
    expectBanned(read, BAN - 10, authorized.reads);
    const lifted = await c.get("/token", { token, now: T + 30 + BAN });
    expect(lifted.status).toBe(200);
  });

  it("never runs a refused write: the 21st token request per IP issues no token", async () => {
    const c = client();
    const app = await makeApp();
    const user = await makeUser();
    const login = () =>
      c.send("POST", "/oauth/access_token", {
        now: T,
        form: {
          grant_type: "password",
          client_id: app.client_id,
          password_grant_secret: app.password_grant_secret,
          username: user.username,
          password: user.password,
        },
      });
    const results = await Promise.all(Array.from({ length: authorized.writes + 5 }, login));
    expect(results.filter((r) => r.status === 200)).toHaveLength(authorized.writes);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(5);
    expect(refused[0].body).toMatchObject({ error: expect.any(String), meta: { code: 429, retry_in: BAN } });
    expect(refused[0].body).not.toHaveProperty("access_token");
    const issued = await DB.prepare("SELECT count(*) AS n FROM tokens WHERE user_id = ?").bind(Number(user.id)).first<{ n: number }>();
    expect(issued?.n).toBe(authorized.writes);
  });

  it("never lets more than 20 concurrent writes of one token through", async () => {
    const { token } = await actor();
    const c = client();
    const all = await Promise.all(Array.from({ length: 30 }, () => c.send("DELETE", "/sys/config", { token, now: T })));
    expect(all.filter((r) => r.status === 405)).toHaveLength(authorized.writes);
    expect(all.filter((r) => r.status === 429)).toHaveLength(10);
  });
});

describe("bans in KV and in the Durable Object", { timeout: 60_000 }, () => {
  async function ban(c: ReturnType<typeof client>) {
    for (let i = 0; i < anonymous.reads; i++) await c.get("/sys/config", { now: T });
    expect((await c.get("/sys/config", { now: T })).status).toBe(429);
  }

  it("records the ban in KV with a TTL, and refuses the banned caller without reaching the Durable Object", async () => {
    const c = client();
    await ban(c);
    const record = await env.KV.getWithMetadata(`ban:anon:${c.ip}`, "json");
    expect(record.value).toEqual({ until: T + BAN, ends: { read: T + anonymous.read_reset_seconds } });
    const keys = await env.KV.list({ prefix: `ban:anon:${c.ip}` });
    expect(keys.keys[0].expiration).toBeGreaterThan(Date.now() / 1000 + BAN - 30);
    // The Durable Object forgets everything: the edge still refuses.
    const stub = env.RATE_LIMITER.getByName(`anon:${c.ip}`);
    await runInDurableObject(stub, (_: RateLimiter, state) => state.storage.deleteAll());
    expectBanned(await c.get("/sys/config", { now: T + 100 }), BAN - 100, anonymous.reads);
    const untouched = await runInDurableObject(stub, (_: RateLimiter, state) => state.storage.kv.get("state"));
    expect(untouched).toBeUndefined();
  });

  it("refuses a caller banned elsewhere from the KV record alone", async () => {
    const c = client();
    await env.KV.put(`ban:anon:${c.ip}`, JSON.stringify({ until: T + 300, ends: {} }), { expirationTtl: 300 });
    expectBanned(await c.get("/sys/config", { now: T }), 300, anonymous.reads);
    const stub = env.RATE_LIMITER.getByName(`anon:${c.ip}`);
    expect(await runInDurableObject(stub, (_: RateLimiter, state) => state.storage.kv.get("state"))).toBeUndefined();
    // Once the recorded ban has lapsed, the caller is counted again.
    const after = await c.get("/sys/config", { now: T + 300 });
    expect(after.status).toBe(200);
    expect(rate(after).remaining).toBe(anonymous.reads - 1);
  });

  it("the Durable Object knows the ban too, for a location the KV record has not reached yet", async () => {
    const c = client();
    await ban(c);
    const stub = env.RATE_LIMITER.getByName(`anon:${c.ip}`);
    const read = await stub.hit("read", anonymous.reads, anonymous.read_reset_seconds, T + 5);
    expect(read).toMatchObject({ allowed: false, remaining: 0, retryIn: BAN - 5, ban: { until: T + BAN } });
    expect(read.newBan).toBeUndefined(); // not a new ban: no second KV write
    const write = await stub.hit("write", authorized.writes, authorized.write_reset_seconds, T + 5);
    expect(write).toMatchObject({ allowed: false, retryIn: BAN - 5 });
    expect((await stub.hit("read", anonymous.reads, anonymous.read_reset_seconds, T + BAN)).allowed).toBe(true);
  });

  it("leases blocks that shrink to single requests near the limit, never granting more than the limit", async () => {
    // Two isolates asking in turn, as the middleware does when its pool runs dry.
    const stub = env.RATE_LIMITER.getByName(`token:lease-${randomIp()}`);
    const grants: number[] = [];
    for (;;) {
      const r = await stub.lease("read", authorized.reads, authorized.read_reset_seconds, T);
      if (!r.allowed) {
        expect(r.newBan).toBe(true);
        break;
      }
      expect(r.remaining).toBe(authorized.reads - grants.reduce((a, b) => a + b, 0) - r.granted);
      grants.push(r.granted);
    }
    expect(grants.reduce((a, b) => a + b, 0)).toBe(authorized.reads);
    expect(grants[0]).toBe(MAX_LEASE);
    expect(grants.slice(-16)).toEqual(Array(16).fill(1));
    expect(Math.max(...grants)).toBeLessThanOrEqual(MAX_LEASE);
  });

  it("asks the Durable Object once per block, not once per request; a block spent is followed by one twice as large", async () => {
    const { token } = await actor();
    const c = client();
    for (let i = 0; i < 10; i++) expect((await c.get("/token", { token, now: T })).status).toBe(200);
    const stub = env.RATE_LIMITER.getByName(`token:${await sha256Hex(token)}`);
    // One lease of FIRST_LEASE served all ten requests: the object counted one block.
    const count = await runInDurableObject(
      stub,
      (o: RateLimiter) => (o as unknown as { ledger: { state: { windows: Record<string, { count: number }> } } }).ledger.state.windows.read.count,
    );
    expect(count).toBe(FIRST_LEASE);
    // Once spent, the next lease is twice as large.
    for (let i = 10; i < FIRST_LEASE + 1; i++) expect((await c.get("/token", { token, now: T })).status).toBe(200);
    const after = await runInDurableObject(
      stub,
      (o: RateLimiter) => (o as unknown as { ledger: { state: { windows: Record<string, { count: number }> } } }).ledger.state.windows.read.count,
    );
    expect(after).toBe(3 * FIRST_LEASE);
  });

  it("keys a token's counters on the token's SHA-256 (no database lookup needed)", async () => {
    const { token } = await actor();
    await client().get("/token", { token, now: T });
    const stub = env.RATE_LIMITER.getByName(`token:${await sha256Hex(token)}`);
    const state = await runInDurableObject(stub, (_: RateLimiter, s) => s.storage.kv.get<{ windows: Record<string, { count: number }> }>("state"));
    // The first request leased a block of FIRST_LEASE; storage holds a reservation MAX_LEASE ahead.
    expect(state?.windows.read.count).toBe(FIRST_LEASE + MAX_LEASE);
  });
});

describe("what is not limited", { timeout: 60_000 }, () => {
  it("a request without CF-Connecting-IP (not from a client: a service binding, the test harness)", async () => {
    for (let i = 0; i < anonymous.reads + 5; i++) {
      const res = await call("GET", "/sys/config", { now: T });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });

  it("anything with RATE_LIMITS = 0", async () => {
    const app = createApp();
    const ip = randomIp();
    for (let i = 0; i < anonymous.reads + 5; i++) {
      const ctx = createExecutionContext();
      const res = await app.fetch(new Request("http://api.test/v1/sys/config", { headers: { "CF-Connecting-IP": ip } }), { ...env, RATE_LIMITS: "0" }, ctx);
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });
});
