/**
 * Resumable streams: the rules shared by the app hubs' logs (src/objects/app-event-log.ts) and the
 * user hubs' replay buffers (src/objects/replay-buffer.ts).
 *
 * Every event frame's `meta.id` is a cursor, an integer as a string: on app streams the event's
 * outbox sequence; on user streams one that grows by one with each event sent on the connection.
 * A client that reconnects with
 * `since=<the last meta.id it processed>` gets every later event still in the window, in order,
 * then the live ones; when the cursor is older than the window or was never issued by that
 * stream, the first frame carries `meta.replay_gap` instead and the stream goes on live.
 */

/** How much each stream keeps: an event stays while it is younger than `seconds` OR among the newest `events`. */
export interface ReplayLimits {
  seconds: number;
  events: number;
}

/** The replay window of docs/streams.md ("Resumable streams"): at least 10 minutes and 10,000 events per stream. */
export const REPLAY_DEFAULTS: ReplayLimits = { seconds: 600, events: 10_000 };

/** How often a hub trims its buffer and retires streams nobody resumed (its alarm). */
export const REPLAY_TRIM_MS = 60_000;

/** Optional deployment overrides of the window (wrangler.toml [vars] or .dev.vars). */
interface ReplayVars {
  STREAM_REPLAY_SECONDS?: string;
  STREAM_REPLAY_EVENTS?: string;
}

/** The window in force: REPLAY_DEFAULTS unless STREAM_REPLAY_SECONDS / STREAM_REPLAY_EVENTS set positive integers. */
export function replayLimits(env: object): ReplayLimits {
  const vars = env as ReplayVars;
  const positive = (v: string | undefined, fallback: number) => (v && /^[1-9]\d{0,9}$/.test(v) ? Number(v) : fallback);
  return {
    seconds: positive(vars.STREAM_REPLAY_SECONDS, REPLAY_DEFAULTS.seconds),
    events: positive(vars.STREAM_REPLAY_EVENTS, REPLAY_DEFAULTS.events),
  };
}

/** Where a stream's numbering stands: `floor` before its first event, everything after `trimmed` kept, `last` issued. */
export interface CursorRange {
  floor: number;
  trimmed: number;
  last: number;
}

/** Why a cursor cannot be replayed from: older than the window, or never issued by this stream. */
export type ReplayGap = "expired" | "unknown";

/**
 * What a reconnect with `since` gets: the cursor to replay after, or the reason it cannot.
 * Cursors are decimal integers; anything else, or a number this stream has not reached, is unknown.
 */
export function checkCursor(range: CursorRange, since: string): { after: number } | { gap: ReplayGap } {
  if (!/^\d{1,15}$/.test(since)) return { gap: "unknown" };
  const cursor = Number(since);
  if (cursor > range.last) return { gap: "unknown" };
  if (cursor < range.trimmed || cursor < range.floor) return { gap: "expired" };
  return { after: cursor };
}

/** An event as a hub stores it once, whatever the number of streams it goes to. */
export interface StoredEvent {
  type: string;
  /** Unix seconds. */
  timestamp: number;
  isDeleted: boolean;
  /** `data`, serialized. */
  data: string;
}

/**
 * One event frame: `{"meta":{type, id, timestamp, is_deleted?, ...extra}, "data"}` with the
 * stream's cursor as `id`. `extra` holds further meta fields as JSON without braces (user
 * streams: `"subscription_ids":[…]`; the event's own meta, src/events/event-meta.ts); a JSON
 * array there is the subscription ids alone (entries buffered before extra meta existed).
 */
export function frameText(e: StoredEvent, cursor: number, extra?: string): string {
  const deleted = e.isDeleted ? `,"is_deleted":true` : "";
  const more = !extra ? "" : extra.startsWith("[") ? `,"subscription_ids":${extra}` : `,${extra}`;
  return `{"meta":{"type":${JSON.stringify(e.type)},"id":"${cursor}","timestamp":${e.timestamp}${deleted}${more}},"data":${e.data}}`;
}

/** Joins meta field lists (JSON without braces), skipping empty ones. */
export const joinMeta = (...parts: (string | undefined)[]) => parts.filter((p) => p).join(",");

/** How many replayed frames a hub sends before letting other work (live fan-out) run. */
export const REPLAY_CHUNK = 200;

/** Yields to the event loop, so a long replay never holds up other calls into the hub. */
export const yieldTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
