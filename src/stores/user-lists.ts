import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db";
import { allRows, mixedBatch } from "../db/batch";
import { jsonRows } from "../db/dialect";
import type { Page } from "../http/pagination";
import { pageBoundsSql, readUser, userColumnsSql } from "./channel-sql";
import type { UserView } from "./users";

// Lists of users: following, followers, muted, blocked, suggested, lookups by id or username. A
// page is a query of rows (id, pid, pos): the user, the item's pagination id and its place in the
// page's fetch order; `readUserPage` reads the users with the viewer's flags in the same statement.

/** A user of a list page, with the item's pagination id. */
export type ListedUser = UserView & { pid: number };

/**
 * The users of a page query, with their place in the page's fetch order (disabled users are left
 * out). Ordered by `listed`, not by SQL: an ORDER BY over the page sorts it in a temporary b-tree
 * that D1 counts as a row read per item.
 */
function usersOfPage(pageSql: SQL, viewerId: number | null): SQL {
  return sql`WITH page AS (${pageSql})
    SELECT ${userColumnsSql(viewerId)}, page.pid AS ix_pid, page.pos AS ix_pos FROM page JOIN users ON users.id = page.id
    WHERE users.is_disabled = 0`;
}

const listed = (rows: Record<string, unknown>[]): ListedUser[] =>
  rows
    .map((r) => ({ pos: Number(r.ix_pos), user: { ...readUser(r)!, pid: Number(r.ix_pid) } }))
    .sort((a, b) => a.pos - b.pos)
    .map((r) => r.user);

/** Reads a page of users in one round trip; `subject` (a user the list is about) is checked in the same batch. */
export async function readUserPage(db: Db, pageSql: SQL, viewerId: number | null, subject?: number): Promise<{ found: boolean; users: ListedUser[] }> {
  if (subject === undefined) return { found: true, users: listed(await allRows(db, usersOfPage(pageSql, viewerId))) };
  const [exists, rows] = await mixedBatch(db, [sql`SELECT 1 AS found FROM users WHERE id = ${subject}`, usersOfPage(pageSql, viewerId)]);
  return { found: exists.results.length > 0, users: listed(rows.results) };
}

const dir = (page: Page) => sql.raw(page.newestFirst ? "DESC" : "ASC");
const pos = (page: Page, col: SQL) => (page.newestFirst ? sql`-${col}` : col);

/** The order of following and follower lists. */
export type FollowOrder = "followed_at" | "id" | "last_post_id";

/** Latest live post of a user: the pagination key of `order=last_post_id`. */
const lastPost = (userId: SQL) => sql`(SELECT max(lp.id) FROM posts lp WHERE lp.user_id = ${userId} AND lp.is_deleted = 0)`;

/**
 * Users `userId` follows (`following`) or who follow `userId` (`followers`). `followed_at` (the
 * default): newest follow first, the follow's id the pagination id; `id`: by user id; `last_post_id`:
 * by the user's latest post (users who never posted are not in this order).
 */
export function followPage(kind: "following" | "followers", userId: number, order: FollowOrder, page: Page): SQL {
  const [mine, other] = kind === "following" ? ["follower_id", "followed_id"] : ["followed_id", "follower_id"];
  const other_ = sql.raw(`f.${other}`);
  const where = sql`f.${sql.raw(mine)} = ${userId}`;
  const limit = page.limit + 1;
  if (order === "followed_at") {
    return sql`SELECT ${other_} AS id, f.id AS pid, ${pos(page, sql`f.id`)} AS pos FROM follows f
      WHERE ${where} AND ${pageBoundsSql("f.id", page)} ORDER BY f.id ${dir(page)} LIMIT ${limit}`;
  }
  if (order === "id") {
    return sql`SELECT ${other_} AS id, ${other_} AS pid, ${pos(page, other_)} AS pos FROM follows f
      WHERE ${where} AND ${pageBoundsSql(`f.${other}`, page)} ORDER BY ${other_} ${dir(page)} LIMIT ${limit}`;
  }
  return sql`SELECT lf.id AS id, lf.last AS pid, ${pos(page, sql`lf.last`)} AS pos
    FROM (SELECT ${other_} AS id, ${lastPost(other_)} AS last FROM follows f WHERE ${where}) lf
    WHERE lf.last IS NOT NULL AND ${pageBoundsSql("lf.last", page)} ORDER BY lf.last ${dir(page)} LIMIT ${limit}`;
}

/** Users `userId` muted or blocked, by user id (the pagination id). */
export function hiddenPage(kind: "muted" | "blocked", userId: number, page: Page): SQL {
  const [table, col] = kind === "muted" ? ["user_mutes", "muted_id"] : ["user_blocks", "blocked_id"];
  const other = sql.raw(`h.${col}`);
  return sql`SELECT ${other} AS id, ${other} AS pid, ${pos(page, other)} AS pos FROM ${sql.raw(table)} h
    WHERE h.user_id = ${userId} AND ${pageBoundsSql(`h.${col}`, page)} ORDER BY ${other} ${dir(page)} LIMIT ${page.limit + 1}`;
}

/** Days a user's latest post may be old for them to be suggested. */
export const SUGGESTED_ACTIVE_DAYS = 30;

/**
 * Users to suggest to `viewerId`: users followed by users the viewer follows (anyone, when the
 * viewer follows nobody) who posted in the last SUGGESTED_ACTIVE_DAYS days, not the viewer, not
 * already followed, not muted, not blocked either way. Most recently active first; the latest
 * post's id is the pagination id. Walks the recent posts (index posts_created).
 */
export function suggestedPage(viewerId: number, at: number, page: Page): SQL {
  const v = viewerId;
  const followsSomeone = sql`EXISTS (SELECT 1 FROM follows sf WHERE sf.follower_id = ${v})`;
  const friendsOfFriends = sql`(SELECT f2.followed_id FROM follows f1 JOIN follows f2 ON f2.follower_id = f1.followed_id WHERE f1.follower_id = ${v})`;
  return sql`SELECT c.id AS id, c.last AS pid, ${pos(page, sql`c.last`)} AS pos FROM (
      SELECT sp.user_id AS id, max(sp.id) AS last FROM posts sp
      WHERE sp.created_at > ${at - SUGGESTED_ACTIVE_DAYS * 86400} AND sp.is_deleted = 0 AND sp.user_id <> ${v}
        AND (NOT ${followsSomeone} OR sp.user_id IN ${friendsOfFriends})
      GROUP BY sp.user_id) c
    WHERE NOT EXISTS (SELECT 1 FROM follows yf WHERE yf.follower_id = ${v} AND yf.followed_id = c.id)
      AND NOT EXISTS (SELECT 1 FROM user_mutes ym WHERE ym.user_id = ${v} AND ym.muted_id = c.id)
      AND NOT EXISTS (SELECT 1 FROM user_blocks yb WHERE (yb.user_id = ${v} AND yb.blocked_id = c.id) OR (yb.user_id = c.id AND yb.blocked_id = ${v}))
      AND ${pageBoundsSql("c.last", page)}
    ORDER BY c.last ${dir(page)} LIMIT ${page.limit + 1}`;
}

/**
 * Users by id or `@username`, as many as found (disabled ones left out). Order, duplicates and the
 * limit are the caller's (it knows the order asked).
 */
export function usersByRefsPage(ids: number[], usernames: string[]): SQL {
  return sql`SELECT u.id AS id, u.id AS pid, u.id AS pos FROM users u WHERE u.id IN (SELECT value FROM ${jsonRows(ids, "ri")})
    UNION SELECT u.id, u.id, u.id FROM users u WHERE u.username IN (SELECT value FROM ${jsonRows(usernames, "rn", "text")})`;
}
