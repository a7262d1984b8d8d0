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

/** Who asks for a lease, and what it hands back of its previous one. */
export interface LeaseAsk {
  /** The asking isolate (a random id per isolate). */
  holder: string;
  /** Requests of its previous lease it did not spend and will not: credited back to the window. */
  returned: number;
  /** Start of the window that previous lease belonged to (a return into another window is ignored). */
  from: number;
}

interface Window {
  start: number;
  /** Requests spent or held in leases not yet settled: never less than those admitted. */
  count: number;
  seconds: number;
  /** The count last written to storage: a reservation ahead of `count` (see `LeaseLedger`). */
  mark?: number;
}

/** What is stored: the windows and the ban. */
export interface LedgerState {
  bannedUntil: number;
  windows: Record<string, Window>;
}

/** One isolate's standing in a window: its unsettled lease and the size of its next one. */
interface Holder {
  outstanding: number;
  next: number;
}

/** Largest block of requests one lease grants. */
export const MAX_LEASE = 64;
/** A holder's first lease in a window; a lease spent in full is followed by one twice as large. */
export const FIRST_LEASE = 16;
/**
 * A lease is at most 1/SHARE of what is left, divided by the holders of the window: all holders'
 * leases together hold about a sixteenth of the remainder, which bounds what isolates that stop
 * asking can leave unspent (see the simulation in test/unit/lease-simulation.test.ts).
 */
export const SHARE = 16;

const banRecord = (state: LedgerState): BanRecord => ({
  until: state.bannedUntil,
  ends: Object.fromEntries(Object.entries(state.windows).map(([name, w]) => [name, w.start + w.seconds])),
});

/**
 * The counts of ONE caller, decided synchronously (the Durable Object runs one call at a time, so
 * they are exact under any concurrency): a fixed window per bucket that starts with the first
 * request, and the caller's ban. Pure apart from the `save` callback, so the simulation can run it.
 *
 * Isolates lease blocks of requests and spend them from memory. A window's count is what was
 * spent plus what is still leased: it never admits more than the limit. So that leases held by
 * isolates that are not asking do not eat the allowance, a lease is sized by the holders of the
 * window (remaining ÷ (SHARE × holders), capped), starts small for a new holder and doubles while
 * the holder spends its leases in full; an isolate that renews hands back what it did not spend.
 * Blocks shrink to single requests near the limit, so the refusal and the ban are decided here.
 *
 * Holders live in memory only. Storage keeps a reservation one MAX_LEASE ahead of the count
 * (written once per MAX_LEASE granted; bans at once): an evicted object resumes from at least
 * the true count and, knowing no holders, ignores returns of leases it granted before.
 */
export class LeaseLedger {
  /** Per bucket: the holders of the window starting at `start`. */
  private holders = new Map<string, { start: number; byId: Map<string, Holder> }>();

  constructor(
    private readonly state: LedgerState,
    private readonly save: (stored: LedgerState) => void,
  ) {}

  /** A block of up to `max` requests, the first of which is the asking one. */
  lease(bucket: string, limit: number, windowSeconds: number, now: number, ask?: LeaseAsk, max = MAX_LEASE): HitResult {
    const state = this.state;
    // A window that has run out (or lies in the future of a clock moved back) starts afresh.
    for (const [name, w] of Object.entries(state.windows)) {
      if (now >= w.start + w.seconds || now < w.start) delete state.windows[name];
    }
    const window = state.windows[bucket];
    const windowLeft = window ? window.start + window.seconds - now : 0;
    const holders = this.holdersOf(bucket, window?.start ?? now);
    const holder = ask ? holders.get(ask.holder) : undefined;
    if (ask && holder && window && ask.from === window.start) {
      // The previous lease is settled: what was not spent goes back to the window.
      const back = Math.min(Math.max(0, Math.floor(ask.returned)), holder.outstanding);
      window.count -= back;
      holder.next = Math.min(MAX_LEASE, Math.max(1, 2 * (holder.outstanding - back)));
      holder.outstanding = 0;
    }

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
      this.persist();
      const resetIn = Math.max(seconds, windowLeft);
      return { allowed: false, granted: 0, limit, remaining: 0, resetIn, retryIn: seconds, ban: banRecord(state), newBan: true };
    }

    const current = window ?? { start: now, count: 0, seconds: windowSeconds };
    const free = limit - current.count;
    let granted: number;
    if (ask) {
      const mine = holder ?? { outstanding: 0, next: FIRST_LEASE };
      holders.set(ask.holder, mine);
      granted = Math.max(1, Math.min(max, mine.next, Math.floor(free / (SHARE * holders.size)), free));
      mine.outstanding = granted;
    } else {
      // An asker that returns nothing (and cannot be told apart from others): a share of one.
      granted = Math.max(1, Math.min(max, Math.floor(free / SHARE), free));
    }
    current.count += granted;
    state.windows[bucket] = current;
    if (current.count > (current.mark ?? 0)) {
      current.mark = Math.min(limit, current.count + MAX_LEASE);
      this.persist();
    }
    return { allowed: true, granted, limit, remaining: limit - current.count, resetIn: current.start + current.seconds - now };
  }

  /** The holders of the bucket's window starting at `start` (a new window starts with none). */
  private holdersOf(bucket: string, start: number): Map<string, Holder> {
    let entry = this.holders.get(bucket);
    if (!entry || entry.start !== start) this.holders.set(bucket, (entry = { start, byId: new Map() }));
    return entry.byId;
  }

  /** Hands `save` the stored form: each window's count is its reservation mark. */
  private persist(): void {
    const s = this.state;
    this.save({
      bannedUntil: s.bannedUntil,
      windows: Object.fromEntries(Object.entries(s.windows).map(([name, w]) => [name, { ...w, count: w.mark ?? w.count }])),
    });
  }
}
