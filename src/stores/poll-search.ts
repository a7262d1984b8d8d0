import { and, eq, sql, type SQL } from "drizzle-orm";
import { schema, type Db } from "../db";
import { inList } from "../db/dialect";
import type { Page } from "../http/pagination";
import { pageWhere } from "./page-sql";
import { listFilterSql, loadPolls, type LoadedPoll, type PollListFilters } from "./polls";

const { polls } = schema;

/** GET /polls/search, validated (the reference's filters plus the general poll list filters). */
export interface PollSearch {
  order: "id" | "closed_at";
  createdAfter?: number;
  createdBefore?: number;
  creator?: { id: number } | { username: string };
  fileId?: number;
  isAnonymous?: boolean;
  isClosed?: boolean;
  isPublic?: boolean;
  rawTypes: string[];
  youResponded?: boolean;
  list: PollListFilters;
}

const facet = (name: string, values: SQL) =>
  sql`EXISTS (SELECT 1 FROM poll_facets pf WHERE pf.poll_id = ${polls.id} AND pf.facet = ${name} AND pf.value IN ${values})`;

/**
 * Keyset bounds when ordered by `closed_at` (ties by id): `before_id`/`since_id` name a poll of
 * the result list and keep what ranks after/before it.
 */
function closedAtBounds(page: Page): SQL | undefined {
  const bound = (id: number, op: "<" | ">") => {
    const at = sql`(SELECT b.closed_at FROM polls b WHERE b.id = ${id})`;
    return sql`(${polls.closedAt} ${sql.raw(op)} ${at} OR (${polls.closedAt} = ${at} AND ${polls.id} ${sql.raw(op)} ${id}))`;
  };
  return and(page.beforeId !== undefined ? bound(page.beforeId, "<") : undefined, page.sinceId !== undefined ? bound(page.sinceId, ">") : undefined);
}

/**
 * One page of the polls matching a search that the viewer may see: public polls, and private
 * ones the viewer created or responded to (a private poll's `poll_token` is no search key).
 * Pagination id: the poll id, in the order asked (newest id first, or latest `closed_at` first).
 */
export function searchPolls(db: Db, s: PollSearch, page: Page, viewerId: number | null, now: number): Promise<LoadedPoll[]> {
  const viewer = viewerId ?? 0;
  const responded = (nonEmpty: boolean) =>
    sql`EXISTS (SELECT 1 FROM poll_responses yr WHERE yr.poll_id = ${polls.id} AND yr.user_id = ${viewer}${nonEmpty ? sql` AND yr.positions <> '[]'` : sql``})`;
  const visible = viewerId == null ? eq(polls.isPublic, true) : sql`(${polls.isPublic} = 1 OR ${polls.userId} = ${viewer} OR ${responded(false)})`;
  const flag = (col: typeof polls.isPublic, v: boolean | undefined) => (v === undefined ? undefined : eq(col, v));
  const where = and(
    visible,
    listFilterSql(s.list, now),
    s.createdAfter !== undefined ? sql`${polls.createdAt} > ${s.createdAfter}` : undefined,
    s.createdBefore !== undefined ? sql`${polls.createdAt} < ${s.createdBefore}` : undefined,
    s.creator
      ? "id" in s.creator
        ? eq(polls.userId, s.creator.id)
        : sql`${polls.userId} = (SELECT id FROM users WHERE username = ${s.creator.username})`
      : undefined,
    s.fileId !== undefined ? facet("file", sql`(${String(s.fileId)})`) : undefined,
    s.rawTypes.length ? facet("raw_type", inList(s.rawTypes, "text")) : undefined,
    flag(polls.isAnonymous, s.isAnonymous),
    flag(polls.isPublic, s.isPublic),
    s.isClosed === undefined ? undefined : s.isClosed ? sql`${polls.closedAt} <= ${now}` : sql`${polls.closedAt} > ${now}`,
    s.youResponded === undefined ? undefined : s.youResponded ? responded(true) : sql`NOT ${responded(true)}`,
    s.order === "id" ? pageWhere(polls.id, page) : closedAtBounds(page),
  );
  const dir = sql.raw(page.newestFirst ? "DESC" : "ASC");
  const order = s.order === "id" ? sql`${polls.id} ${dir}` : sql`${polls.closedAt} ${dir}, ${polls.id} ${dir}`;
  return loadPolls(db, where, { viewerId, now, order, limit: page.limit + 1 });
}
