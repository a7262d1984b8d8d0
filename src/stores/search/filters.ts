import { sql, type SQL } from "drizzle-orm";
import { placeholder as v } from "../../db/batch";
import { dialect, inList } from "../../db/dialect";
import type { Page } from "../../http/pagination";
import { PM_TYPE, canReadSql, pageBoundsSql } from "../channel-sql";
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

// A search's statement is compiled once per shape (which filters, channels, page bounds, order:
// `searchShapeKey`) and bound per request: every value is a placeholder (`v`), filled from
// `searchValues`; lists are one JSON parameter. Builders read `s` and `page` for structure only.

/** The facet filters of a message search: their facet name and where their values are. */
const FACETS = [
  ["file", (s: MessageSearch) => (s.fileId !== undefined ? [String(s.fileId)] : undefined)],
  ["file_kind", (s: MessageSearch) => s.fileKinds],
  ["leading_mention", (s: MessageSearch) => s.leadingMentions],
  ["mention", (s: MessageSearch) => s.mentions],
  ["raw_type", (s: MessageSearch) => s.rawTypes],
  ["tag", (s: MessageSearch) => s.tags],
  ["url_domain", (s: MessageSearch) => s.urlDomains],
  ["url", (s: MessageSearch) => s.urls],
] as const;
type FacetName = (typeof FACETS)[number][0];
const facetValues = (s: MessageSearch, name: FacetName) => FACETS.find(([n]) => n === name)![1](s);

const facet = (name: FacetName) =>
  sql`EXISTS (SELECT 1 FROM message_facets f WHERE f.facet = ${name}
    AND f.value IN ${inList(v(`facet_${name}`), "text")} AND f.message_id = m.id)`;

/**
 * Conditions on message `m`: the readable channels and every filter. Deleted messages are left
 * out by the FTS index itself when words are searched (so the index-only plan stays index-only),
 * else by a condition here; the final read checks `is_deleted` again.
 */
export function filterConditions(s: MessageSearch): SQL[] {
  const c: SQL[] = [sql`m.channel_id IN (SELECT id FROM readable)`];
  const has = (name: FacetName) => !!facetValues(s, name)?.length;
  if (!s.terms.length) c.push(sql`m.is_deleted = 0`);
  if (s.clientId !== undefined) c.push(sql`m.app_id IN (SELECT id FROM apps WHERE client_id = ${v("clientId")})`);
  if (s.createdAfter !== undefined) c.push(sql`m.created_at > ${v("createdAfter")}`);
  if (s.createdBefore !== undefined) c.push(sql`m.created_at < ${v("createdBefore")}`);
  if (s.creator) {
    c.push("id" in s.creator ? sql`m.user_id = ${v("creatorId")}` : sql`m.user_id = (SELECT id FROM users WHERE username = ${v("creatorName")})`);
  }
  if (has("file")) c.push(facet("file"));
  if (has("file_kind")) c.push(facet("file_kind"));
  if (s.excludeNsfw) c.push(sql`m.is_nsfw = 0`);
  if (s.isReply !== undefined) c.push(s.isReply ? sql`m.reply_to IS NOT NULL` : sql`m.reply_to IS NULL`);
  if (s.stickyOnly) c.push(sql`m.is_sticky = 1`);
  if (has("leading_mention")) c.push(facet("leading_mention"));
  if (has("mention")) c.push(facet("mention"));
  if (s.pollId !== undefined) c.push(sql`m.poll_id = ${v("pollId")}`);
  if (has("raw_type")) c.push(facet("raw_type"));
  if (s.replyTo !== undefined) c.push(sql`m.reply_to = ${v("replyTo")}`);
  if (has("tag")) c.push(facet("tag"));
  if (s.threadId !== undefined) c.push(sql`m.thread_id = ${v("threadId")}`);
  if (has("url_domain")) c.push(facet("url_domain"));
  if (has("url")) c.push(facet("url"));
  if (s.userTypes?.length) {
    c.push(sql`EXISTS (SELECT 1 FROM users ut WHERE ut.id = m.user_id AND ut.type IN ${inList(v("userTypes"), "text")})`);
  }
  return c;
}

/** Channels the viewer may search: the ACL is applied here, once per query, not per message. */
export function readableChannels(s: MessageSearch, viewerId: number | null): SQL {
  if (s.channels === "pm") {
    const viewer = v("viewer");
    return sql`SELECT c.id FROM channels c WHERE c.type = ${PM_TYPE} AND c.owner_id = ${viewer}
      UNION SELECT c.id FROM channel_acl ca JOIN channels c ON c.id = ca.channel_id WHERE ca.user_id = ${viewer} AND c.type = ${PM_TYPE}`;
  }
  return sql`SELECT c.id FROM channels c WHERE c.id IN ${inList(v("channels"))} AND ${canReadSql("c", viewerId == null ? null : v("viewer"))}`;
}

/**
 * Most named channels the D1 "channels" plan merges one index walk each of (search/fts5.ts): each
 * walk is a term of one compound SELECT, and D1 allows at most 5 (more fail to compile, whichever
 * plan runs).
 */
export const MERGED_CHANNELS_LIMIT = 5;

/**
 * What decides the text of a search's statement: which filters are present, the channels' kind
 * (and count, up to MERGED_CHANNELS_LIMIT), the viewer's kind, order, page bounds and direction.
 * From code and flags only, so the shapes are few.
 */
export function searchShapeKey(s: MessageSearch, page: Page, viewerId: number | null, forcePlan?: string): string {
  const flag = (x: unknown) => (x === undefined || x === false || (Array.isArray(x) && !x.length) ? "0" : "1");
  const channels = s.channels === "pm" ? "pm" : s.channels.length <= MERGED_CHANNELS_LIMIT ? String(s.channels.length) : "many";
  const filters = [s.clientId, s.createdAfter, s.createdBefore, s.excludeNsfw, s.stickyOnly, s.pollId, s.replyTo, s.threadId, s.userTypes].map(flag).join("");
  const facets = FACETS.map(([name]) => flag(facetValues(s, name))).join("");
  const creator = s.creator ? ("id" in s.creator ? "i" : "n") : "-";
  const reply = s.isReply === undefined ? "-" : s.isReply ? "y" : "n";
  const bound = (id: number | undefined, inclusive: boolean | undefined) => (id === undefined ? "-" : inclusive ? "=" : "<");
  return [
    "message-search",
    s.terms.length ? "words" : "none",
    s.order,
    forcePlan ?? "",
    viewerId == null ? "anon" : "viewer",
    channels,
    filters,
    facets,
    creator,
    reply,
    page.newestFirst,
    bound(page.sinceId, page.sinceInclusive) + bound(page.beforeId, page.beforeInclusive),
  ].join(":");
}

/** The values of a search's placeholders (the backend's own: `match` or `terms`, added by its builder's caller). */
export function searchValues(s: MessageSearch, page: Page, viewerId: number | null): Record<string, unknown> {
  const values: Record<string, unknown> = {
    viewer: viewerId ?? 0,
    channels: s.channels === "pm" ? null : JSON.stringify(s.channels),
    clientId: s.clientId,
    createdAfter: s.createdAfter,
    createdBefore: s.createdBefore,
    creatorId: s.creator && "id" in s.creator ? s.creator.id : undefined,
    creatorName: s.creator && "username" in s.creator ? s.creator.username : undefined,
    pollId: s.pollId,
    replyTo: s.replyTo,
    threadId: s.threadId,
    userTypes: JSON.stringify(s.userTypes ?? []),
    limit: page.limit + 1,
    since: page.sinceId,
    before: page.beforeId,
    sinceKey: page.sinceId === undefined ? undefined : -page.sinceId,
    beforeKey: page.beforeId === undefined ? undefined : -page.beforeId,
  };
  for (const [name] of FACETS) values[`facet_${name}`] = JSON.stringify(facetValues(s, name) ?? []);
  if (s.channels !== "pm" && s.channels.length <= MERGED_CHANNELS_LIMIT) for (const [i, c] of s.channels.entries()) values[`channel${i}`] = c;
  return values;
}

/** Page bounds on `col` with the placeholders `since` and `before`. */
export const searchBounds = (col: string, page: Page) => pageBoundsSql(col, page, { since: v("since"), before: v("before") });

/** How many of the newest matching messages `order=relevance` ranks (scores are computed for these only). */
export const RELEVANCE_WINDOW = 1000;

/**
 * Relevance keyset: the list is ordered by (score ascending — lower is more relevant — and id descending); `before_id` names
 * a message of the list and asks for what ranks after it, `since_id` for what ranks before it.
 * The named message's score comes from the same materialised candidate set, so it compares exactly;
 * it is read once (a row-value comparison on (score, -id)), each read being a scan of that set.
 */
export function relevanceBounds(page: Page, named = false): SQL {
  const conds: SQL[] = [];
  // `named`: the ids as placeholders (`before`, `beforeKey` = -before; `since`, `sinceKey`).
  const key = (id: number, name: "before" | "since") =>
    named ? sql`((SELECT score FROM hits WHERE id = ${v(name)}), ${v(`${name}Key`)})` : sql`((SELECT score FROM hits WHERE id = ${id}), ${-id})`;
  if (page.beforeId !== undefined) conds.push(sql`(h.score, -h.id) ${sql.raw(page.beforeInclusive ? ">=" : ">")} ${key(page.beforeId, "before")}`);
  if (page.sinceId !== undefined) conds.push(sql`(h.score, -h.id) ${sql.raw(page.sinceInclusive ? "<=" : "<")} ${key(page.sinceId, "since")}`);
  return conds.length ? sql.join(conds, sql` AND `) : sql`true`;
}

/**
 * How the ranked window (CTE `hits`) is kept: a page named by an anchor (`before_id`/`since_id`)
 * reads it twice (the anchor's score, then the page), so it is materialised; a first page reads
 * it once, so it streams into the ranking sort (SQLite counts each read of a materialised row).
 */
export const hitsCte = (page: Page): SQL =>
  sql.raw(page.beforeId !== undefined || page.sinceId !== undefined ? "hits AS MATERIALIZED" : "hits AS NOT MATERIALIZED");

/** The facet filter a "facet" plan would walk (the first present, most selective kinds first), and the placeholder of its values. */
export function facetDriver(s: MessageSearch): [FacetName, SQL] | undefined {
  const order: FacetName[] = ["file", "url", "mention", "leading_mention", "tag", "url_domain", "raw_type", "file_kind"];
  const found = order.find((name) => facetValues(s, name)?.length);
  return found ? [found, v(`facet_${found}`)] : undefined;
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
    sql`SELECT ${messageColumnsSql(viewerId == null ? null : v("viewer"))}, m.id AS pagination_id
      FROM p JOIN messages m ON m.id = p.id ${messageJoins}
      WHERE m.is_deleted = 0
      ORDER BY ${order}`;
  const withoutWords = sql`WITH ${readable}, p AS (SELECT m.id FROM messages m WHERE ${where} AND ${searchBounds("m.id", page)}
      ORDER BY m.id ${dir(!nf)} LIMIT ${v("limit")})
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
export function wordMatcher(table: "posts" | "users", fts: string, pgQuery: () => SQL, ftsMatch: () => string | SQL, bm25: SQL): WordMatcher {
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
