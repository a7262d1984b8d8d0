import type { SQL } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "./db";

const dialect = new SQLiteSyncDialect();

type Query = SQL | { toSQL(): { sql: string; params: unknown[] } };

/**
 * A D1 prepared statement from a drizzle query builder or a `sql` template, so raw SQL with
 * parameters can share one `db.$client.batch()` with builder queries (drizzle's own batch
 * cannot bind parameters of raw `sql` items).
 */
export function statement(db: Db, q: Query): D1PreparedStatement {
  const { sql, params } = "toSQL" in q ? q.toSQL() : dialect.sqlToQuery(q);
  return db.$client.prepare(sql).bind(...params);
}

/** Runs statements atomically in one round trip. */
export function runBatch(db: Db, items: Query[]): Promise<D1Result[]> {
  return db.$client.batch(items.map((q) => statement(db, q)));
}
