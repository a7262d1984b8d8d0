import { sql, type SQL } from "drizzle-orm";
import { pgIdArray, pgTextArray } from "../../db/dialect";
import type { Page } from "../../http/pagination";
import { placeholder as v } from "../../db/batch";
import { relevanceBounds, RELEVANCE_WINDOW, searchBounds, searchFrame, type MessageSearch } from "./filters";

// Message search on Postgres: the stored `search_vector` (the text split at punctuation as FTS5
// splits it, Porter stems, accents folded, no stop words — schema/pg/migrations/0001), GIN-indexed
// over live messages, matched by `es_search_query` (every word required, each as a phrase, as on
// D1) and ranked by ts_rank. The planner picks the walk (GIN, channel index, facets) itself.

/** The tsquery of search words: every word required, each as a phrase (messages and posts). */
export const tsQuery = (terms: string[] | SQL): SQL => sql`es_search_query(${pgTextArray(terms)})`;

/**
 * The statement of a search on Postgres. With words and `order=relevance`, the newest
 * RELEVANCE_WINDOW candidates are ranked (score = -ts_rank, so lower is more relevant, as
 * bm25 is on D1, and the keyset bounds are shared); `order=id` takes one page.
 */
export function postgresSearchSql(s: MessageSearch, page: Page, viewerId: number | null): SQL {
  const frame = searchFrame(s, page, viewerId);
  const { dir, nf, readable, render } = frame;
  if (!s.terms.length) return frame.withoutWords;
  // The GIN index covers live messages only: the condition must be in the query as written.
  // The named channels as constants too (the readable ones are a subquery): the planner then
  // estimates their share of messages from the column's statistics and picks the walk (an
  // `inList` is a subquery of unknown rows: it walked every channel's messages newest first).
  // Placeholders bound by `searchSql`: `terms` and `channelArray` (array literals).
  const named = s.channels === "pm" ? sql`` : sql` AND m.channel_id = ANY(${pgIdArray(v("channelArray"))})`;
  const where = sql`${frame.where}${named} AND m.is_deleted = 0`;

  // The query inline (not a CTE): planned as a constant, its matches estimated from the column's
  // statistics, so a common word walks messages newest first and a rare one the GIN index.
  const matches = sql`m.search_vector @@ ${tsQuery(v("terms"))} AND ${where}`;
  if (s.order !== "relevance") {
    return sql`WITH ${readable}, p AS (SELECT m.id FROM messages m WHERE ${matches} AND ${searchBounds("m.id", page)}
        ORDER BY m.id ${dir(!nf)} LIMIT ${v("limit")})
      ${render(sql`m.id ${dir(!nf)}`)}`;
  }
  return sql`WITH ${readable},
    hits AS MATERIALIZED (SELECT c.id, -ts_rank(c.search_vector, ${tsQuery(v("terms"))}) AS score
      FROM (SELECT m.id, m.search_vector FROM messages m WHERE ${matches} ORDER BY m.id DESC LIMIT ${RELEVANCE_WINDOW}) c),
    p AS (SELECT h.id, h.score FROM hits h WHERE ${relevanceBounds(page, true)}
      ORDER BY h.score ${dir(nf)}, h.id ${dir(!nf)} LIMIT ${v("limit")})
    ${render(sql`p.score ${dir(nf)}, m.id ${dir(!nf)}`)}`;
}
