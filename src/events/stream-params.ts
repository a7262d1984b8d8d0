import { SUBSCRIPTION_FLAGS, type StreamEndpoint } from "../stores/stream-subscriptions";
import type { UserHubEvent } from "./deliver";

/**
 * The query parameters of streams (how-to/user-streams.md and how-to/app-streams.md,
 * "Connection Query Parameters" and "Subscription Query Parameters"): which are kept, how they
 * compare, and how the stream hubs apply them to each event.
 */

/** Given on the socket (`GET /v1/user?include_html=0…`, `GET /v1/app?key=…&include_raw=1`): how every frame's data is rendered. */
export const CONNECTION_PARAMS = [
  "include_raw",
  "include_post_raw",
  "include_user_raw",
  "include_file_raw",
  "include_channel_raw",
  "include_message_raw",
  "include_bookmarked_by",
  "include_reposted_by",
  "include_marker",
  "include_recent_message",
  "include_html",
] as const;

/** Given on the subscribing GET: which events the subscription receives. */
export const SUBSCRIPTION_PARAMS = [
  "include_incomplete",
  "include_private",
  "include_not_followed",
  "channel_types",
  "file_types",
  "include_read",
  "include_muted",
  "include_deleted",
  "include_directed_posts",
] as const;

export type ConnectionParams = Partial<Record<(typeof CONNECTION_PARAMS)[number], string>>;
export type SubscriptionParams = Partial<Record<(typeof SUBSCRIPTION_PARAMS)[number], string>>;

const LISTS = new Set(["channel_types", "file_types"]);

/** A flag as `1`/`0` (`true`/`false` accepted); anything else is kept as given (the route validates it). */
const normalFlag = (v: string) => (v === "true" ? "1" : v === "false" ? "0" : v);
/** A comma-separated list, trimmed, without duplicates, sorted: the same set reads the same. */
const normalList = (v: string) =>
  [
    ...new Set(
      v
        .split(",")
        .map((x) => x.trim())
        .filter((x) => x),
    ),
  ]
    .sort()
    .join(",");

function pick<K extends string>(names: readonly K[], query: Record<string, string | undefined>): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const name of names) {
    const v = query[name];
    if (v !== undefined) out[name] = LISTS.has(name) ? normalList(v) : normalFlag(v);
  }
  return out;
}

export const connectionParamsOf = (query: Record<string, string | undefined>): ConnectionParams => pick(CONNECTION_PARAMS, query);
export const subscriptionParamsOf = (query: Record<string, string | undefined>): SubscriptionParams => pick(SUBSCRIPTION_PARAMS, query);

/** Whether two subscriptions' parameters are the same (order of the query does not matter). */
export function sameParams(a: SubscriptionParams, b: SubscriptionParams): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof SubscriptionParams>;
  return [...keys].every((k) => a[k] === b[k]);
}

const on = (v: string | undefined, fallback: boolean) => (v === undefined ? fallback : v === "1");

/** The routing bits of a subscription (src/stores/stream-subscriptions.ts reads them in SQL). */
export function flagsOf(endpoint: StreamEndpoint, p: SubscriptionParams): number {
  let flags = 0;
  if ((endpoint === "presence" || endpoint === "channel_presence") && on(p.include_not_followed, false)) flags |= SUBSCRIPTION_FLAGS.notFollowed;
  if (on(p.include_muted, false)) flags |= SUBSCRIPTION_FLAGS.muted;
  if (!on(p.include_directed_posts, true)) flags |= SUBSCRIPTION_FLAGS.noDirected;
  return flags;
}

const list = (v: string | undefined) => (v ? v.split(",") : null);

/**
 * Whether a subscription with these parameters receives the event: `include_deleted=0` drops
 * deletions; `channel_types` keeps messages and channels of those types; on files,
 * `file_types` keeps those types, `include_incomplete=0` and `include_private=0` drop
 * incomplete and private files.
 */
export function accepts(p: SubscriptionParams, e: UserHubEvent): boolean {
  if (e.event.isDeleted && !on(p.include_deleted, true)) return false;
  const channelTypes = list(p.channel_types);
  if (channelTypes && e.channelType !== undefined && !channelTypes.includes(e.channelType)) return false;
  if (e.event.type === "file" && (p.file_types || p.include_incomplete || p.include_private)) {
    const file = JSON.parse(e.event.data) as { type?: string; is_complete?: boolean; is_public?: boolean };
    const fileTypes = list(p.file_types);
    if (fileTypes && !fileTypes.includes(String(file.type))) return false;
    if (!on(p.include_incomplete, true) && file.is_complete === false) return false;
    if (!on(p.include_private, true) && file.is_public === false) return false;
  }
  return true;
}

type RawKind = "channel" | "message" | "file" | "post" | "user";
interface Shaping extends Record<RawKind, boolean> {
  html: boolean;
}

function shapingOf(p: ConnectionParams): Shaping {
  const allRaw = on(p.include_raw, false);
  return {
    html: on(p.include_html, true),
    channel: allRaw || on(p.include_channel_raw, false),
    message: allRaw || on(p.include_message_raw, false),
    file: allRaw || on(p.include_file_raw, false),
    post: allRaw || on(p.include_post_raw, false),
    user: allRaw || on(p.include_user_raw, false),
  };
}

/** Connections whose frames render alike share a key. */
export function shapeKey(p: ConnectionParams): string {
  const s = shapingOf(p);
  return [s.html, s.channel, s.message, s.file, s.post, s.user].map(Number).join("");
}

type Json = Record<string, unknown>;
/**
 * Objects recognised by their own fields: channels carry `acl`, messages `channel_id`, files
 * `kind` and `is_complete`, posts `thread_id` without `channel_id`, users `username` and
 * `you_can_follow` (a limited user in an ACL has no raw).
 */
const kindOf = (o: Json): RawKind | null =>
  "acl" in o
    ? "channel"
    : "channel_id" in o
      ? "message"
      : "kind" in o && "is_complete" in o
        ? "file"
        : "thread_id" in o
          ? "post"
          : "username" in o && "you_can_follow" in o
            ? "user"
            : null;

/**
 * An event's data as a connection asked for it: `include_html=0` leaves `html` out of every
 * `content`; the `raw` events carry (channels, messages, files, posts, and users in `user`
 * events) stays only with `include_raw` or `include_<object>_raw`. Other objects keep theirs.
 */
export function shapeData(data: string, p: ConnectionParams): string {
  const s = shapingOf(p);
  if (s.html && !data.includes('"raw"')) return data;
  const walk = (v: unknown, parentKey?: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v === null || typeof v !== "object") return v;
    const o = v as Json;
    const kind = kindOf(o);
    const keepRaw = kind === null ? true : s[kind];
    const out: Json = {};
    for (const [k, x] of Object.entries(o)) {
      if (k === "raw" && !keepRaw) continue;
      if (k === "html" && parentKey === "content" && !s.html) continue;
      out[k] = walk(x, k);
    }
    return out;
  };
  return JSON.stringify(walk(JSON.parse(data)));
}

/** A whole frame (`{"meta", "data"}`) as a connection asked for it (see `shapeData`). */
export function shapeFrame(frame: string, p: ConnectionParams): string {
  const s = shapingOf(p);
  if (s.html && !frame.includes('"raw"')) return frame;
  const f = JSON.parse(frame) as { meta: unknown; data?: unknown };
  if (f.data === undefined) return frame;
  return JSON.stringify({ meta: f.meta, data: JSON.parse(shapeData(JSON.stringify(f.data), p)) });
}
