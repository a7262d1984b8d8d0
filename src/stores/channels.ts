import { sql, type SQL } from "drizzle-orm";
import type { UserView } from "./users";
import type { Db } from "../db";
import { allRows } from "../db/batch";
import { reservationsSql, seqsBefore, type Reservation } from "../events/outbox";
import { activityKeySql, unreadFlagSql, batchRows, bool, canReadSql, json, num, PM_TYPE, readUser, userColumnsSql, viewerParam, type Row } from "./channel-sql";
import { inList, int, joinedText, jsonItem, jsonObject, jsonValues, lastId } from "../db/dialect";
import type { MarkerRecord } from "./markers";

export type AclLevel = "full" | "write" | "read";
export const ACL_LEVELS: readonly AclLevel[] = ["full", "write", "read"];

/** ACL flags of a channel as stored (decisions §4 `acl`, without the member lists). */
export interface AclFlags {
  readPublic: boolean;
  readAnyUser: boolean;
  writeAnyUser: boolean;
  readImmutable: boolean;
  writeImmutable: boolean;
  fullImmutable: boolean;
}

/** A channel with its ACL members and the viewer's flags, as one query returns it. */
export interface ChannelRecord extends AclFlags {
  id: number;
  type: string;
  ownerId: number;
  appId: number;
  pmKey: string | null;
  isActive: boolean;
  raw: unknown;
  createdAt: number;
  messages: number;
  subscribers: number;
  recentMessageId: number | null;
  /** The newest message when it is deleted (newer than `recentMessageId`), else null. */
  recentDeletedMessageId: number | null;
  /** Whether a live message of the channel is sticky. */
  hasStickyMessages: boolean;
  /** Explicit ACL members per level (the owner is implicit). */
  acl: Record<AclLevel, number[]>;
  youSubscribed: boolean;
  youMuted: boolean;
  /** Whether the viewer's `channel:{id}` marker is below the newest message; undefined without a user viewer. */
  hasUnread?: boolean;
  /** The viewer's `channel:{id}` marker: null when unset; undefined without a user viewer. */
  marker?: MarkerRecord | null;
  owner: UserView | null;
  /** Set by lists: the id the list paginates by (subscription or mute id). */
  paginationId?: number;
}

/**
 * What the viewer may do in a channel: full (edit) ⊃ write ⊃ read. A private-message channel
 * has no full access, not even for its creator: every participant is in `write`
 * (how-to/private-messages.md), so the creator is one participant among the others.
 */
export function channelAccess(ch: ChannelRecord, viewerId: number | null) {
  const v = viewerId;
  const full = v != null && ch.type !== PM_TYPE && (ch.ownerId === v || ch.acl.full.includes(v));
  const write = full || (v != null && (ch.writeAnyUser || ch.acl.write.includes(v)));
  const read = write || ch.readPublic || (v != null && (ch.readAnyUser || ch.acl.read.includes(v)));
  return { full, write, read };
}

/** Participants of a private-message channel: its `pm_key` is their sorted ids. */
export const pmParticipants = (pmKey: string) => pmKey.split(",").map(Number);
export const pmKeyOf = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b).join(",");

/**
 * Columns of a channel `c` (joined with its owner as `users`) for `readChannel`. `walked`: the list
 * walks the viewer's own subscriptions or mutes, so that flag holds without a probe (a row read
 * per channel on D1).
 */
export function channelColumnsSql(viewerId: number | SQL | null, walked?: "subscriptions" | "mutes"): SQL {
  const v = viewerParam(viewerId);
  // has_unread (api.md "Stream markers"): read only when the viewer's `channel:{id}` marker is at
  // or above the newest message; no marker and any message means unread. A primary-key lookup.
  const you =
    viewerId == null
      ? sql`0 AS you_subscribed, 0 AS you_muted, NULL AS has_unread`
      : sql`${walked === "subscriptions" ? sql`1` : sql`EXISTS (SELECT 1 FROM subscriptions ys WHERE ys.user_id = ${v} AND ys.channel_id = c.id)`} AS you_subscribed,
        ${walked === "mutes" ? sql`1` : sql`EXISTS (SELECT 1 FROM channel_mutes ym WHERE ym.user_id = ${v} AND ym.channel_id = c.id)`} AS you_muted,
        (c.recent_message_id IS NOT NULL AND c.recent_message_id >
          coalesce((SELECT hm.position FROM markers hm WHERE hm.user_id = ${v} AND hm.name = 'channel:' || c.id), -1)) AS has_unread,
        (SELECT ${jsonObject(
          sql`'name'`,
          sql`mk.name`,
          sql`'position'`,
          sql`mk.position`,
          sql`'last_read_id'`,
          sql`mk.last_read_id`,
          sql`'percentage'`,
          sql`mk.percentage`,
          sql`'version'`,
          sql`mk.version`,
          sql`'updated_at'`,
          sql`mk.updated_at`,
        )}
          FROM markers mk WHERE mk.user_id = ${v} AND mk.name = 'channel:' || c.id) AS marker_json`;
  return sql`c.id, c.type, c.owner_id, c.app_id, c.pm_key, c.read_public, c.read_any_user, c.write_any_user,
    c.read_immutable, c.write_immutable, c.full_immutable, c.is_active, c.raw, c.created_at, c.messages,
    c.subscribers, c.recent_message_id,
    (SELECT ${joinedText(sql`ca.level || ':' || ca.user_id`)} FROM channel_acl ca WHERE ca.channel_id = c.id) AS acl_members,
    EXISTS (SELECT 1 FROM messages sm WHERE sm.channel_id = c.id AND sm.is_sticky = 1 AND sm.is_deleted = 0) AS has_sticky_messages,
    CASE WHEN c.last_message_id > coalesce(c.recent_message_id, 0) THEN c.last_message_id END AS recent_deleted_message_id,
    ${you}, ${userColumnsSql(viewerId)}`;
}

export const ownerJoin = sql`LEFT JOIN users ON users.id = c.owner_id`;
export const channelFrom = sql`channels c ${ownerJoin}`;

function readMarkerJson(v: unknown): MarkerRecord | null {
  const m = json(v) as Record<string, unknown> | null;
  if (!m) return null;
  return {
    name: String(m.name),
    position: Number(m.position),
    lastReadId: Number(m.last_read_id),
    percentage: Number(m.percentage),
    version: String(m.version),
    updatedAt: Number(m.updated_at),
  };
}

export function readChannel(r: Row): ChannelRecord {
  const acl: Record<AclLevel, number[]> = { full: [], write: [], read: [] };
  for (const m of String(r.acl_members ?? "")
    .split(",")
    .filter(Boolean)) {
    const [level, id] = m.split(":");
    acl[level as AclLevel]?.push(Number(id));
  }
  // A PM channel's creator is stored as its owner only; the reference lists them in `write`
  // with the other participants.
  if (r.type === PM_TYPE && r.owner_id != null && !acl.write.includes(Number(r.owner_id))) acl.write.push(Number(r.owner_id));
  for (const l of ACL_LEVELS) acl[l].sort((a, b) => a - b);
  return {
    id: Number(r.id),
    type: String(r.type),
    ownerId: Number(r.owner_id),
    appId: Number(r.app_id),
    pmKey: (r.pm_key as string | null) ?? null,
    readPublic: bool(r.read_public),
    readAnyUser: bool(r.read_any_user),
    writeAnyUser: bool(r.write_any_user),
    readImmutable: bool(r.read_immutable),
    writeImmutable: bool(r.write_immutable),
    fullImmutable: bool(r.full_immutable),
    isActive: bool(r.is_active),
    raw: json(r.raw),
    createdAt: Number(r.created_at),
    messages: Number(r.messages),
    subscribers: Number(r.subscribers),
    recentMessageId: num(r.recent_message_id),
    recentDeletedMessageId: num(r.recent_deleted_message_id),
    hasStickyMessages: bool(r.has_sticky_messages),
    acl,
    youSubscribed: bool(r.you_subscribed),
    youMuted: bool(r.you_muted),
    ...(r.has_unread != null ? { hasUnread: bool(r.has_unread), marker: readMarkerJson(r.marker_json) } : {}),
    owner: readUser(r),
    ...(r.pagination_id != null ? { paginationId: Number(r.pagination_id) } : {}),
  };
}

/** A channel by id with the viewer's flags (whether the viewer may read it is `channelAccess`). */
export function channelByIdSql(id: number | SQL, viewerId: number | SQL | null): SQL {
  return sql`SELECT ${channelColumnsSql(viewerId)} FROM ${channelFrom} WHERE c.id = ${id}`;
}

export async function getChannel(db: Db, id: number, viewerId: number | null): Promise<ChannelRecord | undefined> {
  const [row] = await allRows(db, channelByIdSql(id, viewerId));
  return row ? readChannel(row) : undefined;
}

/** The id of the channel inserted last in this batch (AUTOINCREMENT: the largest). */
const NEW_CHANNEL_ID = lastId("channels");

/** Inserts ACL member rows `[level, userId]` for a channel id expression. */
function aclInsertSql(channelId: number | SQL, members: [AclLevel, number][]): SQL {
  return sql`INSERT INTO channel_acl (channel_id, user_id, level)
    SELECT ${channelId}, CAST(${jsonItem(sql`j.value`, 1)} AS BIGINT), ${jsonItem(sql`j.value`, 0)} FROM ${jsonValues(members, "j")} WHERE true
    ON CONFLICT DO NOTHING`;
}

const membersOf = (acl: Partial<Record<AclLevel, number[]>>): [AclLevel, number][] =>
  ACL_LEVELS.flatMap((l) => (acl[l] ?? []).map((id): [AclLevel, number] => [l, id]));

const recountSubscribers = (channelId: number | SQL) =>
  sql`UPDATE channels SET subscribers = (SELECT count(*) FROM subscriptions WHERE channel_id = ${channelId}) WHERE id = ${channelId}`;

export interface NewChannel extends AclFlags {
  type: string;
  ownerId: number;
  appId: number;
  acl: Record<AclLevel, number[]>;
  raw: unknown;
  createdAt: number;
}

/** Creates a channel with its ACL and subscribes its owner, in one batch; returns it as the owner sees it. */
export async function createChannel(db: Db, ch: NewChannel, events: Reservation[] = []): Promise<Reserved<ChannelRecord>> {
  const f = (b: boolean) => (b ? 1 : 0);
  const rows = await batchRows(db, [
    sql`INSERT INTO channels (type, owner_id, app_id, read_public, read_any_user, write_any_user, read_immutable,
        write_immutable, full_immutable, raw, created_at, subscribers)
      VALUES (${ch.type}, ${ch.ownerId}, ${ch.appId}, ${f(ch.readPublic)}, ${f(ch.readAnyUser)}, ${f(ch.writeAnyUser)},
        ${f(ch.readImmutable)}, ${f(ch.writeImmutable)}, ${f(ch.fullImmutable)},
        ${ch.raw == null ? null : JSON.stringify(ch.raw)}, ${ch.createdAt}, 1)`,
    aclInsertSql(NEW_CHANNEL_ID, membersOf(ch.acl)),
    // A new channel has no messages: read (is_unread 0).
    sql`INSERT INTO subscriptions (channel_id, user_id, created_at, activity) VALUES (${NEW_CHANNEL_ID}, ${ch.ownerId}, ${ch.createdAt}, ${activityKeySql(NEW_CHANNEL_ID)})`,
    ...reservationsSql(events.map((e) => ({ ...e, objectId: NEW_CHANNEL_ID }))),
    channelByIdSql(NEW_CHANNEL_ID, ch.ownerId),
  ]);
  return { value: readChannel(rows[rows.length - 1][0]), seqs: seqsBefore(rows, events.length) };
}

export interface ChannelChanges {
  flags: Partial<AclFlags>;
  /** ACL levels whose member lists are replaced. */
  acl: Partial<Record<AclLevel, number[]>>;
  /** undefined: unchanged; null: removed. */
  raw?: unknown;
}

const FLAG_COLUMNS: Record<keyof AclFlags, string> = {
  readPublic: "read_public",
  readAnyUser: "read_any_user",
  writeAnyUser: "write_any_user",
  readImmutable: "read_immutable",
  writeImmutable: "write_immutable",
  fullImmutable: "full_immutable",
};

/** Applies changes to a channel's ACL and raw in one batch; returns the channel as the viewer sees it. */
export async function updateChannel(
  db: Db,
  id: number,
  changes: ChannelChanges,
  viewerId: number,
  events: Reservation[] = [],
): Promise<Reserved<ChannelRecord>> {
  const sets: SQL[] = [];
  for (const [k, v] of Object.entries(changes.flags) as [keyof AclFlags, boolean | undefined][]) {
    if (v !== undefined) sets.push(sql`${sql.raw(FLAG_COLUMNS[k])} = ${v ? 1 : 0}`);
  }
  if (changes.raw !== undefined) sets.push(sql`raw = ${changes.raw === null ? null : JSON.stringify(changes.raw)}`);
  const stmts: SQL[] = [];
  if (sets.length) stmts.push(sql`UPDATE channels SET ${sql.join(sets, sql`, `)} WHERE id = ${id}`);
  for (const level of ACL_LEVELS) {
    const ids = changes.acl[level];
    if (!ids) continue;
    stmts.push(sql`DELETE FROM channel_acl WHERE channel_id = ${id} AND level = ${level}`);
    if (ids.length)
      stmts.push(
        aclInsertSql(
          id,
          ids.map((u): [AclLevel, number] => [level, u]),
        ),
      );
  }
  stmts.push(...reservationsSql(events), channelByIdSql(id, viewerId));
  const rows = await batchRows(db, stmts);
  return { value: readChannel(rows[rows.length - 1][0]), seqs: seqsBefore(rows, events.length) };
}

/** Result of a subscription change: the channel afterwards and whether anything changed. */
export interface SubscriptionChange {
  channel: ChannelRecord;
  changed: boolean;
  /** The sequences of the events reserved in the batch (undefined: not written). */
  seqs: (number | undefined)[];
}

/** A record and the sequences of the events its write reserved (src/events/outbox.ts). */
export interface Reserved<T> {
  value: T;
  seqs: (number | undefined)[];
}

/**
 * Whether the user is subscribed, for a subscription event's reservation at the end of its batch.
 * The caller reserves only when its read before the write saw the other state, so the event is
 * written when the state changed; two concurrent identical requests may both write it (a repeated
 * event, never a lost one).
 */
const isSubscribed = (channelId: number, userId: number) => sql`EXISTS (SELECT 1 FROM subscriptions WHERE user_id = ${userId} AND channel_id = ${channelId})`;

/**
 * Subscribes the user (the user's own act: it also lifts a mute, so "muted" always means
 * "not subscribed"); one batch.
 */
export async function subscribe(db: Db, channelId: number, userId: number, at: number, events: Reservation[] = []): Promise<SubscriptionChange> {
  const rows = await batchRows(db, [
    sql`INSERT INTO subscriptions (channel_id, user_id, created_at, activity, is_unread)
      VALUES (${channelId}, ${userId}, ${at}, ${activityKeySql(channelId)}, ${unreadFlagSql(userId, channelId)})
      ON CONFLICT (user_id, channel_id) DO NOTHING RETURNING id`,
    sql`DELETE FROM channel_mutes WHERE user_id = ${userId} AND channel_id = ${channelId}`,
    recountSubscribers(channelId),
    ...reservationsSql(events.map((e) => ({ ...e, when: isSubscribed(channelId, userId) }))),
    channelByIdSql(channelId, userId),
  ]);
  return { changed: rows[0].length > 0, channel: readChannel(rows[rows.length - 1][0]), seqs: seqsBefore(rows, events.length) };
}

/** Unsubscribes the user and deletes their `channel:{id}` marker (the reference's rule), in one batch. */
export async function unsubscribe(db: Db, channelId: number, userId: number, events: Reservation[] = []): Promise<SubscriptionChange> {
  const rows = await batchRows(db, [
    sql`DELETE FROM subscriptions WHERE user_id = ${userId} AND channel_id = ${channelId} RETURNING id`,
    sql`DELETE FROM markers WHERE user_id = ${userId} AND name = ${`channel:${channelId}`}`,
    recountSubscribers(channelId),
    ...reservationsSql(events.map((e) => ({ ...e, when: sql`NOT ${isSubscribed(channelId, userId)}` }))),
    channelByIdSql(channelId, userId),
  ]);
  return { changed: rows[0].length > 0, channel: readChannel(rows[rows.length - 1][0]), seqs: seqsBefore(rows, events.length) };
}

/**
 * Deactivates a channel its owner names (irreversible): `is_active` 0 and every subscription
 * removed, in one batch guarded by ownership. Returns the channel as the owner now sees it.
 */
export async function deactivateChannel(db: Db, channelId: number, ownerId: number, events: Reservation[] = []): Promise<Reserved<ChannelRecord>> {
  const owned = sql`EXISTS (SELECT 1 FROM channels o WHERE o.id = ${channelId} AND o.owner_id = ${ownerId})`;
  const rows = await batchRows(db, [
    sql`UPDATE channels SET is_active = 0 WHERE id = ${channelId} AND owner_id = ${ownerId}`,
    sql`DELETE FROM subscriptions WHERE channel_id = ${channelId} AND ${owned}`,
    recountSubscribers(channelId),
    ...reservationsSql(events.map((e) => ({ ...e, when: owned }))),
    channelByIdSql(channelId, ownerId),
  ]);
  return { value: readChannel(rows[rows.length - 1][0]), seqs: seqsBefore(rows, events.length) };
}

/**
 * Gives a channel to another user (guarded by the current owner): the new owner leaves the ACL
 * lists (the owner is implicit) and the old owner becomes a full-access member; one batch.
 */
export async function changeOwner(
  db: Db,
  channelId: number,
  ownerId: number,
  newOwnerId: number,
  events: Reservation[] = [],
): Promise<Reserved<ChannelRecord>> {
  const owned = sql`EXISTS (SELECT 1 FROM channels o WHERE o.id = ${channelId} AND o.owner_id = ${ownerId})`;
  const rows = await batchRows(db, [
    sql`DELETE FROM channel_acl WHERE channel_id = ${channelId} AND user_id IN ${inList([ownerId, newOwnerId])} AND ${owned}`,
    sql`INSERT INTO channel_acl (channel_id, user_id, level) SELECT ${int(channelId)}, ${int(ownerId)}, 'full' WHERE ${owned}
      ON CONFLICT DO NOTHING`,
    sql`UPDATE channels SET owner_id = ${newOwnerId} WHERE id = ${channelId} AND owner_id = ${ownerId}`,
    // Written if the owner changed (the old owner now holds full access, the new one owns it).
    ...reservationsSql(events.map((e) => ({ ...e, when: sql`EXISTS (SELECT 1 FROM channels o WHERE o.id = ${channelId} AND o.owner_id = ${newOwnerId})` }))),
    channelByIdSql(channelId, ownerId),
  ]);
  return { value: readChannel(rows[rows.length - 1][0]), seqs: seqsBefore(rows, events.length) };
}

const readableChannel = (channelId: number, viewerId: number) =>
  sql`EXISTS (SELECT 1 FROM channels c WHERE c.id = ${channelId} AND ${canReadSql("c", viewerId)})`;

/**
 * Mutes a channel the user can read and unsubscribes them, in one batch guarded by the read
 * ACL (nothing is written for an unreadable channel: the result is undefined → 404).
 * `unsubscribed` tells whether a subscription ended.
 */
export async function mute(db: Db, channelId: number, userId: number, at: number): Promise<{ channel: ChannelRecord; unsubscribed: boolean } | undefined> {
  const rows = await batchRows(db, [
    sql`INSERT INTO channel_mutes (channel_id, user_id, created_at)
      SELECT ${channelId}, ${userId}, ${at} WHERE ${readableChannel(channelId, userId)}
      ON CONFLICT (user_id, channel_id) DO NOTHING`,
    sql`DELETE FROM subscriptions WHERE user_id = ${userId} AND channel_id = ${channelId}
      AND ${readableChannel(channelId, userId)} RETURNING id`,
    recountSubscribers(channelId),
    sql`SELECT ${channelColumnsSql(userId)} FROM ${channelFrom} WHERE c.id = ${channelId} AND ${canReadSql("c", userId)}`,
  ]);
  const row = rows[3][0];
  return row ? { channel: readChannel(row), unsubscribed: rows[1].length > 0 } : undefined;
}

/** Lifts a mute (does not resubscribe); undefined when the channel is not readable. */
export async function unmute(db: Db, channelId: number, userId: number): Promise<ChannelRecord | undefined> {
  const rows = await batchRows(db, [
    sql`DELETE FROM channel_mutes WHERE user_id = ${userId} AND channel_id = ${channelId} AND ${readableChannel(channelId, userId)}`,
    sql`SELECT ${channelColumnsSql(userId)} FROM ${channelFrom} WHERE c.id = ${channelId} AND ${canReadSql("c", userId)}`,
  ]);
  const row = rows[1][0];
  return row ? readChannel(row) : undefined;
}

/**
 * Resolves user references (integer ids or `@username`) in one query: the id of each found
 * reference, keyed by the reference as given; blocked flags tell whether the user blocks `viewerId`.
 */
export async function resolveUserRefs(db: Db, refs: string[], viewerId: number): Promise<Map<string, { id: number; blocksViewer: boolean }>> {
  const out = new Map<string, { id: number; blocksViewer: boolean }>();
  if (!refs.length) return out;
  const ids = refs.filter((r) => /^\d+$/.test(r)).map(Number);
  const names = refs.filter((r) => r.startsWith("@")).map((r) => r.slice(1).toLowerCase());
  const rows = await allRows(
    db,
    sql`SELECT u.id, u.username,
        EXISTS (SELECT 1 FROM user_blocks b WHERE b.user_id = u.id AND b.blocked_id = ${viewerId}) AS blocks_viewer
      FROM users u
      WHERE (u.id IN ${inList(ids)} OR u.username IN ${inList(names, "text")})
        AND u.is_disabled = 0`,
  );
  for (const r of rows) {
    const found = { id: Number(r.id), blocksViewer: bool(r.blocks_viewer) };
    out.set(String(r.id), found);
    out.set("@" + String(r.username), found);
  }
  return out;
}
