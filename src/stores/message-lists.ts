import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db";
import { allRows } from "../db/batch";
import { inList } from "../db/dialect";
import type { Page } from "../http/pagination";
import { batchRows, canReadSql, pageBoundsSql, type Row } from "./channel-sql";
import { channelByIdSql, readChannel, type ChannelRecord } from "./channels";
import { messageChannelColumnsSql, messageColumnsSql, messageJoins, readMessage, type MessageRecord } from "./messages";

// Lists of messages beyond a channel's own stream (lookup by ids, the caller's messages, a
// thread, a channel's sticky messages) and the sticky flag.

export interface ListOptions {
  /** include_deleted (default 1): deleted messages are listed without content. */
  includeDeleted: boolean;
}

const liveOnly = (o: ListOptions) => (o.includeDeleted ? sql`` : sql`AND m.is_deleted = 0`);
const direction = (page: Page) => sql.raw(page.newestFirst ? "DESC" : "ASC");

/** Readable to the viewer: the channel's ACL lets them read it, or they wrote the message. */
const readableSql = (viewerId: number | null) => sql`(${canReadSql("ch", viewerId)} OR m.user_id = ${viewerId ?? 0})`;

/** Messages by id that the viewer may read, in the order asked (unknown and unreadable ids are skipped). */
export async function messagesByIds(db: Db, ids: number[], viewerId: number | null, o: ListOptions): Promise<MessageRecord[]> {
  if (!ids.length) return [];
  const rows = await allRows(
    db,
    sql`SELECT ${messageColumnsSql(viewerId)} FROM messages m ${messageJoins} JOIN channels ch ON ch.id = m.channel_id
      WHERE m.id IN ${inList(ids)} AND ${readableSql(viewerId)} ${liveOnly(o)}`,
  );
  const byId = new Map(rows.map(readMessage).map((m) => [m.id, m]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/**
 * A page of the messages a user wrote (pagination id = message id), in any channel, optionally
 * only in channels of `types` (a token whose `messages` scopes are all narrowed to types).
 */
export async function userMessages(db: Db, userId: number, page: Page, o: ListOptions & { types: string[] | null }): Promise<MessageRecord[]> {
  const typed = o.types ? sql`AND EXISTS (SELECT 1 FROM channels ch WHERE ch.id = m.channel_id AND ch.type IN ${inList(o.types, "text")})` : sql``;
  const rows = await allRows(
    db,
    sql`SELECT ${messageColumnsSql(userId)}, m.id AS pagination_id FROM messages m ${messageJoins}
      WHERE m.user_id = ${userId} AND ${pageBoundsSql("m.id", page)} ${liveOnly(o)} ${typed}
      ORDER BY m.id ${direction(page)} LIMIT ${page.limit + 1}`,
  );
  return rows.map(readMessage);
}

/** A channel (to tell "no such channel" from an empty list) and a page of its messages matching `where`. */
async function channelList(
  db: Db,
  channelId: number,
  viewerId: number | null,
  page: Page,
  o: ListOptions,
  where: SQL,
  extra: SQL[] = [],
): Promise<{ channel?: ChannelRecord; messages: MessageRecord[]; extra: Row[][] }> {
  const rows = await batchRows(db, [
    channelByIdSql(channelId, viewerId),
    sql`SELECT ${messageColumnsSql(viewerId)}, m.id AS pagination_id FROM messages m ${messageJoins}
      WHERE m.channel_id = ${channelId} AND ${where} AND ${pageBoundsSql("m.id", page)} ${liveOnly(o)}
        AND EXISTS (SELECT 1 FROM channels ch WHERE ch.id = ${channelId} AND ${canReadSql("ch", viewerId)})
      ORDER BY m.id ${direction(page)} LIMIT ${page.limit + 1}`,
    ...extra,
  ]);
  return { channel: rows[0][0] ? readChannel(rows[0][0]) : undefined, messages: rows[1].map(readMessage), extra: rows.slice(2) };
}

/**
 * The thread of a message: the channel, whether the message exists in it, and a page of the
 * messages sharing its `thread_id` (pagination id = message id), in one round trip.
 */
export async function threadMessages(
  db: Db,
  channelId: number,
  messageId: number,
  viewerId: number | null,
  page: Page,
  o: ListOptions,
): Promise<{ channel?: ChannelRecord; found: boolean; messages: MessageRecord[] }> {
  const res = await channelList(
    db,
    channelId,
    viewerId,
    page,
    o,
    sql`m.thread_id = (SELECT t.thread_id FROM messages t WHERE t.id = ${messageId} AND t.channel_id = ${channelId})`,
    [sql`SELECT id FROM messages WHERE id = ${messageId} AND channel_id = ${channelId}`],
  );
  return { channel: res.channel, found: res.extra[0].length > 0, messages: res.messages };
}

/** A channel and a page of its sticky messages (pagination id = message id), in one round trip. */
export async function stickyMessages(db: Db, channelId: number, viewerId: number | null, page: Page, o: ListOptions) {
  const { channel, messages } = await channelList(db, channelId, viewerId, page, o, sql`m.is_sticky = 1`);
  return { channel, messages };
}

/**
 * Sets or clears the sticky flag of a live message and reads it back (with the viewer's rights
 * in its channel), in one batch. A deleted message is never stuck.
 */
export async function setSticky(db: Db, msg: MessageRecord, viewerId: number, sticky: boolean): Promise<MessageRecord> {
  const rows = await batchRows(db, [
    sql`UPDATE messages SET is_sticky = ${sql.raw(sticky ? "1" : "0")} WHERE id = ${msg.id} AND is_deleted = 0`,
    sql`SELECT ${messageColumnsSql(viewerId)}, ${messageChannelColumnsSql(viewerId)}
      FROM messages m ${messageJoins} JOIN channels ch ON ch.id = m.channel_id WHERE m.id = ${msg.id}`,
  ]);
  return readMessage(rows[1][0]);
}
