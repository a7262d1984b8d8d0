import { and, asc, desc, gt, gte, lt, lte, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Page } from "../http/pagination";

/** WHERE conditions for a page's since/before bounds on the pagination column. */
export function pageWhere(col: SQLiteColumn, page: Page): SQL | undefined {
  const conds: SQL[] = [];
  if (page.sinceId !== undefined) conds.push(page.sinceInclusive ? gte(col, page.sinceId) : gt(col, page.sinceId));
  if (page.beforeId !== undefined) conds.push(page.beforeInclusive ? lte(col, page.beforeId) : lt(col, page.beforeId));
  return conds.length ? and(...conds) : undefined;
}

/** ORDER BY for a page: newest first, or oldest first for a negative count. */
export function pageOrder(col: SQLiteColumn, page: Page): SQL {
  return page.newestFirst ? desc(col) : asc(col);
}

/** LIMIT for a page: one more than wanted, so `meta.more` needs no count query. */
export const pageLimit = (page: Page) => page.limit + 1;
