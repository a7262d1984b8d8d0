import { sql, type SQL } from "drizzle-orm";
import type { RawResult } from "../db";
import { boundShape, placeholder as v, type BoundQuery } from "../db/batch";
import { inList, int } from "../db/dialect";
import type { StampedEvent } from "./publish";

/**
 * The extra `meta` fields of event frames (how-to/app-streams.md, how-to/user-streams.md):
 * - every stream: `channel_type` (and `channel_name` for chat rooms) on messages, `channel_id`
 *   on `user_channel_presence` (its data, a Presence object, does not say which channel),
 *   `revision` on revised posts, `is_closed` on a poll that closed;
 * - app streams only (`relay`), so a push relay finds recipients and honours mutes and blocks
 *   from the frame alone: `subscribed_user_ids` on created messages and on polls deleted or
 *   closed, and `suppress_notifications` on posts, created messages and those polls: the users
 *   concerned (mentioned, replied to, reposted; channel subscribers; poll respondents) who
 *   muted or blocked the author, were blocked by them, or muted the channel.
 */
export interface EventMeta {
  /** JSON fields (no braces) for every stream, "" when none. */
  common: string;
  /** JSON fields for app streams only, "" when none. */
  relay: string;
  /** The channel type of a message or channel event (user-stream `channel_types` filters on it). */
  channelType?: string;
}

export interface MetaPlan {
  statements: BoundQuery[];
  /** Builds the meta from the results of `statements`, in order. */
  build(results: RawResult[]): EventMeta;
}

type Obj = Record<string, unknown> | undefined;
const CHAT_TYPE = "io.example.core.chat";
const CHAT_SETTINGS = "io.example.core.chat-settings";
const num = (v: unknown): number | undefined => (v === undefined || v === null || v === "" || Number.isNaN(Number(v)) ? undefined : Number(v));
const first = (data: unknown): Obj => (Array.isArray(data) ? data[0] : data) as Obj;
const fields = (o: Record<string, unknown>) => (Object.keys(o).length ? JSON.stringify(o).slice(1, -1) : "");
const NONE: MetaPlan = { statements: [], build: () => ({ common: "", relay: "" }) };

/** Whether user `u` (a column) muted or blocked `authorId`, or was blocked by them. */
const hides = (u: SQL, authorId: SQL) => sql`(EXISTS (SELECT 1 FROM user_mutes m WHERE m.user_id = ${u} AND m.muted_id = ${int(authorId)})
  OR EXISTS (SELECT 1 FROM user_blocks b WHERE b.user_id = ${u} AND b.blocked_id = ${int(authorId)})
  OR EXISTS (SELECT 1 FROM user_blocks b WHERE b.user_id = ${int(authorId)} AND b.blocked_id = ${u}))`;

type UserRow = { user_id: number | string; suppress: number | string };
const rowsOf = (r: RawResult | undefined) => (r?.results ?? []) as unknown as UserRow[];
const ids = (rows: UserRow[], suppressed = false) => rows.filter((r) => !suppressed || Number(r.suppress) === 1).map((r) => String(r.user_id));

/** Plans the meta of one event: the statements it needs run in the delivery batch. */
export function planMeta(e: StampedEvent): MetaPlan {
  const data = e.data as Obj;
  switch (e.type) {
    case "post": {
      const post = first(e.data);
      const author = e.route?.actorId ?? num((post?.user as Obj)?.id) ?? num(post?.user_id);
      const common = fields(post?.is_revised === true && !e.isDeleted ? { revision: "1" } : {});
      if (author === undefined) return { statements: [], build: () => ({ common, relay: "" }) };
      const mentioned = (((post?.content as Obj)?.entities as Obj)?.mentions as Obj[] | undefined)?.map((m) => num(m?.id)) ?? [];
      const reposted = num(((post?.repost_of as Obj)?.user as Obj)?.id);
      const concerned = [...mentioned, reposted].filter((id): id is number => id !== undefined && id !== author);
      const replyTo = num(post?.reply_to) ?? 0;
      const statement = boundShape(
        "meta-post",
        () => sql`SELECT u.id AS user_id, 1 AS suppress FROM users u
        WHERE u.id IN (SELECT id FROM users WHERE id IN ${inList(v("concerned"))} UNION SELECT user_id FROM posts WHERE id = ${v("replyTo")})
          AND u.id <> ${v("author")} AND ${hides(sql`u.id`, v("author"))} ORDER BY u.id`,
        { concerned: JSON.stringify(concerned), replyTo, author },
      );
      return { statements: [statement], build: ([r]) => ({ common, relay: fields({ suppress_notifications: ids(rowsOf(r)) }) }) };
    }
    case "message": {
      const message = first(e.data);
      const channelId = e.route?.channelId ?? num(message?.channel_id);
      if (channelId === undefined) return NONE;
      const author = e.route?.actorId ?? num((message?.user as Obj)?.id) ?? 0;
      const values = { channel: channelId, author };
      const statements = [boundShape("meta-message-channel", () => sql`SELECT type, raw FROM channels WHERE id = ${v("channel")}`, values)];
      if (!e.isDeleted) {
        statements.push(
          boundShape(
            "meta-message-subscribers",
            () => sql`SELECT s.user_id AS user_id,
            CASE WHEN ${hides(sql`s.user_id`, v("author"))}
              OR EXISTS (SELECT 1 FROM channel_mutes cm WHERE cm.channel_id = s.channel_id AND cm.user_id = s.user_id) THEN 1 ELSE 0 END AS suppress
          FROM subscriptions s WHERE s.channel_id = ${v("channel")} ORDER BY s.user_id`,
            values,
          ),
        );
      }
      return {
        statements,
        build: ([channel, subscribers]) => {
          const row = channel?.results[0] as { type: string; raw: unknown } | undefined;
          if (!row) return { common: "", relay: "" };
          const name = row.type === CHAT_TYPE ? chatName(row.raw) : undefined;
          const common = fields({ channel_type: row.type, ...(name !== undefined ? { channel_name: name } : {}) });
          const subs = rowsOf(subscribers);
          const relay = e.isDeleted ? "" : fields({ subscribed_user_ids: ids(subs), suppress_notifications: ids(subs, true) });
          return { common, relay, channelType: row.type };
        },
      };
    }
    case "channel": {
      const channelType = first(e.data)?.type;
      return typeof channelType === "string" ? { statements: [], build: () => ({ common: "", relay: "", channelType }) } : NONE;
    }
    case "user_channel_presence": {
      const channelId = e.route?.channelId;
      return channelId === undefined ? NONE : { statements: [], build: () => ({ common: fields({ channel_id: String(channelId) }), relay: "" }) };
    }
    case "poll": {
      const poll = (data?.poll ?? data) as Obj;
      const pollId = num(poll?.id);
      const closedAt = typeof poll?.closed_at === "string" ? Date.parse(poll.closed_at) / 1000 : NaN;
      const closed = !e.isDeleted && closedAt <= e.timestamp;
      const creator = num((poll?.user as Obj)?.id) ?? num(poll?.user_id) ?? e.route?.userIds?.[0];
      const common = fields(closed ? { is_closed: true } : {});
      if (!(closed || e.isDeleted) || pollId === undefined || creator === undefined) return { statements: [], build: () => ({ common, relay: "" }) };
      const statement = boundShape(
        "meta-poll",
        () => {
          const c = v("creator");
          return sql`SELECT x.user_id AS user_id, CASE WHEN x.user_id <> ${int(c)} AND ${hides(sql`x.user_id`, c)} THEN 1 ELSE 0 END AS suppress
        FROM (SELECT user_id FROM poll_responses WHERE poll_id = ${v("poll")} UNION SELECT ${int(c)} AS user_id) x ORDER BY x.user_id`;
        },
        { creator, poll: pollId },
      );
      return {
        statements: [statement],
        build: ([r]) => ({ common, relay: fields({ subscribed_user_ids: ids(rowsOf(r)), suppress_notifications: ids(rowsOf(r), true) }) }),
      };
    }
    default:
      return NONE;
  }
}

/** The name of a chat room, from its `…chat-settings` raw entry (raw is `{type: [values]}`). */
function chatName(raw: unknown): string | undefined {
  const byType = (typeof raw === "string" ? safeParse(raw) : raw) as Record<string, { name?: unknown }[]> | null;
  const settings = byType && typeof byType === "object" ? byType[CHAT_SETTINGS] : undefined;
  const name = Array.isArray(settings) ? settings[0]?.name : undefined;
  return typeof name === "string" ? name : undefined;
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}
