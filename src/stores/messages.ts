import { sql, type SQL } from "drizzle-orm";
import type { Page } from "../http/pagination";
import type { TextResult } from "../text";
import type { Facet } from "./message-facets";
import { userViewColumns, type UserView } from "./users";
import { knownAppsProbe, renderedApp } from "./app-refs";
import type { Db } from "../db";
import { allRows, boundShape, boundShapes, placeholder as v, type BoundQuery } from "../db/batch";
import { type ArrayPart, jsonArrayGroup, jsonArrayValues, pickFound } from "../db/compiled";
import { reserveEvent, reservedValues, reserveEventShape, type OutboxRef } from "../events/outbox";
import {
  PM_TYPE,
  batchRows,
  bool,
  canReadSql,
  json,
  num,
  pageBoundValues,
  pageBoundsShape,
  refreshActivitySql,
  readUser,
  userColumnsSql,
  type Row,
} from "./channel-sql";
import { channelByIdSql, readChannel, type ChannelRecord } from "./channels";
import { greatest, inList, int, jsonItem, jsonRows, jsonValues, lastId, text } from "../db/dialect";

/** A message with its author and client, as one query returns it. */
export interface MessageRecord {
  id: number;
  channelId: number;
  userId: number;
  threadId: number;
  replyTo: number | null;
  text: string | null;
  html: string | null;
  entities: TextResult["entities"] | null;
  isNsfw: boolean;
  isSticky: boolean;
  isDeleted: boolean;
  /** Who deleted it (the author, or a moderator of the channel); null while live or for older deletions. */
  deletedBy: number | null;
  raw: unknown;
  createdAt: number;
  replies: number;
  source: { clientId: string; name: string; url: string; deletedAt: number | null } | null;
  user: UserView | null;
  /**
   * The message's channel and the viewer's rights in it (single-message reads: delete and sticky
   * rights and scope): `read` whether the ACL lets the viewer read it, `write`, `full` (owner or
   * full ACL member).
   */
  channel?: { ownerId: number; type: string; readPublic: boolean; read: boolean; write: boolean; full: boolean };
  paginationId?: number;
}

/** A message's own values (and its client's), in the order `readMessage` reads them. */
const MESSAGE_VALUES = Object.fromEntries(
  "m.id m.channel_id m.user_id m.thread_id m.reply_to m.text m.html m.entities m.is_nsfw m.is_sticky m.is_deleted m.deleted_by m.raw m.created_at m.replies a.client_id a.name a.url a.deleted_at m.app_id"
    .split(" ")
    .map((c) => [c, sql.raw(c)]),
);
/** Where the author's fields sit in a message's array (the same for every viewer; built on first use). */
let authorPart: ArrayPart | undefined;

/**
 * The message `m` (joined with `users` and `apps a` by `messageJoins`) with its client and author
 * (with the viewer's relationship flags) as one JSON array cell, `message_json`, for `readMessage`:
 * ~50 columns cost the database client more than the array (docs/benchmark.md, "Post render rows").
 */
export function messageColumnsSql(viewerId: number | SQL | null): SQL {
  return sql`${jsonArrayGroup([MESSAGE_VALUES, userViewColumns(viewerId)]).select} AS message_json`;
}

/** The author and client of message `m`; a client the isolate knows is not read (stores/app-refs.ts). */
export const messageJoins = sql`LEFT JOIN users ON users.id = m.user_id LEFT JOIN apps a ON a.id = ${knownAppsProbe(sql`m.app_id`)}`;

export function readMessage(r: Row): MessageRecord {
  const v = jsonArrayValues(r.message_json) as unknown[];
  const [id, channelId, userId, threadId, replyTo, body, html, entities, isNsfw, isSticky, isDeleted, deletedBy, raw, createdAt, replies] = v;
  const [clientId, appName, appUrl, appDeletedAt, appId] = v.slice(15, 20);
  authorPart ??= jsonArrayGroup([MESSAGE_VALUES, userViewColumns(null)]).parts[1];
  return {
    id: Number(id),
    channelId: Number(channelId),
    userId: Number(userId),
    threadId: Number(threadId),
    replyTo: num(replyTo),
    text: (body as string | null) ?? null,
    html: (html as string | null) ?? null,
    entities: json(entities),
    isNsfw: bool(isNsfw),
    isSticky: bool(isSticky),
    isDeleted: bool(isDeleted),
    deletedBy: num(deletedBy),
    raw: json(raw),
    createdAt: Number(createdAt),
    replies: Number(replies),
    source: renderedApp(
      num(appId),
      clientId == null ? null : { clientId: String(clientId), name: String(appName), url: String(appUrl ?? ""), deletedAt: num(appDeletedAt) },
    ),
    user: pickFound(v, authorPart) as unknown as UserView | null,
    ...(r.channel_owner_id != null
      ? {
          channel: {
            ownerId: Number(r.channel_owner_id),
            type: String(r.channel_type),
            readPublic: bool(r.channel_read_public),
            read: bool(r.channel_read),
            write: bool(r.channel_write),
            full: bool(r.channel_full),
          },
        }
      : {}),
    ...(r.pagination_id != null ? { paginationId: Number(r.pagination_id) } : {}),
  };
}

/**
 * The channel with the viewer's flags and, when `replyTo` is given, that message if it is a
 * live message of the channel: what a message write checks first, in one round trip.
 */
export async function channelForWrite(
  db: Db,
  channelId: number,
  viewerId: number,
  replyTo?: number,
): Promise<{ channel?: ChannelRecord; parent?: { id: number; threadId: number } }> {
  // Compiled once (a message write's first read), bound per request.
  const channel = v("channel");
  const values = { channel: channelId, viewer: viewerId, replyTo };
  const stmts = [boundShape("channel-by-id:user", () => channelByIdSql(channel, v("viewer")), values)];
  if (replyTo !== undefined) {
    stmts.push(
      boundShape(
        "message-parent",
        () => sql`SELECT id, thread_id FROM messages WHERE id = ${v("replyTo")} AND channel_id = ${channel} AND is_deleted = 0`,
        values,
      ),
    );
  }
  const rows = await batchRows(db, stmts);
  const p = rows[1]?.[0];
  return {
    channel: rows[0][0] ? readChannel(rows[0][0]) : undefined,
    parent: p ? { id: Number(p.id), threadId: Number(p.thread_id) } : undefined,
  };
}

/** A live reply target in the private-message channel of `pmKey` (which may not exist yet). */
export async function pmParent(db: Db, pmKey: string, replyTo: number): Promise<{ id: number; threadId: number } | undefined> {
  const [p] = await allRows(
    db,
    sql`SELECT m.id, m.thread_id FROM messages m JOIN channels c ON c.id = m.channel_id
      WHERE m.id = ${replyTo} AND c.pm_key = ${pmKey} AND m.is_deleted = 0`,
  );
  return p ? { id: Number(p.id), threadId: Number(p.thread_id) } : undefined;
}

/** The id of the message inserted by this batch (AUTOINCREMENT: the largest); for writes batched with a create. */
export const NEW_MESSAGE_ID = lastId("messages");

export interface NewMessage {
  /** An existing channel, or the private-message channel of a participant set (created when missing). */
  target: { channelId: number } | { pm: { key: string; ownerId: number; destinations: number[] } };
  userId: number;
  appId: number;
  createdAt: number;
  /** Processed text; `objectIdToken` stands where the new id goes in link URLs and html. */
  text: TextResult;
  objectIdToken: string;
  replyTo?: { id: number; threadId: number };
  isNsfw: boolean;
  raw: unknown;
  /** A poll named in raw: kept only if it exists. */
  pollId: number | null;
  /** Files named in raw: facets `file` and `file_kind` for those that exist. */
  fileIds: number[];
  facets: [Facet, string][];
  /** Users subscribed unless they muted the channel (private messages: every participant). */
  autoSubscribe: number[];
  /** Further writes for the same batch; they may use NEW_MESSAGE_ID. */
  extraWrites?: SQL[];
  /** The message event's outbox row, reserved in the same batch (src/events/outbox.ts). */
  event?: OutboxRef;
}

export interface CreatedMessage {
  message: MessageRecord;
  /** The channel afterwards, as the author sees it (private messages only). */
  channel?: ChannelRecord;
  channelCreated: boolean;
  /** Users this message subscribed, with their user rows (for events). */
  newSubscribers: UserView[];
  /** The message event's sequence, when its outbox row was reserved. */
  seq?: number;
}

/**
 * Writes a message and everything that goes with it in one batch: the private-message channel
 * and its ACL when new, the row, `{object_id}` and thread id, search facets, the parent's reply
 * count, auto-subscriptions (skipping users who muted the channel) and the channel's counters;
 * then reads the message back.
 */
export async function createMessage(db: Db, m: NewMessage): Promise<CreatedMessage> {
  const pm = "pm" in m.target ? m.target.pm : null;
  const token = m.objectIdToken;
  const shape: WriteShape = {
    pm: pm !== null,
    reply: m.replyTo !== undefined,
    token: !m.replyTo || m.text.html.includes(token),
    facets: m.facets.length > 0 || m.fileIds.length > 0,
    poll: m.pollId != null,
    subscribe: m.autoSubscribe.length > 0,
  };
  const values = {
    channel: pm ? null : (m.target as { channelId: number }).channelId,
    pmKey: pm?.key,
    pmOwner: pm?.ownerId,
    destinations: pm ? JSON.stringify(pm.destinations) : null,
    user: m.userId,
    app: m.appId,
    createdAt: m.createdAt,
    thread: m.replyTo?.threadId ?? 0,
    replyId: m.replyTo?.id ?? null,
    text: m.text.text,
    html: m.text.html,
    entities: JSON.stringify(m.text.entities),
    nsfw: m.isNsfw ? 1 : 0,
    raw: m.raw == null ? null : JSON.stringify(m.raw),
    poll: m.pollId,
    token,
    facets: JSON.stringify(m.facets),
    files: JSON.stringify(m.fileIds),
    subscribers: JSON.stringify(m.autoSubscribe),
    ...(m.event ? reservedValues(m.event, m.createdAt) : {}),
  };
  // Compiled once per shape (flags from code), bound per message: drizzle's compile of this
  // batch cost more CPU than its database work.
  const writes = boundShapes(`message-create:${Object.values(shape).map(Number).join("")}`, () => createWrites(shape), values);
  const withChannel = shape.pm || shape.subscribe;
  const reads = boundShapes(`message-create-reads:${shape.pm}:${withChannel}:${!!m.event}`, () => createReads(shape.pm, withChannel, !!m.event), values);
  const extra = m.extraWrites ?? [];
  const stmts = [...writes, ...extra, ...reads];
  // The subscription insert comes before the channel update and activity refresh.
  const subIndex = writes.length - 3;
  const messageIndex = writes.length + extra.length + (m.event ? 1 : 0);
  const rows = await batchRows(db, stmts);
  const subscribed = new Set((shape.subscribe ? rows[subIndex] : []).map((r) => Number(r.user_id)));
  const users = (rows[messageIndex + 2] ?? []).map((r) => readUser(r)!).filter((u) => subscribed.has(u.id));
  return {
    message: readMessage(rows[messageIndex][0]),
    channel: rows[messageIndex + 1]?.[0] ? readChannel(rows[messageIndex + 1][0]) : undefined,
    channelCreated: pm ? rows[0].length > 0 : false,
    newSubscribers: users,
    seq: m.event ? Number(rows[messageIndex - 1][0].id) : undefined,
  };
}

/** What decides the statements of a message create (its shape). */
interface WriteShape {
  pm: boolean;
  reply: boolean;
  token: boolean;
  facets: boolean;
  poll: boolean;
  subscribe: boolean;
}

/** The channel of a message create: the private-message channel of `pmKey`, or `channel`. */
const createChannel = (pm: boolean) => (pm ? sql`(SELECT id FROM channels WHERE pm_key = ${v("pmKey")})` : v("channel"));

/**
 * The writes of a message create, in order: the private-message channel and its ACL when new,
 * the row, `{object_id}` and thread id, search facets, the parent's reply count,
 * auto-subscriptions (skipping users who muted the channel), the channel's counters and its
 * subscriptions' activity.
 */
function createWrites(s: WriteShape): SQL[] {
  const NEW = NEW_MESSAGE_ID;
  const chan = createChannel(s.pm);
  const stmts: SQL[] = [];
  if (s.pm) {
    stmts.push(
      sql`INSERT INTO channels (type, owner_id, app_id, pm_key, read_immutable, write_immutable, full_immutable, created_at)
        VALUES (${PM_TYPE}, ${v("pmOwner")}, ${v("app")}, ${v("pmKey")}, 1, 1, 1, ${v("createdAt")})
        ON CONFLICT (pm_key) DO NOTHING RETURNING id`,
      sql`INSERT INTO channel_acl (channel_id, user_id, level)
        SELECT c.id, j.value, 'write' FROM channels c, ${jsonRows(v("destinations"), "j")}
        WHERE c.pm_key = ${v("pmKey")} AND c.owner_id = ${v("pmOwner")}
        ON CONFLICT DO NOTHING`,
    );
  }
  stmts.push(
    sql`INSERT INTO messages (channel_id, user_id, app_id, thread_id, reply_to, text, html, entities, is_nsfw, raw, poll_id, created_at)
      VALUES (${chan}, ${v("user")}, ${v("app")}, ${v("thread")}, ${v("replyId")}, ${v("text")},
        ${v("html")}, ${v("entities")}, ${v("nsfw")},
        ${v("raw")},
        ${s.poll ? sql`(SELECT id FROM polls WHERE id = ${v("poll")} AND is_deleted = 0)` : null}, ${v("createdAt")})`,
  );
  if (s.token) {
    stmts.push(
      sql`UPDATE messages SET thread_id = CASE WHEN thread_id = 0 THEN id ELSE thread_id END,
        html = replace(html, ${v("token")}, CAST(id AS TEXT)), entities = replace(entities, ${v("token")}, CAST(id AS TEXT)) WHERE id = ${NEW}`,
    );
  }
  if (s.facets) {
    stmts.push(
      sql`INSERT INTO message_facets (message_id, facet, value)
        SELECT ${NEW}, ${jsonItem(sql`j.value`, 0)}, replace(${jsonItem(sql`j.value`, 1)}, ${text(v("token"))}, CAST(${NEW} AS TEXT))
          FROM ${jsonValues(v("facets"), "j")}
        UNION ALL SELECT ${NEW}, 'file', CAST(f.id AS TEXT) FROM files f
          WHERE f.id IN ${inList(v("files"))} AND f.is_deleted = 0
        UNION ALL SELECT ${NEW}, 'file_kind', f.kind FROM files f
          WHERE f.id IN ${inList(v("files"))} AND f.is_deleted = 0
        ON CONFLICT DO NOTHING`,
    );
  }
  if (s.reply) stmts.push(sql`UPDATE messages SET replies = replies + 1 WHERE id = ${v("replyId")}`);
  if (s.subscribe) {
    stmts.push(
      sql`INSERT INTO subscriptions (channel_id, user_id, created_at)
        SELECT ${chan}, j.value, ${int(v("createdAt"))} FROM ${jsonRows(v("subscribers"), "j")}
        WHERE NOT EXISTS (SELECT 1 FROM channel_mutes cm WHERE cm.user_id = j.value AND cm.channel_id = ${chan})
        ON CONFLICT (user_id, channel_id) DO NOTHING RETURNING user_id`,
    );
  }
  stmts.push(
    // greatest(): on Postgres two messages of one channel may update its row out of their ids' order.
    sql`UPDATE channels SET messages = messages + 1, recent_message_id = ${greatest(sql`coalesce(recent_message_id, 0)`, NEW)},
        last_message_id = ${greatest(sql`coalesce(last_message_id, 0)`, NEW)}
      ${s.subscribe ? sql`, subscribers = (SELECT count(*) FROM subscriptions WHERE channel_id = ${chan})` : sql``}
      WHERE id = ${chan}`,
    // The new message is the channel's newest: every subscription (auto-subscribed ones too) moves up.
    refreshActivitySql(chan),
  );
  return stmts;
}

/**
 * What a message create reads back after its writes (and any extra writes): the outbox row
 * (last among the writes: on Postgres it takes the outbox lock, held to commit), the message,
 * and with `withChannel` the channel and the auto-subscribed users.
 */
function createReads(pm: boolean, withChannel: boolean, event: boolean): SQL[] {
  const NEW = NEW_MESSAGE_ID;
  const stmts: SQL[] = [];
  if (event) stmts.push(reserveEventShape("message", NEW));
  stmts.push(sql`SELECT ${messageColumnsSql(v("user"))} FROM messages m ${messageJoins} WHERE m.id = ${NEW}`);
  if (withChannel) {
    stmts.push(channelByIdSql(createChannel(pm), v("user")));
    stmts.push(sql`SELECT ${userColumnsSql(null)} FROM users WHERE users.id IN ${inList(v("subscribers"))}`);
  }
  return stmts;
}

/** At most this many deletions are read for one page (the newest after `since_id`), as stores/post-changes. */
const DELETIONS_READ = 500;

/**
 * A page of a channel's messages plus the channel (to tell "no such channel" from "no
 * messages"), in one round trip; the messages are read only when the viewer may read the channel.
 * With `since_id`, `deletedIds` are the channel's messages deleted after message `since_id` was
 * created (`deleted_mark >= since_id`, an index range on messages_deleted): reference dynamic polling.
 */
export async function channelMessages(
  db: Db,
  channelId: number,
  viewerId: number | null,
  page: Page,
  opts: { includeDeleted: boolean; markerRead?: BoundQuery },
): Promise<{ channel?: ChannelRecord; messages: MessageRecord[]; markerRows?: Row[]; deletedIds: string[] }> {
  // Compiled once per shape (building and compiling it through drizzle cost more CPU than the
  // database read), bound per request by name.
  const viewer = viewerId == null ? null : v("viewer");
  const channel = v("channel");
  const bounds = pageBoundsShape("m.id", page);
  const values = { viewer: viewerId, channel: channelId, limit: page.limit + 1, ...pageBoundValues(page) };
  const who = viewer ? "user" : "anonymous";
  const readable = sql`EXISTS (SELECT 1 FROM channels c WHERE c.id = ${channel} AND ${canReadSql("c", viewer)})`;
  const deletions =
    page.sinceId === undefined
      ? []
      : [
          boundShape(
            `channel-deletions:${who}`,
            () => sql`SELECT m.id FROM messages m WHERE m.channel_id = ${channel} AND m.deleted_mark >= ${sql.placeholder("since")} AND ${readable}
              ORDER BY m.deleted_mark DESC LIMIT ${sql.raw(String(DELETIONS_READ))}`,
            values,
          ),
        ];
  const rows = await batchRows(db, [
    ...deletions,
    boundShape(`channel-by-id:${who}`, () => channelByIdSql(channel, viewer), values),
    boundShape(
      `channel-messages:${who}:${bounds.key}:${opts.includeDeleted ? "all" : "live"}:${page.newestFirst ? "desc" : "asc"}`,
      () => sql`SELECT ${messageColumnsSql(viewer)}, m.id AS pagination_id FROM messages m ${messageJoins}
        WHERE m.channel_id = ${channel} AND ${bounds.sql}
          ${opts.includeDeleted ? sql`` : sql`AND m.is_deleted = 0`}
          AND ${readable}
        ORDER BY m.id ${sql.raw(page.newestFirst ? "DESC" : "ASC")} LIMIT ${sql.placeholder("limit")}`,
      values,
    ),
    // The viewer's `channel:{id}` marker, for `meta.marker` (decisions §6), in the same round trip.
    ...(opts.markerRead ? [opts.markerRead] : []),
  ]);
  const deletedIds = deletions.length
    ? rows
        .shift()!
        .map((r) => String(r.id))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return { channel: rows[0][0] ? readChannel(rows[0][0]) : undefined, messages: rows[1].map(readMessage), markerRows: rows[2], deletedIds };
}

const readableMessage = (channelId: number, messageId: number, viewerId: number | null) =>
  sql`m.id = ${messageId} AND m.channel_id = ${channelId}
    AND EXISTS (SELECT 1 FROM channels c WHERE c.id = m.channel_id AND ${canReadSql("c", viewerId)})`;

/**
 * Columns of the channel `ch` of a message with the viewer's rights in it (`readMessage` reads
 * them into `channel`): owner, type, public flag, and whether the viewer may read, write, or has
 * full access (owner or `full` ACL member).
 */
export function messageChannelColumnsSql(viewerId: number | null): SQL {
  const v = viewerId ?? 0;
  const level = (levels: string) =>
    sql`EXISTS (SELECT 1 FROM channel_acl wa WHERE wa.channel_id = ch.id AND wa.user_id = ${v} AND wa.level IN ${sql.raw(levels)})`;
  return sql`ch.owner_id AS channel_owner_id, ch.type AS channel_type, ch.read_public AS channel_read_public,
    ${canReadSql("ch", viewerId)} AS channel_read,
    (ch.owner_id = ${v} OR ${level("('full')")}) AS channel_full,
    (ch.owner_id = ${v} ${viewerId != null ? sql`OR ch.write_any_user = 1` : sql``} OR ${level("('full', 'write')")}) AS channel_write`;
}

/**
 * A message (deleted ones too) of a channel the viewer can read, or that the viewer wrote (the
 * reference lets authors read and delete their messages after losing access), with the channel's
 * owner and the viewer's rights in it.
 */
export async function getMessage(db: Db, channelId: number, messageId: number, viewerId: number | null): Promise<MessageRecord | undefined> {
  const [row] = await allRows(
    db,
    sql`SELECT ${messageColumnsSql(viewerId)}, ${messageChannelColumnsSql(viewerId)}
      FROM messages m ${messageJoins} JOIN channels ch ON ch.id = m.channel_id
      WHERE m.id = ${messageId} AND m.channel_id = ${channelId}
        AND (${canReadSql("ch", viewerId)} OR m.user_id = ${viewerId ?? 0})`,
  );
  return row ? readMessage(row) : undefined;
}

/**
 * Deletes a message (the row stays, flagged, unstuck, with who deleted it; its text leaves the
 * search index by trigger and its facets go), fixing the channel's counters and the parent's
 * reply count, in one batch. Counters move only if the message was still live when the batch ran.
 */
export async function deleteMessage(
  db: Db,
  msg: MessageRecord,
  viewerId: number,
  event?: { ref: OutboxRef; at: number },
): Promise<{ message: MessageRecord; seq?: number }> {
  const live = sql`EXISTS (SELECT 1 FROM messages WHERE id = ${msg.id} AND is_deleted = 0)`;
  const stmts: SQL[] = [
    sql`UPDATE channels SET messages = ${greatest(sql`messages - 1`, sql`0`)},
        recent_message_id = (SELECT max(id) FROM messages WHERE channel_id = ${msg.channelId} AND is_deleted = 0 AND id <> ${msg.id})
      WHERE id = ${msg.channelId} AND ${live}`,
    refreshActivitySql(msg.channelId),
  ];
  if (msg.replyTo != null) stmts.push(sql`UPDATE messages SET replies = ${greatest(sql`replies - 1`, sql`0`)} WHERE id = ${msg.replyTo} AND ${live}`);
  stmts.push(
    // deleted_mark: the newest message id now, for polls' meta.deleted_ids (see channelMessages).
    sql`UPDATE messages SET is_deleted = 1, is_sticky = 0, deleted_by = ${viewerId}, deleted_mark = (SELECT max(dm.id) FROM messages dm)
      WHERE id = ${msg.id} AND is_deleted = 0`,
    sql`DELETE FROM message_facets WHERE message_id = ${msg.id}`,
  );
  // The event only if this batch deleted it (deleted_by/deleted_mark are set by this batch alone when it did).
  if (event) {
    const deletedHere = sql`EXISTS (SELECT 1 FROM messages WHERE id = ${msg.id} AND deleted_mark = (SELECT max(dm.id) FROM messages dm) AND deleted_by = ${viewerId})`;
    stmts.push(reserveEvent("message", { ...event.ref, id: msg.id, isDeleted: true }, event.at, undefined, deletedHere));
  }
  stmts.push(sql`SELECT ${messageColumnsSql(viewerId)} FROM messages m ${messageJoins} WHERE m.id = ${msg.id}`);
  const rows = await batchRows(db, stmts);
  return { message: readMessage(rows[rows.length - 1][0]), seq: event ? (num(rows[rows.length - 2][0]?.id) ?? undefined) : undefined };
}

export const REPORT_REASONS = ["account_type", "nsfw", "soliciting", "user_abuse"] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];

/**
 * Stores a report of a live message the reporter can read (the same reporter, message and
 * reason are stored once); returns the message, or undefined (nothing stored) when it is not
 * readable, not in that channel or deleted.
 */
export async function reportMessage(
  db: Db,
  r: { channelId: number; messageId: number; reporterId: number; reason: ReportReason; at: number },
): Promise<MessageRecord | undefined> {
  const target = sql`${readableMessage(r.channelId, r.messageId, r.reporterId)} AND m.is_deleted = 0`;
  const rows = await batchRows(db, [
    sql`INSERT INTO reports (channel_id, message_id, reporter_id, reason, created_at)
      SELECT ${r.channelId}, ${r.messageId}, ${r.reporterId}, ${r.reason}, ${r.at}
      WHERE EXISTS (SELECT 1 FROM messages m WHERE ${target})
        AND NOT EXISTS (SELECT 1 FROM reports WHERE message_id = ${r.messageId} AND reporter_id = ${r.reporterId} AND reason = ${r.reason})`,
    sql`SELECT ${messageColumnsSql(r.reporterId)} FROM messages m ${messageJoins} WHERE ${target}`,
  ]);
  return rows[1][0] ? readMessage(rows[1][0]) : undefined;
}

// What messages (and posts) are indexed by, kept importable from here.
export { messageFacets, normalizeDomain, rawAttachments } from "./message-facets";
