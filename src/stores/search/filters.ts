import { sql, type SQL } from "drizzle-orm";
import { dialect, inList } from "../../db/dialect";
import type { Page } from "../../http/pagination";
import { PM_TYPE, canReadSql, pageBoundsSql, viewerParam } from "../channel-sql";
import { messageColumnsSql, messageJoins } from "../messages";

// What message search means on either backend: the query, the readable channels and the
// filters. How words are matched and ranked is per backend (fts5.ts, postgres.ts).

/** What message and post search share: words, order, and the filters both apply the same way. */
export interface SearchFilters {
  /** Words of `q`; each is matched as a phrase (stemmed), so no input is query syntax. */
  terms: string[];
  order: "id" | "relevance";
  clientId?: string;
  createdAfter?: number;
  createdBefore?: number;
  creator?: { id: number } | { username: string };
  fileId?: number;
  fileKinds?: string[];
  excludeNsfw?: boolean;
  isReply?: boolean;
  leadingMentions?: string[];
  mentions?: string[];
  pollId?: number;
  rawTypes?: string[];
  replyTo?: number;
  tags?: string[];
  threadId?: number;
  urlDomains?: string[];
  urls?: string[];
  userTypes?: string[];
}

/** A message search (api.md "Message search"), already validated and normalised by the route. */
export interface MessageSearch extends SearchFilters {
  /** `pm`: every private-message channel the viewer takes part in; else these channel ids. */
  channels: "pm" | number[];
  stickyOnly?: boolean;
}

const facet = (name: string, values: readonly string[]) =>
  sql`EXISTS (SELECT 1 FROM message_facets f WHERE f.facet = ${name}
    AND f.value IN ${inList(values, "text")} AND f.message_id = m.id)`;

/**
 * Conditions on message `m`: the readable channels and every filter. Deleted messages are left
 * out by the FTS index itself when words are searched (so the index-only plan stays index-only),
 * else by a condition here; the final read checks `is_deleted` again.
 */
export function filterConditions(s: MessageSearch): SQL[] {
  const c: SQL[] = [sql`m.channel_id IN (SELECT id FROM readable)`];
  if (!s.terms.length) c.push(sql`m.is_deleted = 0`);
  if (s.clientId !== undefined) c.push(sql`m.app_id IN (SELECT id FROM apps WHERE client_id = ${s.clientId})`);
  if (s.createdAfter !== undefined) c.push(sql`m.created_at > ${s.createdAfter}`);
  if (s.createdBefore !== undefined) c.push(sql`m.created_at < ${s.createdBefore}`);
  if (s.creator) {
    c.push("id" in s.creator ? sql`m.user_id = ${s.creator.id}` : sql`m.user_id = (SELECT id FROM users WHERE username = ${s.creator.username})`);
  }
  if (s.fileId !== undefined) c.push(facet("file", [String(s.fileId)]));
  if (s.fileKinds?.length) c.push(facet("file_kind", s.fileKinds));
  if (s.excludeNsfw) c.push(sql`m.is_nsfw = 0`);
  if (s.isReply !== undefined) c.push(s.isReply ? sql`m.reply_to IS NOT NULL` : sql`m.reply_to IS NULL`);
  if (s.stickyOnly) c.push(sql`m.is_sticky = 1`);
  if (s.leadingMentions?.length) c.push(facet("leading_mention", s.leadingMentions));
  if (s.mentions?.length) c.push(facet("mention", s.mentions));
  if (s.pollId !== undefined) c.push(sql`m.poll_id = ${s.pollId}`);
  if (s.rawTypes?.length) c.push(facet("raw_type", s.rawTypes));
  if (s.replyTo !== undefined) c.push(sql`m.reply_to = ${s.replyTo}`);
  if (s.tags?.length) c.push(facet("tag", s.tags));
  if (s.threadId !== undefined) c.push(sql`m.thread_id = ${s.threadId}`);
  if (s.urlDomains?.length) c.push(facet("url_domain", s.urlDomains));
  if (s.urls?.length) c.push(facet("url", s.urls));
  if (s.userTypes?.length) {
    c.push(sql`EXISTS (SELECT 1 FROM users ut WHERE ut.id = m.user_id AND ut.type IN ${inList(s.userTypes, "text")})`);
  }
  return c;
}

/** Channels the viewer may search: the ACL is applied here, once per query, not per message. */
export function readableChannels(s: MessageSearch, viewerId: number | null): SQL {
  if (s.channels === "pm") {
    const v = viewerParam(viewerId);
    return sql`SELECT c.id FROM channels c WHERE c.type = ${PM_TYPE} AND c.owner_id = ${v}
      UNION SELECT c.id FROM channel_acl ca JOIN channels c ON c.id = ca.channel_id WHERE ca.user_id = ${v} AND c.type = ${PM_TYPE}`;
  }
  return sql`SELECT c.id FROM channels c WHERE c.id IN ${inList(s.channels)} AND ${canReadSql("c", viewerId)}`;
}

/** How many of the newest matching messages `order=relevance` ranks (scores are computed for these only). */
export const RELEVANCE_WINDOW = 1000;

/**
 * Relevance keyset: the list is ordered by (score ascending — lower is more relevant — and id descending); `before_id` names
 * a message of the list and asks for what ranks after it, `since_id` for what ranks before it.
 * The named message's score comes from the same materialised candidate set, so it compares exactly;
 * it is read once (a row-value comparison on (score, -id)), each read being a scan of that set.
 */
export function relevanceBounds(page: Page): SQL {
  const conds: SQL[] = [];
  const key = (id: number) => sql`((SELECT score FROM hits WHERE id = ${id}), ${-id})`;
  if (page.beforeId !== undefined) conds.push(sql`(h.score, -h.id) ${sql.raw(page.beforeInclusive ? ">=" : ">")} ${key(page.beforeId)}`);
  if (page.sinceId !== undefined) conds.push(sql`(h.score, -h.id) ${sql.raw(page.sinceInclusive ? "<=" : "<")} ${key(page.sinceId)}`);
  return conds.length ? sql.join(conds, sql` AND `) : sql`true`;
}

/**
 * How the ranked window (CTE `hits`) is kept: a page named by an anchor (`before_id`/`since_id`)
 * reads it twice (the anchor's score, then the page), so it is materialised; a first page reads
 * it once, so it streams into the ranking sort (SQLite counts each read of a materialised row).
 */
export const hitsCte = (page: Page): SQL =>
  sql.raw(page.beforeId !== undefined || page.sinceId !== undefined ? "hits AS MATERIALIZED" : "hits AS NOT MATERIALIZED");

/** The facet filter a "facet" plan would walk: the first present, most selective kinds first. */
export function facetDriver(s: MessageSearch): [string, string[]] | undefined {
  const options: [string, readonly string[] | undefined][] = [
    ["file", s.fileId !== undefined ? [String(s.fileId)] : undefined],
    ["url", s.urls],
    ["mention", s.mentions],
    ["leading_mention", s.leadingMentions],
    ["tag", s.tags],
    ["url_domain", s.urlDomains],
    ["raw_type", s.rawTypes],
    ["file_kind", s.fileKinds],
  ];
  const found = options.find(([, v]) => v?.length);
  return found ? [found[0], [...found[1]!]] : undefined;
}

/**
 * What both backends' statements share: the filters as one condition, the readable channels
 * (CTE `readable`), the page direction, the final read of the page's messages (from CTE `p`), and
 * the whole statement of a search without words.
 */
export function searchFrame(s: MessageSearch, page: Page, viewerId: number | null) {
  const where = sql.join(filterConditions(s), sql` AND `);
  const dir = (asc: boolean) => sql.raw(asc ? "ASC" : "DESC");
  const nf = page.newestFirst;
  const readable = sql`readable(id) AS (${readableChannels(s, viewerId)})`;
  const render = (order: SQL) =>
    sql`SELECT ${messageColumnsSql(viewerId)}, m.id AS pagination_id
      FROM p JOIN messages m ON m.id = p.id ${messageJoins}
      WHERE m.is_deleted = 0
      ORDER BY ${order}`;
  const withoutWords = sql`WITH ${readable}, p AS (SELECT m.id FROM messages m WHERE ${where} AND ${pageBoundsSql("m.id", page)}
      ORDER BY m.id ${dir(!nf)} LIMIT ${page.limit + 1})
    ${render(sql`m.id ${dir(!nf)}`)}`;
  return { where, dir, nf, readable, render, withoutWords };
}

/** How a search's words select and rank rows on the active backend (score: lower is more relevant). */
export interface WordMatcher {
  from: SQL;
  order: SQL;
  score: SQL;
}

/**
 * The matcher of a table with a full-text index on both backends: on Postgres its
 * `search_vector` column and `pgQuery` (a tsquery, ranked by ts_rank), on D1 its FTS5 table
 * (`fts`, rowid = the table's id) matched by `ftsMatch` and ranked by `bm25`.
 */
export function wordMatcher(table: "posts" | "users", fts: string, pgQuery: () => SQL, ftsMatch: () => string, bm25: SQL): WordMatcher {
  const t = sql.raw(table);
  return dialect.pick<() => WordMatcher>({
    // The query inline, not in a CTE: the planner folds it to a constant and estimates its
    // matches from the column's statistics, so a common word walks the primary key newest first
    // (stopping after the window) and a rare one the GIN index (a CTE's value is unknown when planning).
    postgres: () => ({
      from: sql`${t} WHERE ${t}.search_vector @@ ${pgQuery()}`,
      order: sql`${t}.id`,
      score: sql`-ts_rank(${t}.search_vector, ${pgQuery()})`,
    }),
    sqlite: () => {
      const f = sql.raw(fts);
      return { from: sql`${f} CROSS JOIN ${t} ON ${t}.id = ${f}.rowid WHERE ${f} MATCH ${ftsMatch()}`, order: sql`${f}.rowid`, score: bm25 };
    },
  })();
}
