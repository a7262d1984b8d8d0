import { sql, type SQL } from "drizzle-orm";
import { inList } from "../../db/dialect";
import type { Page } from "../../http/pagination";
import { pageBoundsSql } from "../channel-sql";
import { facetDriver, relevanceBounds, RELEVANCE_WINDOW, searchFrame, type MessageSearch } from "./filters";

// Message search on D1: FTS5 (porter stemming, bm25 ranking) and a plan chosen inside the statement.

/** The FTS5 query for search words: each a quoted string (`"` doubled), all required. */
export function ftsQuery(terms: string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" ");
}

/** Most message lookups the "fts" candidate plan is expected to make before "channels" is preferred. */
const FTS_WALK_LIMIT = 5000;
/** Most facet rows the "facet" candidate plan walks. */
const FACET_DRIVER_LIMIT = 5000;

/** The candidate plans of a word search (see `searchSql`); tests force each to compare them. */
export type SearchPlan = "fts" | "channels" | "facet";

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
export function fts5SearchSql(s: MessageSearch, page: Page, viewerId: number | null, forcePlan?: SearchPlan): SQL {
  const { where, dir, nf, readable, render, withoutWords } = searchFrame(s, page, viewerId);
  if (!s.terms.length) return withoutWords;

  const match = ftsQuery(s.terms);
  const matched = sql`(SELECT rowid FROM message_search WHERE message_search MATCH ${match})`;
  const relevance = s.order === "relevance";
  // Candidates wanted: a relevance window (newest first), or one page in id order.
  const want = relevance ? RELEVANCE_WINDOW : page.limit + 1;
  const bounds = (col: string) => (relevance ? sql`true` : pageBoundsSql(col, page));
  const order = relevance ? sql`DESC` : dir(!nf);
  const driver = facetDriver(s);
  const planCode = { channels: 0, fts: 1, facet: 2 } as const;
  const chosen = forcePlan
    ? sql.raw(String(planCode[forcePlan === "facet" && !driver ? "fts" : forcePlan]))
    : sql`CASE WHEN fd <= ${FACET_DRIVER_LIMIT} THEN 2 WHEN cm > 0 AND ${want} * 1.0 * t <= ${FTS_WALK_LIMIT} * 1.0 * cm THEN 1 ELSE 0 END`;
  const facetRows = driver ? sql`(SELECT count(*) FROM message_facets WHERE facet = ${driver[0]} AND value IN ${inList(driver[1], "text")})` : sql`NULL`;
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
      WHERE fd.facet = ${driver[0]} AND fd.value IN ${inList(driver[1], "text")}
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
