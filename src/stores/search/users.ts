import { sql, type SQL } from "drizzle-orm";
import { inList, pgTextArray } from "../../db/dialect";
import type { Page } from "../../http/pagination";
import { pageBoundsSql } from "../channel-sql";
import { relevanceBounds, RELEVANCE_WINDOW, wordMatcher } from "./filters";

// User search (GET /users/search): username, name and profile text, every word of `q` matched as
// a word prefix (accents folded, no stemming): FTS5's `user_search` on D1, the `search_vector`
// column on Postgres (schema/*/migrations/*_post_user_search.sql). One statement gives the page
// as rows (id, pid, pos) for `readUserPage`.

export interface UserSearch {
  /** Words of `q`. */
  terms: string[];
  order: "id" | "relevance";
  createdAfter?: number;
  createdBefore?: number;
  /** Only users who follow (true) or do not follow (false) the viewer. */
  isFollower?: boolean;
  /** Only users the viewer follows (true) or does not follow (false). */
  isFollowing?: boolean;
  locale?: string;
  timezone?: string;
  userTypes?: string[];
}

/** The FTS5 query of prefix words: each a quoted string (`"` doubled) followed by `*`, all required. */
export const prefixQuery = (terms: string[]) => terms.map((t) => `"${t.replaceAll('"', '""')}"*`).join(" ");

function conditions(s: UserSearch, viewerId: number | null): SQL {
  const v = viewerId ?? 0;
  const c: SQL[] = [sql`users.is_disabled = 0`];
  if (s.createdAfter !== undefined) c.push(sql`users.created_at > ${s.createdAfter}`);
  if (s.createdBefore !== undefined) c.push(sql`users.created_at < ${s.createdBefore}`);
  if (s.locale !== undefined) c.push(sql`users.locale = ${s.locale}`);
  if (s.timezone !== undefined) c.push(sql`users.timezone = ${s.timezone}`);
  if (s.userTypes?.length) c.push(sql`users.type IN ${inList(s.userTypes, "text")}`);
  const follows = (a: SQL, b: SQL) => sql`EXISTS (SELECT 1 FROM follows sf WHERE sf.follower_id = ${a} AND sf.followed_id = ${b})`;
  if (s.isFollower !== undefined) c.push(s.isFollower ? follows(sql`users.id`, sql`${v}`) : sql`NOT ${follows(sql`users.id`, sql`${v}`)}`);
  if (s.isFollowing !== undefined) c.push(s.isFollowing ? follows(sql`${v}`, sql`users.id`) : sql`NOT ${follows(sql`${v}`, sql`users.id`)}`);
  return sql.join(c, sql` AND `);
}

/** How words are matched and ranked per backend (username counts most, then name). */
const matcher = (terms: string[]) =>
  wordMatcher(
    "users",
    "user_search",
    () => sql`es_prefix_query(${pgTextArray(terms)})`,
    () => prefixQuery(terms),
    sql`bm25(user_search, 10.0, 5.0, 1.0)`,
  );

/**
 * The page of a user search. Without words, or with `order=id`: newest users first (by id). With
 * `order=relevance` (the default with words): the RELEVANCE_WINDOW newest matches ranked, paged by
 * keyset on (score, id) (`before_id`/`since_id` name a user of the result list).
 */
export function userSearchPage(s: UserSearch, page: Page, viewerId: number | null): SQL {
  const where = conditions(s, viewerId);
  const dir = (asc: boolean) => sql.raw(asc ? "ASC" : "DESC");
  const nf = page.newestFirst;
  const limit = page.limit + 1;
  const byId = sql`users.id AS id, users.id AS pid, ${nf ? sql`-users.id` : sql`users.id`} AS pos`;
  if (!s.terms.length) {
    return sql`SELECT ${byId} FROM users WHERE ${where} AND ${pageBoundsSql("users.id", page)} ORDER BY users.id ${dir(!nf)} LIMIT ${limit}`;
  }
  const m = matcher(s.terms);
  if (s.order === "id") {
    return sql`SELECT ${byId} FROM ${m.from} AND ${where} AND ${pageBoundsSql("users.id", page)}
      ORDER BY ${m.order} ${dir(!nf)} LIMIT ${limit}`;
  }
  return sql`WITH hits AS MATERIALIZED (SELECT users.id AS id, ${m.score} AS score FROM ${m.from} AND ${where}
      ORDER BY ${m.order} DESC LIMIT ${RELEVANCE_WINDOW}),
    p AS (SELECT h.id, h.score FROM hits h WHERE ${relevanceBounds(page)} ORDER BY h.score ${dir(nf)}, h.id ${dir(!nf)} LIMIT ${limit})
    SELECT h.id AS id, h.id AS pid, row_number() OVER (ORDER BY h.score ${dir(nf)}, h.id ${dir(!nf)}) AS pos FROM p h`;
}
