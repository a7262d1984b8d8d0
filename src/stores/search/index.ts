import type { SQL } from "drizzle-orm";
import type { Db } from "../../db";
import { dialect } from "../../db/dialect";
import { allRows } from "../../db/batch";
import type { Page } from "../../http/pagination";
import { readMessage, type MessageRecord } from "../messages";
import type { MessageSearch } from "./filters";
import { fts5SearchSql, type SearchPlan } from "./fts5";
import { postgresSearchSql } from "./postgres";

export { RELEVANCE_WINDOW, type MessageSearch } from "./filters";
export { ftsQuery, type SearchPlan } from "./fts5";

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
 * The one statement of a search on the active backend. `forcePlan` picks one of D1's candidate
 * plans (tests compare them); Postgres's planner chooses its own.
 */
export function searchSql(s: MessageSearch, page: Page, viewerId: number | null, forcePlan?: SearchPlan): SQL {
  return dialect.pick({ postgres: () => postgresSearchSql(s, page, viewerId), sqlite: () => fts5SearchSql(s, page, viewerId, forcePlan) })();
}
