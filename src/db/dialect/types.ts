import type { Column, SQL } from "drizzle-orm";
import type { Backend } from "../backend";

/** A list passed as one JSON parameter: the values, or their JSON text. */
export type List = readonly (string | number)[] | string;

/**
 * Everything that differs between the two databases, as one object per dialect (chosen once per
 * isolate in ./index.ts). Code outside src/db/ never asks which database it runs on: it calls these
 * fragments, reads these capabilities, or picks an implementation with `pick`.
 */
export interface SqlDialect {
  readonly backend: Backend;
  /** Write batches never interleave (D1 runs them one at a time); on Postgres transactions run concurrently. */
  readonly serializesWrites: boolean;
  /** Several statements in one round trip cost a transaction (BEGIN/COMMIT): fold a scalar read into a column instead. */
  readonly batchCostsTransaction: boolean;
  /** Parameters are numbered (`$1`): a compiled statement placed after another must shift its numbers. */
  readonly numberedParams: boolean;
  /** The database reports rows read per statement (D1's `meta.rows_read`). */
  readonly reportsRowsRead: boolean;
  /** Reads go through a session with a consistency constraint (D1's Sessions API). */
  readonly readSessions: boolean;

  /** The implementation for this dialect out of two written per dialect (message search, word matching). */
  pick<T>(impls: { sqlite: T; postgres: T }): T;

  /**
   * A FROM item named `alias` with one row per item of a JSON array: `alias.value` the item,
   * `alias.key` its index (one bound parameter for any length: D1 allows 100 per statement).
   * `as`: the items' type.
   */
  jsonRows(values: List | SQL, alias: string, as?: "int" | "text"): SQL;
  /** The item at `index` of a JSON array value (text). */
  jsonItem(expr: SQL, index: number): SQL;
  /** A FROM item over a JSON array whose items are themselves JSON (objects or arrays), as text; or over its JSON text as SQL (a placeholder). */
  jsonValues(values: readonly unknown[] | SQL, alias: string): SQL;
  /** Field `field` (`a` or `a.b`) of the first item under key `key` of a JSON object column, as text. */
  jsonFirstItemField(column: SQL, key: string, field: string): SQL;
  /** Whether a JSON object column has any of the keys in `keys` (a one-parameter list expression). */
  jsonHasAnyKey(column: SQL, keys: SQL): SQL;
  /** A JSON array (text) of `expr` over the group's rows; `[]` for none. */
  jsonArrayAgg(expr: SQL, distinct?: boolean): SQL;
  /** A JSON array of the given values. */
  jsonArray(...items: SQL[]): SQL;
  /** A JSON object (text) from alternating keys and values. */
  jsonObject(...parts: SQL[]): SQL;
  /** A JSON text value as JSON (to embed it in a JSON object rather than as a string). */
  jsonValue(expr: SQL): SQL;
  /** The values of the group joined with commas. */
  joinedText(expr: SQL): SQL;
  /** The larger of two values (SQLite's scalar max, Postgres's greatest). */
  greatest(a: SQL, b: SQL): SQL;
  /** The smaller of two values. */
  least(a: SQL, b: SQL): SQL;
  /** An integer parameter (or a placeholder's SQL) where Postgres cannot infer its type from a column (a select list, CASE, UNION). */
  int(v: number | SQL | null | undefined): SQL;
  /** The same for text parameters. */
  text(v: string | SQL | null | undefined): SQL;
  /** Position of `needle` in `haystack` (1-based, 0 when absent). */
  position(haystack: SQL, needle: SQL): SQL;
  /**
   * The id the current batch's latest insert into `table` got. On D1, batches run one at a time,
   * so it is the largest id; on Postgres, the table's sequence value in this transaction, as a
   * subquery: `currval` is volatile, and `id = currval(…)` would be checked on every row (a scan of
   * the whole table, with a predicate lock on all of it) instead of once.
   */
  lastId(table: string): SQL;
  /** The database's clock in unix seconds (for reads that have no request clock at hand). */
  readonly epochNow: SQL;
  /**
   * `col` kept from driving the plan: SQLite's unary `+` stops it from using `col`'s index (for a
   * condition nearly every row meets, e.g. `repost_of IS NULL`, it would read them all and sort).
   * Postgres plans by statistics and needs no hint: there the `+` hid the column's statistics, the
   * planner guessed 0.5 % of rows matched and costed a page ~200 times too high (3,652 vs 19 at
   * 100k posts), past `jit_above_cost` in the full statement, so every page was JIT-compiled.
   */
  unindexed(col: SQL | Column): SQL;
  /**
   * Whether `subquery` (a `select 1 from … where …`) finds a row, as a value of the select list.
   * Postgres plans a correlated EXISTS twice (per row and hashed, choosing later); the per-post flags
   * of a rendered page were ~14 of them, planned on every request: there it is `(… LIMIT 1) IS NOT NULL`.
   */
  existsFlag(subquery: SQL): SQL;
  /**
   * The rows `walk` (a select of `id` from `table`, correlated with the FROM items before it) gives for
   * each row before it, as `alias`: a FROM item and the condition that goes with it. Postgres: a
   * `CROSS JOIN LATERAL`; SQLite has no LATERAL and takes `alias.id IN (walk)`, run once per row before.
   */
  lateralRows(table: string, alias: string, walk: SQL): { from: SQL; where: SQL };
  /** A FROM item (or nothing) that takes transaction lock `key`, held to commit (Postgres); nothing where writes are serialized. */
  transactionLock(key: number): SQL;
}
