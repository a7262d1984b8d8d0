import { DurableObject } from "cloudflare:workers";
import { LIMITS } from "../config";

/** The ban a caller is under, as recorded in KV (src/stores/bans.ts) and kept here. */
export interface BanRecord {
  /** Unix seconds (request clock) when the ban lapses. */
  until: number;
  /** Unix seconds when each bucket's window that was running at the ban ends. */
  ends: Record<string, number>;
}

/** The answer to one counted request. */
export interface HitResult {
  allowed: boolean;
  /** The bucket's limit. */
  limit: number;
  /** Requests left in the bucket's window (0 when refused). */
  remaining: number;
  /** Seconds until a request in this bucket will be accepted again (window reset, or the ban's end if later). */
  resetIn: number;
  /** Only when refused: seconds left of the caller's ban. */
  retryIn?: number;
  /** Only when refused: the caller's ban. */
  ban?: BanRecord;
  /** Only on the request that started the ban (the Worker then records it in KV). */
  newBan?: boolean;
}

interface Window {
  start: number;
  count: number;
  seconds: number;
}

interface State {
  bannedUntil: number;
  windows: Record<string, Window>;
}

const STATE = "state";

const banRecord = (state: State): BanRecord => ({
  until: state.bannedUntil,
  ends: Object.fromEntries(Object.entries(state.windows).map(([name, w]) => [name, w.start + w.seconds])),
});

/**
 * The counters of ONE caller (`anon:<ip>` or `token:<sha-256 of the token>`): a fixed window per
 * bucket (`read`, `write`) that starts with the first request, and the caller's ban.
 *
 * A Durable Object runs one call at a time and `hit` is synchronous (it decides in memory, then
 * writes), so the count is exact under any concurrency (KV could not count: eventually consistent,
 * one write a second per key). `now` is the request's clock (unix seconds), so tests move time with
 * X-Test-Now. An idle caller leaves one small record behind, overwritten on its next visit.
 */
export class RateLimiter extends DurableObject<Env> {
  /** The state, read from storage once per instance; this object is its only writer. */
  private state?: State;

  hit(bucket: string, limit: number, windowSeconds: number, now: number): HitResult {
    const state = (this.state ??= this.ctx.storage.kv.get<State>(STATE) ?? { bannedUntil: 0, windows: {} });

    // A window that has run out (or lies in the future of a clock moved back) starts afresh.
    for (const [name, w] of Object.entries(state.windows)) {
      if (now >= w.start + w.seconds || now < w.start) delete state.windows[name];
    }
    const window = state.windows[bucket];
    const windowLeft = window ? window.start + window.seconds - now : 0;

    if (state.bannedUntil > now) {
      // Banned and the KV record has not reached this location yet: refused, not counted.
      const retryIn = state.bannedUntil - now;
      return { allowed: false, limit, remaining: 0, resetIn: Math.max(retryIn, windowLeft), retryIn, ban: banRecord(state) };
    }

    if (window && window.count >= limit) {
      // Hitting the limit bans the whole caller. The counters stay: the window's budget remains
      // exact, so a request after the ban into a still-exhausted window hits the limit again.
      const seconds = LIMITS.rate_limit.seconds_banned;
      state.bannedUntil = now + seconds;
      this.save(state);
      return {
        allowed: false,
        limit,
        remaining: 0,
        resetIn: Math.max(seconds, windowLeft),
        retryIn: seconds,
        ban: banRecord(state),
        newBan: true,
      };
    }

    const current = window ?? { start: now, count: 0, seconds: windowSeconds };
    current.count += 1;
    state.windows[bucket] = current;
    this.save(state);
    return { allowed: true, limit, remaining: limit - current.count, resetIn: current.start + current.seconds - now };
  }

  /**
   * Persists the state. The count was decided in memory, one call at a time, so it is exact; the
   * write does not hold the answer back until it is confirmed (`allowUnconfirmed`): should a write
   * ever fail, the runtime resets this object and a few counts are lost, which a limiter can
   * afford better than a wait on every request.
   */
  private save(state: State): void {
    this.ctx.storage.put(STATE, state, { allowUnconfirmed: true }).catch(() => {}); // a failed write resets the object anyway
  }
}
