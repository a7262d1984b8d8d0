import type { HitResult } from "../objects/lease-ledger";

export type Verdict = Pick<HitResult, "allowed" | "limit" | "remaining" | "resetIn" | "retryIn">;

/** A lease (or refusal) from the caller's Durable Object; null when the limiter failed. */
export type LeaseAnswer = (Verdict & { granted: number }) | null;

/** Asks the Durable Object for a lease, handing back `returned` unspent requests of the window starting at `from`. */
export type AskLease = (returned: number, from: number | undefined) => Promise<LeaseAnswer>;

/** Requests of a caller's bucket leased to this isolate and not yet spent. */
interface Pool {
  /** Requests left to admit from memory. */
  available: number;
  /** What the Durable Object had left in the window after its last grant. */
  objectRemaining: number;
  windowStart: number;
  windowEnd: number;
  /** When the lease was taken (request clock): an old lease is renewed and its rest handed back. */
  takenAt: number;
  /** A lease being asked for: requests arriving meanwhile wait for it rather than ask too. */
  pending: Promise<unknown> | null;
}

/**
 * A lease older than this share of its window is renewed at the next request, handing back what
 * it did not spend, so an isolate the caller's traffic has left behind holds little for long.
 */
const LEASE_AGE_SHARE = 8;

/**
 * The callers' pools of one isolate. `admit` spends from memory while the pool holds requests of
 * the current window, and otherwise leases a new block (`ask`). One lease at a time per caller: a
 * request that finds one under way waits for it, so concurrent requests share blocks and a
 * single isolate refuses exactly at limit + 1. Remaining = the object's count + the pool, exact
 * when one isolate serves the caller and conservative otherwise.
 */
export class LeasePools {
  private readonly pools = new Map<string, Pool>();

  /** Keeps at most `max` callers' pools (the oldest forgotten first). */
  constructor(private readonly max = 10_000) {}

  async admit(key: string, limit: number, windowSeconds: number, at: number, ask: AskLease): Promise<Verdict | null> {
    for (;;) {
      let pool = this.pools.get(key);
      // A pool of another window is dropped (unless a lease for it is under way: wait for that).
      if (pool && !pool.pending && (at >= pool.windowEnd || at < pool.windowStart)) pool = undefined;
      const stale = pool !== undefined && at - pool.takenAt >= windowSeconds / LEASE_AGE_SHARE;
      if (pool && pool.available > 0 && !stale) {
        pool.available -= 1;
        return { allowed: true, limit, remaining: pool.objectRemaining + pool.available, resetIn: pool.windowEnd - at };
      }
      if (pool?.pending) {
        await pool.pending;
        continue;
      }
      // Whatever is left of the pool's lease is handed back with the request for the next one.
      const returned = pool?.available ?? 0;
      const from = pool?.windowStart;
      const fresh: Pool = pool ?? { available: 0, objectRemaining: 0, windowStart: at, windowEnd: at, takenAt: at, pending: null };
      fresh.available = 0;
      this.pools.delete(key);
      this.pools.set(key, fresh);
      if (this.pools.size > this.max) this.pools.delete(this.pools.keys().next().value!);
      const asked = ask(returned, from);
      fresh.pending = asked.catch(() => {});
      const verdict = await asked.catch(() => null);
      fresh.pending = null;
      if (!verdict || !verdict.allowed) {
        this.pools.delete(key);
        return verdict;
      }
      fresh.available = verdict.granted - 1;
      fresh.objectRemaining = verdict.remaining;
      fresh.windowEnd = at + verdict.resetIn;
      fresh.windowStart = fresh.windowEnd - windowSeconds;
      fresh.takenAt = at;
      return { ...verdict, remaining: fresh.objectRemaining + fresh.available };
    }
  }
}
