import { sql, type SQL } from "drizzle-orm";
import type { Db, Row } from "../db";
import type { Page } from "../http/pagination";
import { runBatch, type Statement } from "../db/batch";
import { pick, selectGroup, type Field } from "../db/compiled";
import { userViewColumns, type UserView, type ViewerSlot } from "./users";

// SQL shared by the channel, message and search stores: who may read a channel, the
// embedded user of a row, and how rows come back from raw D1 statements.

/** The channel type of private messages. */
export const PM_TYPE = "io.example.core.pm";

/**
 * A channel's activity as one integer: the time of its newest live message (of its creation when
 * it has none) in seconds, times 2^20, plus the low 20 bits of its id so keys tie only between
 * channels whose ids are 2^20 apart. Ordering and paginating the inbox by it keeps channels
 * without messages reachable (a message id would give them all the same key). Each subscription
 * keeps it (`subscriptions.activity`): set at subscribing, refreshed whenever the channel's
 * newest live message changes (`refreshActivitySql`).
 */
export const activityKeySql = (channelId: number | SQL) =>
  sql`coalesce((SELECT coalesce((SELECT am.created_at FROM messages am WHERE am.id = ak.recent_message_id), ak.created_at) * 1048576 + ak.id % 1048576
    FROM channels ak WHERE ak.id = ${channelId}), 0)`;

/**
 * 1 when `userId` has not read the channel up to its newest live message (their `channel:{id}`
 * marker is below it), else 0: `subscriptions.is_unread`, set at subscribing and refreshed when
 * the channel's newest live message or the user's marker of it changes.
 */
export const unreadFlagSql = (userId: number | SQL, channelId: number | SQL) =>
  sql`coalesce((SELECT CASE WHEN uc.recent_message_id IS NOT NULL AND uc.recent_message_id >
      coalesce((SELECT uf.position FROM markers uf WHERE uf.user_id = ${userId} AND uf.name = 'channel:' || uc.id), -1) THEN 1 ELSE 0 END
    FROM channels uc WHERE uc.id = ${channelId}), 0)`;

/** Moves the channel's subscriptions to its activity key and unread state (after its recent_message_id changed). */
export const refreshActivitySql = (channelId: number | SQL) =>
  sql`UPDATE subscriptions SET activity = ${activityKeySql(channelId)}, is_unread = ${unreadFlagSql(sql`subscriptions.user_id`, channelId)}
    WHERE channel_id = ${channelId}`;

/** Refreshes the user's unread state of the channel (after their `channel:{id}` marker moved). */
export const refreshUnreadSql = (userId: number, channelId: number | SQL) =>
  sql`UPDATE subscriptions SET is_unread = ${unreadFlagSql(userId, channelId)} WHERE user_id = ${userId} AND channel_id = ${channelId}`;

/**
 * A viewer id usable in SQL: 0 matches no user (ids start at 1). A statement compiled once per
 * shape passes its viewer as SQL (a placeholder), kept as it is.
 */
export const viewerParam = <V extends number | SQL>(viewerId: V | null): V | 0 => viewerId ?? 0;

/**
 * Whether the viewer may read channel `c` (an alias in the query): `read.public`, or for a
 * user `read.any_user`, `write.any_user`, ownership or any ACL row (full and write imply read).
 * The viewer is an id, or a column of the query (the subscriber of a stream subscription).
 */
export function canReadSql(alias: string, viewerId: number | SQL | null): SQL {
  const c = sql.raw(alias);
  if (viewerId == null) return sql`(${c}.read_public = 1)`;
  return sql`(${c}.read_public = 1 OR ${c}.read_any_user = 1 OR ${c}.write_any_user = 1 OR ${c}.owner_id = ${viewerId}
    OR EXISTS (SELECT 1 FROM channel_acl ra WHERE ra.user_id = ${viewerId} AND ra.channel_id = ${c}.id))`;
}

const USER_PREFIX = "u__";
/** Per isolate: the user columns' decoding list, the same for every request (built on first use). */
let userFields: Field[] | undefined;

/**
 * Columns of the user joined as `users` (unaliased), with the viewer's relationship flags,
 * aliased `u__<field>` so they can sit next to other columns; `readUser` decodes them.
 */
export function userColumnsSql(viewerId: ViewerSlot | SQL | null, presence = true): SQL {
  const columns = userViewColumns(viewerId);
  // Without `include_presence` no view shows it: not read (a presence probe per user, which D1 counts).
  if (!presence) columns.presence = sql<string | null>`CAST(NULL AS TEXT)`;
  return sql.join(selectGroup(columns, USER_PREFIX).select, sql`, `);
}

/** The embedded user of a raw row selected with `userColumnsSql`, or null when the join found none. */
export function readUser(row: Record<string, unknown>): UserView | null {
  if (row[USER_PREFIX + "id"] == null) return null;
  userFields ??= selectGroup(userViewColumns(null), USER_PREFIX).fields;
  return pick(row, userFields) as unknown as UserView;
}

export type { Row } from "../db";

/** Runs raw statements atomically in one round trip; the rows of each. */
export async function batchRows(db: Db, qs: Statement[]): Promise<Row[][]> {
  return (await runBatch(db, qs)).map((r) => r.results);
}

export const bool = (v: unknown) => v === 1 || v === true || v === "1";
export const num = (v: unknown) => (v == null ? null : Number(v));
export const json = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : (v ?? null));

/**
 * `pageBoundsSql` for a statement compiled once per shape: the bounds as placeholders `since` and
 * `before` (`pageBoundValues` gives their values), and the part of the shape's key they decide.
 */
export function pageBoundsShape(col: string, page: Page): { sql: SQL; key: string } {
  const key = (page.sinceId === undefined ? "" : page.sinceInclusive ? "S" : "s") + (page.beforeId === undefined ? "" : page.beforeInclusive ? "B" : "b");
  return { sql: pageBoundsSql(col, page, { since: sql.placeholder("since"), before: sql.placeholder("before") }), key };
}

/** The values of `pageBoundsShape`'s placeholders. */
export const pageBoundValues = (page: Page) => ({ since: page.sinceId, before: page.beforeId });

/**
 * Since/before bounds of a page on a pagination column (SQL text such as `m.id`, or SQL), `true`
 * without any. The bounds' values are the page's ids unless given (placeholders, for a statement
 * compiled once per shape).
 */
export function pageBoundsSql(
  col: string | SQL,
  page: { sinceId?: number; sinceInclusive?: boolean; beforeId?: number; beforeInclusive?: boolean },
  values: { since?: unknown; before?: unknown } = { since: page.sinceId, before: page.beforeId },
): SQL {
  const c = typeof col === "string" ? sql.raw(col) : col;
  const conds: SQL[] = [];
  if (page.sinceId !== undefined) conds.push(page.sinceInclusive ? sql`${c} >= ${values.since}` : sql`${c} > ${values.since}`);
  if (page.beforeId !== undefined) conds.push(page.beforeInclusive ? sql`${c} <= ${values.before}` : sql`${c} < ${values.before}`);
  return conds.length ? sql.join(conds, sql` AND `) : sql`true`;
}
