import { DurableObject } from "cloudflare:workers";
import { LIMITS } from "../config";

/** The ban a caller is under, as recorded in KV (src/stores/bans.ts) and kept here. */
export interface BanRecord {
  /** Unix seconds (request clock) when the ban lapses. */
  until: number;
  /** Unix seconds when each bucket's window that was running at the ban ends. */
  ends: Record<string, number>;
}

/** The answer to a lease: a block of requests granted to one isolate, or a refusal. */
export interface HitResult {
  allowed: boolean;
  /** Requests granted (the first of them is the asking request); 0 when refused. */
  granted: number;
  /** The bucket's limit. */
  limit: number;
  /** Requests left in the bucket's window after the grant (0 when refused). */
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
  /** Requests granted in this window (blocks count whole: used or not). */
  count: number;
  seconds: number;
  /** The count last written to storage: a reservation ahead of `count` (see `lease`). */
  mark?: number;
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

/** Largest block of requests one lease grants. */
export const MAX_LEASE = 64;

/**
 * The counters of ONE caller (`anon:<ip>` or `token:<sha-256 of the token>`): a fixed window per
 * bucket (`read`, `write`) that starts with the first request, and the caller's ban.
 *
 * Isolates do not ask once per request: they lease blocks of requests (src/middleware/rate-limit.ts)
 * and spend them locally. A block is a sixteenth of what is left (1 to MAX_LEASE), so blocks shrink
 * to single requests as the window runs out and the last requests, the refusal and the ban are
 * decided here one by one. Granted blocks count whole, used or not: the limiter may under-admit
 * (an isolate that dies with part of a block) but never admits more than the limit in a window.
 *
 * A Durable Object runs one call at a time and `lease` is synchronous (it decides in memory), so the
 * count is exact under any concurrency. Storage is written once per MAX_LEASE granted requests:
 * the stored count is a reservation ahead of the real one, so an evicted object resumes from at
 * least the true count (erring towards refusing); bans are written at once. `now` is the request's
 * clock (unix seconds), so tests move time with X-Test-Now.
 */
export class RateLimiter extends DurableObject<Env> {
  /** The state, read from storage once per instance; this object is its only writer. */
  private state?: State;

  /** One request, decided here (no block). */
  hit(bucket: string, limit: number, windowSeconds: number, now: number): HitResult {
    return this.lease(bucket, limit, windowSeconds, now, 1);
  }

  /** A block of up to `max` requests, the first of which is the asking one. */
  lease(bucket: string, limit: number, windowSeconds: number, now: number, max = MAX_LEASE): HitResult {
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
      return { allowed: false, granted: 0, limit, remaining: 0, resetIn: Math.max(retryIn, windowLeft), retryIn, ban: banRecord(state) };
    }

    if (window && window.count >= limit) {
      // Hitting the limit bans the whole caller. The counters stay: the window's budget remains
      // exact, so a request after the ban into a still-exhausted window hits the limit again.
      const seconds = LIMITS.rate_limit.seconds_banned;
      state.bannedUntil = now + seconds;
      this.save(state);
      return {
        allowed: false,
        granted: 0,
        limit,
        remaining: 0,
        resetIn: Math.max(seconds, windowLeft),
        retryIn: seconds,
        ban: banRecord(state),
        newBan: true,
      };
    }

    const current = window ?? { start: now, count: 0, seconds: windowSeconds };
    const granted = Math.max(1, Math.min(max, Math.floor((limit - current.count) / 16), limit - current.count));
    current.count += granted;
    state.windows[bucket] = current;
    if (current.count > (current.mark ?? 0)) {
      current.mark = Math.min(limit, current.count + MAX_LEASE);
      this.save(state);
    }
    return { allowed: true, granted, limit, remaining: limit - current.count, resetIn: current.start + current.seconds - now };
  }

  /**
   * Persists the state. The count was decided in memory, one call at a time, so it is exact; the
   * write does not hold the answer back until it is confirmed (`allowUnconfirmed`): should a write
   * ever fail, the runtime resets this object and a few counts are lost, which a limiter can
   * afford better than a wait on every request.
   */
  private save(state: State): void {
    // What is stored is the reservation: each window's count is its mark.
    const stored: State = {
      bannedUntil: state.bannedUntil,
      windows: Object.fromEntries(Object.entries(state.windows).map(([name, w]) => [name, { ...w, count: w.mark ?? w.count }])),
    };
    this.ctx.storage.put(STATE, stored, { allowUnconfirmed: true }).catch(() => {}); // a failed write resets the object anyway
  }
}
