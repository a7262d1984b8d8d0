import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db";
import { greatest, inList, int, jsonFirstItemField, jsonHasAnyKey, jsonRows, text } from "../db/dialect";
import type { Page } from "../http/pagination";
import { PM_TYPE, batchRows, canReadSql, pageBoundsSql, readUser, unreadFlagSql, userColumnsSql, type Row } from "./channel-sql";
import { channelColumnsSql, channelFrom, ownerJoin, readChannel, type ChannelRecord } from "./channels";
import { messageColumnsSql, messageJoins, readMessage, type MessageRecord } from "./messages";
import { userExtraColumns, type UserView } from "./users";

// Lists and lookups of channels with what the general channel parameters add (the recent
// messages, the ACL's users), each read in one round trip: the list is a statement, and the
// extras are statements of the same batch over the list as a CTE.

/** Which channels a list keeps (the filtering general channel parameters). */
export interface ChannelFilters {
  types: string[];
  /** Ignored when `types` is given. */
  excludeTypes: string[];
  /** include_read=0: only channels unread by the viewer. */
  unreadOnly: boolean;
  includeInactive: boolean;
}

/** What a read embeds besides the channels. */
export interface ChannelExtras {
  recentMessage: boolean;
  limitedUsers: boolean;
}

/** A user as the ACL's `users` show it (include_limited_users). */
export interface LimitedUser {
  id: number;
  username: string;
  name: string | null;
  avatarUrl: string | null;
  presence: string | null;
}

export interface ChannelRead {
  channels: ChannelRecord[];
  messages: Map<number, MessageRecord>;
  users: Map<number, LimitedUser>;
}

/** Whether `userId` has not read channel `c` up to its newest live message (their `channel:{id}` marker). */
export const unreadSql = (userId: number) =>
  sql`(c.recent_message_id IS NOT NULL AND c.recent_message_id >
    coalesce((SELECT um.position FROM markers um WHERE um.user_id = ${userId} AND um.name = 'channel:' || c.id), -1))`;

/** The filter conditions on channel `c` (always a condition, `true` when none apply). */
export function filterSql(f: ChannelFilters, viewerId: number | null): SQL {
  const conds: SQL[] = [sql`true`];
  if (f.types.length) conds.push(sql`c.type IN ${inList(f.types, "text")}`);
  else if (f.excludeTypes.length) conds.push(sql`c.type NOT IN ${inList(f.excludeTypes, "text")}`);
  if (!f.includeInactive) conds.push(sql`c.is_active = 1`);
  if (f.unreadOnly && viewerId != null) conds.push(unreadSql(viewerId));
  return sql.join(conds, sql` AND `);
}

/**
 * Runs a list statement (selecting `channelColumnsSql`) with its extras and `more` statements in
 * one batch; returns the channels in the statement's order and the rows of `more`.
 */
export async function readChannels(db: Db, listSql: SQL, viewerId: number | null, want: ChannelExtras, more: SQL[] = []) {
  const stmts = [listSql];
  if (want.recentMessage) {
    stmts.push(sql`WITH x AS (${listSql})
      SELECT ${messageColumnsSql(viewerId)} FROM messages m ${messageJoins}
      WHERE m.id IN (SELECT x.recent_message_id FROM x UNION ALL SELECT x.recent_deleted_message_id FROM x)`);
  }
  if (want.limitedUsers) {
    stmts.push(sql`WITH x AS (${listSql})
      SELECT users.id, users.username, users.name, users.avatar_url, ${userExtraColumns().presence} AS presence FROM users
      WHERE users.id IN (SELECT ca.user_id FROM channel_acl ca WHERE ca.channel_id IN (SELECT x.id FROM x)
        UNION ALL SELECT x.owner_id FROM x WHERE x.type = ${PM_TYPE})`);
  }
  const rows = await batchRows(db, [...stmts, ...more]);
  let i = 1;
  const messages = new Map<number, MessageRecord>();
  if (want.recentMessage) for (const m of rows[i++].map(readMessage)) messages.set(m.id, m);
  const users = new Map<number, LimitedUser>();
  if (want.limitedUsers) {
    for (const r of rows[i++]) {
      users.set(Number(r.id), {
        id: Number(r.id),
        username: String(r.username),
        name: (r.name as string | null) ?? null,
        avatarUrl: (r.avatar_url as string | null) ?? null,
        presence: (r.presence as string | null) ?? null,
      });
    }
  }
  const read: ChannelRead = { channels: rows[0].map(readChannel), messages, users };
  return { read, more: rows.slice(stmts.length) };
}

const dir = (page: Page) => sql.raw(page.newestFirst ? "DESC" : "ASC");

/** Channels by id that the viewer may read (at most 200), in the order asked. */
export async function lookupChannels(db: Db, ids: number[], viewerId: number | null, f: ChannelFilters, want: ChannelExtras): Promise<ChannelRead> {
  const { read } = await readChannels(
    db,
    sql`SELECT ${channelColumnsSql(viewerId)} FROM ${channelFrom}
      WHERE c.id IN ${inList(ids)} AND ${canReadSql("c", viewerId)} AND ${filterSql(f, viewerId)}`,
    viewerId,
    want,
  );
  const byId = new Map(read.channels.map((ch) => [ch.id, ch]));
  return { ...read, channels: ids.flatMap((id) => byId.get(id) ?? []) };
}

/** The channel `where` picks (on `c`), if the viewer may read it. */
async function oneReadable(db: Db, where: SQL, viewerId: number | null, want: ChannelExtras): Promise<ChannelRead> {
  const { read } = await readChannels(
    db,
    sql`SELECT ${channelColumnsSql(viewerId)} FROM ${channelFrom} WHERE ${where} AND ${canReadSql("c", viewerId)}`,
    viewerId,
    want,
  );
  return read;
}

/** One channel the viewer may read (the single-channel reads), or undefined. */
export const readableChannelWith = (db: Db, id: number, viewerId: number | null, want: ChannelExtras): Promise<ChannelRead> =>
  oneReadable(db, sql`c.id = ${id}`, viewerId, want);

/** The private-message channel of exactly these participants (sorted key), if the viewer may read it. */
export const existingPm = (db: Db, pmKey: string, viewerId: number, want: ChannelExtras): Promise<ChannelRead> =>
  oneReadable(db, sql`c.pm_key = ${pmKey}`, viewerId, want);

/** The types `meta.unread_counts` of the inbox always names. */
export const INBOX_COUNT_TYPES = [PM_TYPE, "io.example.core.chat"];

/** Per type, how many of the user's subscribed, active channels are unread. */
function unreadCountsSql(userId: number, types: string[]): SQL {
  // Reads the user's subscriptions flagged unread only (partial index subscriptions_user_unread); the
  // flag may only err towards unread (a refresh missed), and unreadSql re-checks it, so counts stay exact.
  return sql`SELECT c.type, count(*) AS n FROM subscriptions s JOIN channels c ON c.id = s.channel_id
    WHERE s.user_id = ${userId} AND s.is_unread = 1 AND c.type IN ${inList(types, "text")} AND c.is_active = 1
      AND ${canReadSql("c", userId)} AND ${unreadSql(userId)}
    GROUP BY c.type`;
}

const countsOf = (rows: Row[], types: string[]) => {
  const out: Record<string, number> = Object.fromEntries(types.map((t) => [t, 0]));
  for (const r of rows) out[String(r.type)] = Number(r.n);
  return out;
};

/** A channel's activity key (`activityKeySql`) computed from channel `c` (search's `activity` order). */
export const ACTIVITY_KEY = `(coalesce((SELECT am.created_at FROM messages am WHERE am.id = c.recent_message_id), c.created_at) * 1048576 + c.id % 1048576)`;

/**
 * The user's inbox: channels they subscribe to, most recently active first (the pagination id is
 * the channel's activity key), plus the unread counts.
 */
export async function listSubscribed(db: Db, userId: number, page: Page, f: ChannelFilters, want: ChannelExtras) {
  // The subscription keeps the channel's key: the page walks index subscriptions_user_activity.
  const { read, more } = await readChannels(
    db,
    sql`SELECT ${channelColumnsSql(userId, "subscriptions")}, s.activity AS pagination_id
      FROM subscriptions s JOIN channels c ON c.id = s.channel_id ${ownerJoin}
      WHERE s.user_id = ${userId} AND ${pageBoundsSql("s.activity", page)} AND ${canReadSql("c", userId)} AND ${filterSql(f, userId)}
      ORDER BY s.activity ${dir(page)}, s.channel_id ${dir(page)} LIMIT ${page.limit + 1}`,
    userId,
    want,
    [unreadCountsSql(userId, INBOX_COUNT_TYPES)],
  );
  return { read, unreadCounts: countsOf(more[0], INBOX_COUNT_TYPES) };
}

/** Channels the user muted (and can still read), most recently muted first (the mute's id). */
export async function listMuted(db: Db, userId: number, page: Page, f: ChannelFilters, want: ChannelExtras): Promise<ChannelRead> {
  const { read } = await readChannels(
    db,
    sql`SELECT ${channelColumnsSql(userId, "mutes")}, cm.id AS pagination_id
      FROM channel_mutes cm JOIN channels c ON c.id = cm.channel_id ${ownerJoin}
      WHERE cm.user_id = ${userId} AND ${pageBoundsSql("cm.id", page)} AND ${canReadSql("c", userId)} AND ${filterSql(f, userId)}
      ORDER BY cm.id ${dir(page)} LIMIT ${page.limit + 1}`,
    userId,
    want,
  );
  return read;
}

/** Channels the user owns (private-message channels have no real owner and are left out), newest first. */
export async function listOwned(db: Db, userId: number, page: Page, f: ChannelFilters, want: ChannelExtras): Promise<ChannelRead> {
  const { read } = await readChannels(
    db,
    sql`SELECT ${channelColumnsSql(userId)}, c.id AS pagination_id FROM ${channelFrom}
      WHERE c.owner_id = ${userId} AND c.type <> ${PM_TYPE} AND ${pageBoundsSql("c.id", page)} AND ${filterSql(f, userId)}
      ORDER BY c.id ${dir(page)} LIMIT ${page.limit + 1}`,
    userId,
    want,
  );
  return read;
}

/** Unread channel counts of the given types (subscribed, active, unread by the marker). */
export async function unreadCounts(db: Db, userId: number, types: string[]): Promise<Record<string, number>> {
  const [rows] = await batchRows(db, [unreadCountsSql(userId, types)]);
  return countsOf(rows, types);
}

/**
 * Marks every subscribed channel of the types read: the `channel:{id}` marker moves to the
 * channel's newest live message (last_read_id never moves back), in one statement.
 */
export async function markAllRead(db: Db, userId: number, types: string[], version: string, at: number): Promise<void> {
  await batchRows(db, [
    sql`INSERT INTO markers (user_id, name, position, last_read_id, percentage, version, updated_at)
      SELECT s.user_id, 'channel:' || c.id, c.recent_message_id, c.recent_message_id, 0, ${text(version)}, ${int(at)}
      FROM subscriptions s JOIN channels c ON c.id = s.channel_id
      WHERE s.user_id = ${userId} AND c.type IN ${inList(types, "text")} AND ${canReadSql("c", userId)} AND ${unreadSql(userId)}
      ON CONFLICT (user_id, name) DO UPDATE SET position = excluded.position,
        last_read_id = ${greatest(sql`markers.last_read_id`, sql`excluded.last_read_id`)},
        percentage = 0, version = excluded.version, updated_at = excluded.updated_at`,
    sql`UPDATE subscriptions SET is_unread = ${unreadFlagSql(userId, sql`subscriptions.channel_id`)} WHERE user_id = ${userId} AND is_unread = 1`,
  ]);
}

/** A subscriber of a channel, with the subscription's id (the pagination id). */
export type Subscriber = UserView & { pid: number };

/**
 * The channel (as the viewer sees it) and a page of its subscribers, newest subscription first,
 * in one round trip; no users when the viewer may not read it.
 */
export async function channelSubscribers(db: Db, channelId: number, viewerId: number | null, page: Page) {
  const rows = await batchRows(db, [
    sql`SELECT ${channelColumnsSql(viewerId)} FROM ${channelFrom} WHERE c.id = ${channelId} AND ${canReadSql("c", viewerId)}`,
    sql`SELECT ${userColumnsSql(viewerId)}, s.id AS ix_pid FROM subscriptions s JOIN users ON users.id = s.user_id
      WHERE s.channel_id = ${channelId} AND users.is_disabled = 0 AND ${pageBoundsSql("s.id", page)}
        AND EXISTS (SELECT 1 FROM channels c WHERE c.id = ${channelId} AND ${canReadSql("c", viewerId)})
      ORDER BY s.id ${dir(page)} LIMIT ${page.limit + 1}`,
  ]);
  const channel = rows[0][0] ? readChannel(rows[0][0]) : undefined;
  const users: Subscriber[] = rows[1].map((r) => ({ ...readUser(r)!, pid: Number(r.ix_pid) }));
  return { channel, users };
}

export type SearchOrder = "activity" | "id" | "popularity";

/** GET /channels/search criteria (the reference's parameters). */
export interface ChannelSearch {
  q?: string;
  order: SearchOrder;
  categories: string[];
  createdAfter?: number;
  createdBefore?: number;
  ownerId?: number;
  fileId?: number;
  isPublic?: boolean;
  rawTypes: string[];
}

/** The settings raw the text query and categories read (io.pnut.core.chat-settings here). */
export const CHAT_SETTINGS = "io.example.core.chat-settings";

/** A field (`a` or `a.b`) of the first item of a raw type on channel `c`, as text (JSON text for arrays and objects). */
const rawField = (type: string, field: string): SQL => jsonFirstItemField(sql`c.raw`, type, field);

/** Channel `c` has raw of any of `types` (the list is one bound parameter, however long). */
const rawHasAny = (types: string[]) => jsonHasAnyKey(sql`c.raw`, inList(types, "text"));

const likePattern = (s: string) => `%${s.toLowerCase().replace(/[\\%_]/g, (ch) => "\\" + ch)}%`;
const like = (expr: SQL, pattern: string) => sql`lower(coalesce(${expr}, '')) LIKE ${pattern} ESCAPE '\\'`;

/**
 * Channels matching a search that the viewer may read. A plain scan with LIKE over the raw
 * text (no index: channel counts are small next to posts and messages). `activity`: most
 * recently active first (`ACTIVITY_KEY`); `id`: newest channel first, by id; `popularity`: most
 * messages first, one page.
 */
export async function searchChannels(
  db: Db,
  s: ChannelSearch,
  viewerId: number | null,
  page: Page,
  f: ChannelFilters,
  want: ChannelExtras,
): Promise<ChannelRead> {
  const conds: SQL[] = [canReadSql("c", viewerId), filterSql(f, viewerId)];
  if (s.q) {
    const p = likePattern(s.q);
    conds.push(sql`(${like(rawField(CHAT_SETTINGS, "name"), p)} OR ${like(rawField(CHAT_SETTINGS, "description.text"), p)})`);
  }
  if (s.categories.length) {
    const cats = rawField(CHAT_SETTINGS, "categories");
    const patterns = s.categories.map((cat) => likePattern(`"${cat}"`));
    conds.push(sql`EXISTS (SELECT 1 FROM ${jsonRows(patterns, "cp", "text")} WHERE lower(coalesce(${cats}, '')) LIKE cp.value ESCAPE '\\')`);
  }
  if (s.createdAfter !== undefined) conds.push(sql`c.created_at > ${s.createdAfter}`);
  if (s.createdBefore !== undefined) conds.push(sql`c.created_at < ${s.createdBefore}`);
  if (s.ownerId !== undefined) conds.push(sql`c.owner_id = ${s.ownerId}`);
  if (s.isPublic !== undefined) conds.push(sql`c.read_public = ${s.isPublic ? 1 : 0}`);
  if (s.fileId !== undefined) {
    conds.push(sql`(c.raw LIKE ${`%"file_id":"${s.fileId}"%`} OR c.raw LIKE ${`%"file_id":${s.fileId}}%`} OR c.raw LIKE ${`%"file_id":${s.fileId},%`})`);
  }
  if (s.rawTypes.length) conds.push(rawHasAny(s.rawTypes));
  const key = s.order === "id" ? "c.id" : s.order === "activity" ? ACTIVITY_KEY : "c.messages";
  const bounds = s.order === "popularity" ? sql`true` : pageBoundsSql(key, page);
  const { read } = await readChannels(
    db,
    sql`SELECT ${channelColumnsSql(viewerId)}, ${sql.raw(key)} AS pagination_id FROM ${channelFrom}
      WHERE ${sql.join(conds, sql` AND `)} AND ${bounds}
      ORDER BY ${sql.raw(key)} ${dir(page)}, c.id ${dir(page)} LIMIT ${page.limit + 1}`,
    viewerId,
    want,
  );
  return read;
}
