import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/config";
import { LeasePools, type AskLease } from "../../src/middleware/lease-pools";
import { FIRST_LEASE, LeaseLedger, type HitResult } from "../../src/objects/lease-ledger";

/**
 * One caller spread over m isolates: each isolate has its own `LeasePools` (the middleware's
 * code), all lease from one caller's ledger (the Durable Object's code), requests land on the
 * isolates round-robin, at random, or moving from one half of the isolates to the other half
 * (which leaves the first half's leases behind).
 */
const { anonymous, authorized } = LIMITS.rate_limit;
const T = 2_000_000_000;

type Lease = (holder: string, at: number, returned: number, from: number | undefined) => Promise<HitResult>;
type Spread = "round-robin" | "random" | "moving";

/** A seeded generator, so a failure replays. */
function random(seed: number): () => number {
  return () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

interface Run {
  /** Requests admitted before the first refusal. */
  beforeRefusal: number;
  /** Most requests admitted in any one window (refusals and bans included). */
  mostInAWindow: number;
  /** Requests per lease asked for, up to the first refusal. */
  requestsPerLease: number;
}

async function simulate(m: number, limit: number, windowSeconds: number, spread: Spread, lease: Lease, seed = m): Promise<Run> {
  const isolates = Array.from({ length: m }, () => new LeasePools());
  const next = random(seed);
  const total = Math.floor(limit * 1.5);
  // Over 1.2 windows, so that a window ends and another starts during the run.
  const duration = windowSeconds * 1.2;
  let refused = false;
  let beforeRefusal = 0;
  let leases = 0;
  let window = { start: -Infinity, admitted: 0 };
  let mostInAWindow = 0;
  for (let i = 0; i < total; i++) {
    const at = T + Math.floor((i / total) * duration);
    const half = Math.ceil(m / 2);
    const k =
      spread === "round-robin"
        ? i % m
        : spread === "random" || m === 1
          ? Math.floor(next() * m)
          : i < total / 2
            ? Math.floor(next() * half)
            : half + Math.floor(next() * (m - half));
    const ask: AskLease = async (returned, from) => {
      if (!refused) leases++;
      return lease(`isolate-${k}`, at, returned, from);
    };
    const verdict = await isolates[k].admit("caller|bucket", limit, windowSeconds, at, ask);
    expect(verdict).not.toBeNull();
    if (!verdict!.allowed) {
      refused = true;
      continue;
    }
    if (!refused) beforeRefusal++;
    // Windows are fixed and start with the first request admitted after the last one ended.
    if (at >= window.start + windowSeconds) window = { start: at, admitted: 0 };
    window.admitted++;
    mostInAWindow = Math.max(mostInAWindow, window.admitted);
  }
  return { beforeRefusal, mostInAWindow, requestsPerLease: beforeRefusal / leases };
}

/** The ledger in memory, as the Durable Object runs it (`holders: false`: leases counted in full, as before). */
function inMemory(bucket: string, limit: number, windowSeconds: number, holders = true): Lease {
  const ledger = new LeaseLedger({ bannedUntil: 0, windows: {} }, () => {});
  return async (holder, at, returned, from) => ledger.lease(bucket, limit, windowSeconds, at, holders ? { holder, returned, from: from ?? -1 } : undefined);
}

const BUCKETS = [
  { name: "token reads", limit: authorized.reads, seconds: authorized.read_reset_seconds },
  { name: "anonymous reads", limit: anonymous.reads, seconds: anonymous.read_reset_seconds },
  { name: "writes", limit: authorized.writes, seconds: authorized.write_reset_seconds },
];

describe("leases across isolates (simulation)", { timeout: 120_000 }, () => {
  for (const { name, limit, seconds } of BUCKETS) {
    for (const spread of ["round-robin", "random", "moving"] as const) {
      it(`${name}: never more than ${limit} a window, ≥ 95 % before the first refusal, 1 to 200 isolates, ${spread}`, async () => {
        for (const m of [1, 10, 100, 200]) {
          const run = await simulate(m, limit, seconds, spread, inMemory("read", limit, seconds));
          expect(run.mostInAWindow, `${m} isolates`).toBeLessThanOrEqual(limit);
          expect(run.beforeRefusal, `${m} isolates`).toBeGreaterThanOrEqual(Math.ceil(0.95 * limit));
          // One isolate refuses exactly at limit + 1.
          if (m === 1) expect(run.beforeRefusal).toBe(limit);
        }
      });
    }
  }

  it("one isolate asks once per tens of requests; ten, still once per several", async () => {
    const one = await simulate(1, authorized.reads, authorized.read_reset_seconds, "random", inMemory("read", authorized.reads, authorized.read_reset_seconds));
    expect(one.requestsPerLease).toBeGreaterThan(30);
    const ten = await simulate(
      10,
      authorized.reads,
      authorized.read_reset_seconds,
      "random",
      inMemory("read", authorized.reads, authorized.read_reset_seconds),
    );
    expect(ten.requestsPerLease).toBeGreaterThan(5);
  });

  it("leases counted in full (no holders, nothing handed back) ban a caller on 100 isolates early: the case this guards", async () => {
    const { reads, read_reset_seconds: seconds } = authorized;
    const run = await simulate(100, reads, seconds, "random", inMemory("read", reads, seconds, false));
    expect(run.beforeRefusal).toBeLessThan(0.5 * reads);
  });

  it("through the Durable Object: 200 isolates at random, token reads", async () => {
    const { reads, read_reset_seconds: seconds } = authorized;
    const stub = env.RATE_LIMITER.getByName(`token:simulation-${crypto.randomUUID()}`);
    const run = await simulate(200, reads, seconds, "random", (holder, at, returned, from) => stub.lease("read", reads, seconds, at, holder, returned, from));
    expect(run.mostInAWindow).toBeLessThanOrEqual(reads);
    expect(run.beforeRefusal).toBeGreaterThanOrEqual(0.95 * reads);
  });

  it("a holder's return is credited once, only to the window it was leased in, and never beyond its lease", () => {
    const ledger = new LeaseLedger({ bannedUntil: 0, windows: {} }, () => {});
    const first = ledger.lease("read", 1000, 60, T, { holder: "a", returned: 0, from: -1 });
    expect(first.granted).toBe(FIRST_LEASE);
    expect(first.remaining).toBe(1000 - FIRST_LEASE);
    // Hands back more than it holds: only its lease comes back; having spent none, its next lease is 1.
    const second = ledger.lease("read", 1000, 60, T + 1, { holder: "a", returned: 100, from: T });
    expect(second.remaining).toBe(1000 - second.granted);
    expect(second.granted).toBe(1);
    // A return into another window is ignored.
    const other = ledger.lease("read", 1000, 60, T + 60, { holder: "a", returned: 1, from: T });
    expect(other.remaining).toBe(1000 - other.granted);
    // An unknown holder's return (granted by an earlier instance of the object) is ignored.
    const stranger = ledger.lease("read", 1000, 60, T + 61, { holder: "b", returned: 50, from: T + 60 });
    expect(stranger.remaining).toBe(1000 - other.granted - stranger.granted);
  });
});
