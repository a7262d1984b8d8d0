import { sql, type SQL } from "drizzle-orm";
import { inList } from "../../db/dialect";
import type { Page } from "../../http/pagination";
import { placeholder as v } from "../../db/batch";
import { facetDriver, hitsCte, MERGED_CHANNELS_LIMIT, relevanceBounds, RELEVANCE_WINDOW, searchBounds, searchFrame, type MessageSearch } from "./filters";

// Message search on D1: FTS5 (porter stemming, bm25 ranking) and a plan chosen inside the statement.

/** The FTS5 query for search words: each a quoted string (`"` doubled), all required. */
export function ftsQuery(terms: string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" ");
}

/** The channels a search names (null for `pm`, or none): those `messageMatch` puts in the query. */
const namedChannels = (s: MessageSearch): number[] | null => (s.channels !== "pm" && s.channels.length > 0 ? s.channels : null);

/**
 * The FTS5 query of a message search: its words in the text, and with named channels one of their
 * ids in the `channel_id` column (schema/migrations/0025_message_search_channels.sql), so FTS5
 * walks only those channels' matches. `pm` (every private channel of the viewer) matches any
 * channel: the readable set filters the messages.
 */
export function messageMatch(s: MessageSearch): string {
  const words = `text : (${ftsQuery(s.terms)})`;
  const named = namedChannels(s);
  return named ? `${words} AND channel_id : (${named.map(Number).join(" OR ")})` : words;
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
 *     FACET_DRIVER_LIMIT facet rows (counted on the facet index), walk the match list keeping
 *     the ids those rows name (a set read once);
 *   - "fts": walk the match list newest first and look each message up; cheap when the
 *     searched channels hold a large share of all messages (channel counters tell), as about
 *     want / share lookups find enough candidates;
 *   - "channels": the searched channels' messages (their (channel_id, id) index); cheap when
 *     the channels hold a small share. For a page in id order, each channel's index is walked
 *     in order and merged (`channelsWalk`), FTS5 seeking the match list per message, so the walk
 *     stops after a page; for `order=relevance`, the match list is walked keeping the ids of the
 *     channels' set (read once), as the bm25 walk reads those matches anyway (below).
 * No plan reads the whole match list into a set: that cost grows with every match of the words.
 * The unused plans' branches get LIMIT 0, which stops them before their loops start (a WHERE
 * guard would not: SQLite does not hoist terms with subqueries out of the loop).
 * `order=relevance` takes the newest RELEVANCE_WINDOW candidates with their bm25, computed in the
 * same walk of the match list (bm25 needs an FTS5 cursor over the match list: a per-candidate
 * probe would count each word's matches again per candidate); `order=id` takes one page.
 */
export function fts5SearchSql(s: MessageSearch, page: Page, viewerId: number | null, forcePlan?: SearchPlan): SQL {
  const { where, dir, nf, readable, render, withoutWords } = searchFrame(s, page, viewerId);
  if (!s.terms.length) return withoutWords;

  // Placeholders bound by `searchSql`: `match` is messageMatch(s).
  const match = v("match");
  const relevance = s.order === "relevance";
  // Candidates wanted: a relevance window (newest first), or one page in id order.
  const want = relevance ? sql`${RELEVANCE_WINDOW}` : v("limit");
  const bounds = (col: string) => (relevance ? sql`true` : searchBounds(col, page));
  const order = relevance ? sql`DESC` : dir(!nf);
  // The channel column's weight is 0: its terms add nothing to a score. Its one token per message
  // still counts in the length bm25 normalizes by (each message's and the average, one more each).
  const score = relevance ? sql`bm25(message_search, 1.0, 0.0)` : sql`NULL`;
  const driver = facetDriver(s);
  const planCode = { channels: 0, fts: 1, facet: 2 } as const;
  // Named channels are in the match (`messageMatch`): the match list is theirs, and each of its
  // messages a candidate unless a filter drops it, so "fts" reads about `want` of them.
  const named = namedChannels(s) != null;
  const chosen = forcePlan
    ? sql.raw(String(planCode[forcePlan === "facet" && !driver ? "fts" : forcePlan]))
    : named
      ? sql`CASE WHEN fd <= ${FACET_DRIVER_LIMIT} THEN 2 ELSE 1 END`
      : sql`CASE WHEN fd <= ${FACET_DRIVER_LIMIT} THEN 2 WHEN cm > 0 AND ${want} * 1.0 * t <= ${FTS_WALK_LIMIT} * 1.0 * cm THEN 1 ELSE 0 END`;
  const facetRows = driver ? sql`(SELECT count(*) FROM message_facets WHERE facet = ${driver[0]} AND value IN ${inList(driver[1], "text")})` : sql`NULL`;
  const plan = sql`plan(code) AS (SELECT ${chosen} FROM (SELECT ${facetRows} AS fd,
      (SELECT coalesce(sum(c.messages), 0) FROM channels c WHERE c.id IN (SELECT id FROM readable)) AS cm,
      (SELECT coalesce(max(id), 0) FROM messages) AS t))`;
  const limitFor = (code: number) => sql`LIMIT (SELECT CASE WHEN code = ${sql.raw(String(code))} THEN ${want} ELSE 0 END FROM plan)`;
  // The match list in order, kept to the ids of `set` (`+rowid`: as an FTS constraint the match would be re-run per id).
  const walkMatches = (set: SQL, code: number) =>
    sql`SELECT rowid AS id, ${score} AS score FROM message_search WHERE message_search MATCH ${match} AND +rowid IN (${set})
      AND ${bounds("rowid")} ORDER BY rowid ${order} ${limitFor(code)}`;
  const branches = [
    sql`SELECT m.id AS id, ${score} AS score FROM message_search CROSS JOIN messages m ON m.id = message_search.rowid
      WHERE message_search MATCH ${match} AND ${where} AND ${bounds("message_search.rowid")}
      ORDER BY message_search.rowid ${order} ${limitFor(planCode.fts)}`,
    relevance
      ? walkMatches(sql`SELECT m.id FROM messages m INDEXED BY messages_channel WHERE ${where}`, planCode.channels)
      : sql`SELECT id, NULL AS score FROM (${channelsWalk(s, sql`${where} AND ${bounds("m.id")}`, match, order, want)})`,
  ];
  if (driver) {
    const set = sql`SELECT fd.message_id FROM message_facets fd CROSS JOIN messages m ON m.id = fd.message_id
      WHERE fd.facet = ${driver[0]} AND fd.value IN ${inList(driver[1], "text")} AND ${where}`;
    branches.push(walkMatches(set, planCode.facet));
  }
  const cand = (name: SQL) =>
    sql`${name} (${sql.join(
      branches.map((b) => sql`SELECT id, score FROM (${b})`),
      sql` UNION ALL `,
    )})`;

  if (!relevance) {
    return sql`WITH ${readable}, ${plan}, ${cand(sql`cand AS MATERIALIZED`)}, p AS (SELECT id FROM cand)
      ${render(sql`m.id ${dir(!nf)}`)}`;
  }
  return sql`WITH ${readable}, ${plan}, ${cand(hitsCte(page))},
    p AS (SELECT h.id, h.score FROM hits h WHERE ${relevanceBounds(page, true)}
      ORDER BY h.score ${dir(nf)}, h.id ${dir(!nf)} LIMIT ${v("limit")})
    ${render(sql`p.score ${dir(nf)}, m.id ${dir(!nf)}`)}`;
}

/**
 * The "channels" plan (code 0) of a page in id order: the searched channels' (channel_id, id)
 * index in `order`, keeping messages that pass `cond` and match (FTS5 seeks the match list to
 * each id), at most `want`. Named channels (up to MERGED_CHANNELS_LIMIT) are one ordered walk
 * each, merged by SQLite's compound ORDER BY, so the walk stops after `want` candidates. Others
 * (`pm`, long lists) walk the readable channels together through a sort, so every message of
 * those channels is read. The plan is chosen only when the channels hold few messages (see the
 * chooser), so the seeks (~20 µs each) stay few.
 */
function channelsWalk(s: MessageSearch, cond: SQL, match: SQL, order: SQL, want: SQL): SQL {
  const matches = sql`EXISTS (SELECT 1 FROM message_search WHERE message_search MATCH ${match} AND rowid = m.id)`;
  const limit = sql`LIMIT (SELECT CASE WHEN code = 0 THEN ${want} ELSE 0 END FROM plan)`;
  if (s.channels === "pm" || s.channels.length > MERGED_CHANNELS_LIMIT) {
    return sql`SELECT m.id FROM messages m INDEXED BY messages_channel WHERE ${cond} AND ${matches} ORDER BY m.id ${order} ${limit}`;
  }
  // An arm is a lazy ordered walk only without a LIMIT of its own; its channel key is NULL (no
  // rows) for a channel the viewer may not read.
  const arms = s.channels.map(
    (_, i) => sql`SELECT m.id FROM messages m INDEXED BY messages_channel
      WHERE m.channel_id = (SELECT id FROM readable WHERE id = ${v(`channel${i}`)}) AND ${cond} AND ${matches}`,
  );
  return sql`SELECT id FROM (${sql.join(arms, sql` UNION ALL `)} ORDER BY 1 ${order} ${limit})`;
}
