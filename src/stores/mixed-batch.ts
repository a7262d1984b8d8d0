import { Column, is, sql, SQL } from "drizzle-orm";
import { statement } from "./batch";
import type { Db } from "./db";

/** What drizzle's own batch uses of a query builder: its prepared query and result mapping. */
interface Preparable {
  _prepare(): { getQuery(): { sql: string; params: unknown[] }; mapResult(result: unknown, isFromBatch?: boolean): unknown };
}

type BatchItem = SQL | PromiseLike<unknown>;
type BatchResult<T> = T extends SQL ? D1Result : Awaited<T>;

/**
 * Runs drizzle query builders and raw `sql` statements (with parameters) atomically in one round
 * trip. Builder results come back mapped as drizzle maps them (`await builder` types); raw
 * statements give their D1 result. drizzle maps batch rows by column position from row objects,
 * so a select in a batch must not repeat a column name (alias joined columns, as the post
 * selection does). Any failing statement rolls the whole batch back and rejects.
 */
export async function mixedBatch<const T extends readonly BatchItem[]>(db: Db, items: T): Promise<{ -readonly [K in keyof T]: BatchResult<T[K]> }> {
  const mappers: (((r: D1Result) => unknown) | null)[] = [];
  const stmts = items.map((item) => {
    if (is(item, SQL)) {
      mappers.push(null);
      return statement(db, item);
    }
    const prepared = (item as unknown as Preparable)._prepare();
    const { sql, params } = prepared.getQuery();
    mappers.push((r) => prepared.mapResult(r, true));
    return db.$client.prepare(sql).bind(...params);
  });
  const results = await db.$client.batch(stmts);
  return results.map((r, i) => (mappers[i] ? mappers[i](r) : r)) as { -readonly [K in keyof T]: BatchResult<T[K]> };
}

/** True for the error D1 raises when a statement breaks a constraint (the batch was rolled back). */
export function constraintFailed(err: unknown, pattern: RegExp): boolean {
  const message = String((err as { message?: unknown })?.message ?? err);
  const cause = String((err as { cause?: { message?: unknown } })?.cause?.message ?? "");
  return pattern.test(message) || pattern.test(cause);
}

/**
 * Select fields with every column aliased `prefix + key`, so that a select joining several tables
 * repeats no column name and can run in a batch. Decoding (JSON, booleans) is kept.
 */
export function aliasedFields(fields: Record<string, Column | SQL | SQL.Aliased>, prefix: string): Record<string, SQL.Aliased> {
  return Object.fromEntries(
    Object.entries(fields).map(([key, f]) => {
      const expr = is(f, Column) ? sql`${f}`.mapWith(f) : is(f, SQL) ? f : f.sql;
      return [key, expr.as(prefix + key)];
    }),
  );
}
