import { DurableObject } from "cloudflare:workers";
import { LeaseLedger, type HitResult, type LedgerState } from "./lease-ledger";

export { MAX_LEASE, type BanRecord, type HitResult } from "./lease-ledger";

const STATE = "state";

/**
 * The counters of ONE caller (`anon:<ip>` or `token:<sha-256 of the token>`): a fixed window per
 * bucket (`read`, `write`) that starts with the first request, and the caller's ban. Isolates
 * lease blocks of requests from it and spend them locally (src/middleware/rate-limit.ts); the
 * rules of the leases, and why they never admit more than the limit, are in `LeaseLedger`.
 *
 * A Durable Object runs one call at a time and `lease` is synchronous (it decides in memory), so
 * the count is exact under any concurrency. `now` is the request's clock (unix seconds), so tests
 * move time with X-Test-Now.
 */
export class RateLimiter extends DurableObject<Env> {
  /** The ledger, built from storage once per instance; this object is its only writer. */
  private ledger?: LeaseLedger;

  /** One request, decided here (no block). */
  hit(bucket: string, limit: number, windowSeconds: number, now: number): HitResult {
    return this.lease(bucket, limit, windowSeconds, now, undefined, 0, undefined, 1);
  }

  /**
   * A block of up to `max` requests for the isolate `holder`, the first of which is the asking
   * one; `returned` requests of its previous lease in the window starting at `from` go back.
   */
  lease(bucket: string, limit: number, windowSeconds: number, now: number, holder?: string, returned = 0, from?: number, max?: number): HitResult {
    this.ledger ??= new LeaseLedger(this.ctx.storage.kv.get<LedgerState>(STATE) ?? { bannedUntil: 0, windows: {} }, (stored) => this.save(stored));
    const ask = holder === undefined ? undefined : { holder, returned, from: from ?? -1 };
    return this.ledger.lease(bucket, limit, windowSeconds, now, ask, max);
  }

  /**
   * Persists the state. The count was decided in memory, one call at a time, so it is exact; the
   * write does not hold the answer back until it is confirmed (`allowUnconfirmed`): should a write
   * ever fail, the runtime resets this object and a few counts are lost, which a limiter can
   * afford better than a wait on every request.
   */
  private save(stored: LedgerState): void {
    this.ctx.storage.put(STATE, stored, { allowUnconfirmed: true }).catch(() => {}); // a failed write resets the object anyway
  }
}
