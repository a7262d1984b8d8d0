import type { Db } from "../../db";
import { dialect, pgArrayLiteral, pgIdLiteral } from "../../db/dialect";
import { allRows, boundShape, type BoundQuery } from "../../db/batch";
import type { Page } from "../../http/pagination";
import { readMessage, type MessageRecord } from "../messages";
import { searchShapeKey, searchValues, type MessageSearch } from "./filters";
import { fts5SearchSql, messageMatch, type SearchPlan } from "./fts5";
import { postgresSearchSql } from "./postgres";

export { RELEVANCE_WINDOW, type MessageSearch } from "./filters";
export type { SearchPlan } from "./fts5";

/**
 * Runs a message search as ONE SQL statement (one round trip): the readable channels, the
 * word match (stemmed), every filter as a condition on the message or an EXISTS on its
 * facets, the page, and the rendered columns of the page's messages only. Deleted messages
 * never match (they leave the FTS index when deleted, and the filters exclude them too).
 */
export async function searchMessages(db: Db, s: MessageSearch, page: Page, viewerId: number | null, forcePlan?: SearchPlan): Promise<MessageRecord[]> {
  const rows = await allRows(db, searchSql(s, page, viewerId, forcePlan));
  return rows.map(readMessage);
}

/**
 * The one statement of a search on the active backend, compiled once per shape and bound to this
 * search's values (search/filters.ts). `forcePlan` picks one of D1's candidate plans (tests
 * compare them); Postgres's planner chooses its own.
 */
export function searchSql(s: MessageSearch, page: Page, viewerId: number | null, forcePlan?: SearchPlan): BoundQuery {
  const values = searchValues(s, page, viewerId);
  return dialect.pick({
    postgres: () =>
      boundShape(searchShapeKey(s, page, viewerId), () => postgresSearchSql(s, page, viewerId), {
        ...values,
        terms: pgArrayLiteral(s.terms),
        channelArray: s.channels === "pm" ? null : pgIdLiteral(s.channels),
      }),
    sqlite: () =>
      boundShape(searchShapeKey(s, page, viewerId, forcePlan), () => fts5SearchSql(s, page, viewerId, forcePlan), {
        ...values,
        match: s.terms.length ? messageMatch(s) : "",
      }),
  })();
}
