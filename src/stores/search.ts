import { sql, type SQL } from "drizzle-orm";
import type { Page } from "../http/pagination";
import type { Db } from "./db";
import { PM_TYPE, allRows, canReadSql, jsonList, pageBoundsSql, viewerParam } from "./channel-sql";
import { messageColumnsSql, messageJoins, readMessage, type MessageRecord } from "./messages";

/** A message search (api.md "Message search"), already validated and normalised by the route. */
export interface MessageSearch {
  /** Words of `q`; each is matched as a quoted FTS5 phrase, so no input is FTS syntax. */
  terms: string[];
  order: "id" | "relevance";
  /** `pm`: every private-message channel the viewer takes part in; else these channel ids. */
  channels: "pm" | number[];
  clientId?: string;
  createdAfter?: number;
  createdBefore?: number;
  creator?: { id: number } | { username: string };
  fileId?: number;
  fileKinds?: string[];
  excludeNsfw?: boolean;
  isReply?: boolean;
  stickyOnly?: boolean;
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

/** The FTS5 query for search words: each a quoted string (`"` doubled), all required. */
export function ftsQuery(terms: string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" ");
}

const facet = (name: string, values: readonly string[]) =>
  sql`EXISTS (SELECT 1 FROM message_facets f WHERE f.facet = ${name}
    AND f.value IN (SELECT value FROM json_each(${jsonList(values)})) AND f.message_id = m.id)`;

/**
 * Conditions on message `m`: the readable channels and every filter. Deleted messages are left
 * out by the FTS index itself when words are searched (so the index-only plan stays index-only),
 * else by a condition here; the final read checks `is_deleted` again.
 */
function filterConditions(s: MessageSearch): SQL[] {
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
    c.push(sql`EXISTS (SELECT 1 FROM users ut WHERE ut.id = m.user_id AND ut.type IN (SELECT value FROM json_each(${jsonList(s.userTypes)})))`);
  }
  return c;
}

/** Channels the viewer may search: the ACL is applied here, once per query, not per message. */
function readableChannels(s: MessageSearch, viewerId: number | null): SQL {
  if (s.channels === "pm") {
    const v = viewerParam(viewerId);
    return sql`SELECT c.id FROM channels c WHERE c.type = ${PM_TYPE} AND c.owner_id = ${v}
      UNION SELECT c.id FROM channel_acl ca JOIN channels c ON c.id = ca.channel_id WHERE ca.user_id = ${v} AND c.type = ${PM_TYPE}`;
  }
  return sql`SELECT c.id FROM channels c WHERE c.id IN (SELECT value FROM json_each(${jsonList(s.channels)})) AND ${canReadSql("c", viewerId)}`;
}

/** Most message lookups the "fts" candidate plan is expected to make before "channels" is preferred. */
const FTS_WALK_LIMIT = 5000;
/** Most facet rows the "facet" candidate plan walks. */
const FACET_DRIVER_LIMIT = 5000;

/** The candidate plans of a word search (see `searchSql`); tests force each to compare them. */
export type SearchPlan = "fts" | "channels" | "facet";

/** How many of the newest matching messages `order=relevance` ranks (bm25 is computed for these only). */
export const RELEVANCE_WINDOW = 1000;

/**
 * Relevance keyset: the list is ordered by (bm25 ascending, id descending); `before_id` names
 * a message of the list and asks for what ranks after it, `since_id` for what ranks before it.
 * The named message's score comes from the same materialised candidate set, so it compares exactly.
 */
function relevanceBounds(page: Page): SQL {
  const conds: SQL[] = [];
  const anchor = (id: number) => sql`(SELECT score FROM hits WHERE id = ${id})`;
  if (page.beforeId !== undefined) {
    const op = sql.raw(page.beforeInclusive ? "<=" : "<");
    conds.push(sql`(h.score > ${anchor(page.beforeId)} OR (h.score = ${anchor(page.beforeId)} AND h.id ${op} ${page.beforeId}))`);
  }
  if (page.sinceId !== undefined) {
    const op = sql.raw(page.sinceInclusive ? ">=" : ">");
    conds.push(sql`(h.score < ${anchor(page.sinceId)} OR (h.score = ${anchor(page.sinceId)} AND h.id ${op} ${page.sinceId}))`);
  }
  return conds.length ? sql.join(conds, sql` AND `) : sql`1`;
}

/**
 * Runs a message search as ONE SQL statement (one D1 round trip): the readable channels, the
 * FTS5 match (porter stemming), every filter as a condition on the message or an EXISTS on its
 * facets, the page, and the rendered columns of the page's messages only. Deleted messages
 * never match (they leave the FTS index when deleted, and the filters exclude them too).
 */
export async function searchMessages(
  db: Db,
  s: MessageSearch,
  page: Page,
  viewerId: number | null,
  forcePlan?: SearchPlan,
): Promise<MessageRecord[]> {
  const rows = await allRows(db, searchSql(s, page, viewerId, forcePlan));
  return rows.map(readMessage);
}

/**
 * The statement of `searchMessages`. With words, candidates (matching messages of readable
 * channels that pass the filters, newest first) come from the cheapest of three plans, chosen
 * inside the statement without scanning anything large:
 *   - "facet": when a facet filter (file, urls, mentions, tags, ...) names at most
 *     FACET_DRIVER_LIMIT facet rows (counted on the facet index), walk those rows;
 *   - "fts": walk the match list newest first and look each message up; cheap when the
 *     searched channels hold a large share of all messages (channel counters tell), as about
 *     want / share lookups find enough candidates;
 *   - "channels": walk the searched channels' (channel_id, id) index keeping ids in the match
 *     set; cheap when the channels hold a small share (no per-match row lookups).
 * The unused plans' branches get LIMIT 0, which stops them before their loops start (a WHERE
 * guard would not: SQLite does not hoist terms with subqueries out of the loop).
 * `order=relevance` takes the newest RELEVANCE_WINDOW candidates and computes bm25 for those
 * alone, so the cost stays bounded however common the words are; `order=id` takes one page.
 */
export function searchSql(s: MessageSearch, page: Page, viewerId: number | null, forcePlan?: SearchPlan): SQL {
  const conds = filterConditions(s);
  const where = sql.join(conds, sql` AND `);
  const dir = (asc: boolean) => sql.raw(asc ? "ASC" : "DESC");
  const nf = page.newestFirst;
  const readable = sql`readable(id) AS (${readableChannels(s, viewerId)})`;
  const render = (order: SQL) =>
    sql`SELECT ${messageColumnsSql(viewerId)}, m.id AS pagination_id
      FROM p JOIN messages m ON m.id = p.id ${messageJoins}
      WHERE m.is_deleted = 0
      ORDER BY ${order}`;

  if (!s.terms.length) {
    return sql`WITH ${readable}, p AS (SELECT m.id FROM messages m WHERE ${where} AND ${pageBoundsSql("m.id", page)}
        ORDER BY m.id ${dir(!nf)} LIMIT ${page.limit + 1})
      ${render(sql`m.id ${dir(!nf)}`)}`;
  }

  const match = ftsQuery(s.terms);
  const matched = sql`(SELECT rowid FROM message_search WHERE message_search MATCH ${match})`;
  const relevance = s.order === "relevance";
  // Candidates wanted: a relevance window (newest first), or one page in id order.
  const want = relevance ? RELEVANCE_WINDOW : page.limit + 1;
  const bounds = (col: string) => (relevance ? sql`1` : pageBoundsSql(col, page));
  const order = relevance ? sql`DESC` : dir(!nf);
  const driver = facetDriver(s);
  const planCode = { channels: 0, fts: 1, facet: 2 } as const;
  const chosen = forcePlan
    ? sql.raw(String(planCode[forcePlan === "facet" && !driver ? "fts" : forcePlan]))
    : sql`CASE WHEN fd <= ${FACET_DRIVER_LIMIT} THEN 2 WHEN cm > 0 AND ${want} * 1.0 * t <= ${FTS_WALK_LIMIT} * 1.0 * cm THEN 1 ELSE 0 END`;
  const facetRows = driver
    ? sql`(SELECT count(*) FROM message_facets WHERE facet = ${driver[0]} AND value IN (SELECT value FROM json_each(${jsonList(driver[1])})))`
    : sql`NULL`;
  const plan = sql`plan(code) AS (SELECT ${chosen} FROM (SELECT ${facetRows} AS fd,
      (SELECT coalesce(sum(c.messages), 0) FROM channels c WHERE c.id IN (SELECT id FROM readable)) AS cm,
      (SELECT coalesce(max(id), 0) FROM messages) AS t))`;
  const limitFor = (code: number) => sql`LIMIT (SELECT CASE WHEN code = ${sql.raw(String(code))} THEN ${want} ELSE 0 END FROM plan)`;
  // `+m.id IN matched`: the match set filters the walk; as an index key it would be probed per channel.
  const branches = [
    sql`SELECT m.id FROM message_search CROSS JOIN messages m ON m.id = message_search.rowid
      WHERE message_search MATCH ${match} AND ${where} AND ${bounds("message_search.rowid")}
      ORDER BY message_search.rowid ${order} ${limitFor(planCode.fts)}`,
    sql`SELECT m.id FROM messages m INDEXED BY messages_channel
      WHERE +m.id IN ${matched} AND ${where} AND ${bounds("m.id")}
      ORDER BY m.id ${order} ${limitFor(planCode.channels)}`,
  ];
  if (driver) {
    // DISTINCT: a message can carry several of the facet values.
    branches.push(sql`SELECT DISTINCT m.id FROM message_facets fd CROSS JOIN messages m ON m.id = fd.message_id
      WHERE fd.facet = ${driver[0]} AND fd.value IN (SELECT value FROM json_each(${jsonList(driver[1])}))
        AND +m.id IN ${matched} AND ${where} AND ${bounds("m.id")}
      ORDER BY m.id ${order} ${limitFor(planCode.facet)}`);
  }
  const cand = sql`cand AS MATERIALIZED (${sql.join(
    branches.map((b) => sql`SELECT id FROM (${b})`),
    sql` UNION ALL `,
  )})`;

  if (!relevance) {
    return sql`WITH ${readable}, ${plan}, ${cand}, p AS (SELECT id FROM cand)
      ${render(sql`m.id ${dir(!nf)}`)}`;
  }
  // bm25 only for the candidates: the match list from the oldest candidate on, kept to the
  // candidate set (`+rowid`: as an FTS constraint the match would be re-run per id).
  return sql`WITH ${readable}, ${plan}, ${cand},
    hits AS MATERIALIZED (SELECT rowid AS id, bm25(message_search) AS score FROM message_search
      WHERE message_search MATCH ${match} AND rowid >= (SELECT min(id) FROM cand) AND +rowid IN (SELECT id FROM cand)),
    p AS (SELECT h.id, h.score FROM hits h WHERE ${relevanceBounds(page)}
      ORDER BY h.score ${dir(nf)}, h.id ${dir(!nf)} LIMIT ${page.limit + 1})
    ${render(sql`p.score ${dir(nf)}, m.id ${dir(!nf)}`)}`;
}

/** The facet filter a "facet" plan would walk: the first present, most selective kinds first. */
function facetDriver(s: MessageSearch): [string, string[]] | undefined {
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
