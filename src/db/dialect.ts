/**
 * The few SQL fragments that differ between SQLite (D1) and Postgres. Everything else the
 * stores write is SQL both accept; these cover JSON lists, aggregates into JSON, scalar
 * min/max and parameters whose type Postgres cannot infer.
 */
import { sql, type Column, type SQL } from "drizzle-orm";
import { isPostgres } from "./backend";

type List = readonly (string | number)[] | string;
const json = (values: List) => (typeof values === "string" ? values : JSON.stringify(values));

/**
 * A FROM item named `alias` with one row per item of a JSON array: `alias.value` the item,
 * `alias.key` its index (one bound parameter for any length: D1 allows 100 per statement).
 * `as`: the items' type.
 */
export function jsonRows(values: List | SQL, alias: string, as: "int" | "text" = "int"): SQL {
  const param = typeof values === "object" && !Array.isArray(values) ? (values as SQL) : sql`${json(values as List)}`;
  if (!isPostgres) return sql`json_each(${param}) ${sql.raw(alias)}`;
  const value = as === "int" ? sql`CAST(value AS BIGINT)` : sql`value`;
  return sql`(SELECT ${value} AS value, ord - 1 AS key FROM jsonb_array_elements_text(CAST(${param} AS JSONB)) WITH ORDINALITY AS t(value, ord)) ${sql.raw(alias)}`;
}

/** `(SELECT value FROM <the items of a JSON array>)`, for `x IN ${inList(ids)}`. */
export const inList = (values: List | SQL, as: "int" | "text" = "int"): SQL => sql`(SELECT value FROM ${jsonRows(values, "jl", as)})`;

/** The item at `index` of a JSON array value (text), e.g. a row of `jsonRows(…, "j", "json")`. */
export const jsonItem = (expr: SQL, index: number): SQL =>
  isPostgres ? sql`(CAST(${expr} AS JSONB) ->> ${sql.raw(String(index))})` : sql`json_extract(${expr}, ${`$[${index}]`})`;

/** A FROM item over a JSON array whose items are themselves JSON (objects or arrays), as text. */
export function jsonValues(values: readonly unknown[], alias: string): SQL {
  if (!isPostgres) return sql`json_each(${JSON.stringify(values)}) ${sql.raw(alias)}`;
  return sql`(SELECT CAST(value AS TEXT) AS value FROM jsonb_array_elements(CAST(${JSON.stringify(values)} AS JSONB)) AS t(value)) ${sql.raw(alias)}`;
}

/** A JSON array (text) of `expr` over the group's rows; `[]` for none. */
export const jsonArrayAgg = (expr: SQL, distinct = false): SQL => {
  const d = distinct ? sql`DISTINCT ` : sql``;
  return isPostgres ? sql`COALESCE(CAST(json_agg(${d}${expr}) AS TEXT), '[]')` : sql`json_group_array(${d}${expr})`;
};

/** A JSON array of the given values. */
export const jsonArray = (...items: SQL[]): SQL =>
  isPostgres ? sql`json_build_array(${sql.join(items, sql`, `)})` : sql`json_array(${sql.join(items, sql`, `)})`;

/** A JSON object (text) from alternating keys and values. */
export const jsonObject = (...parts: SQL[]): SQL =>
  isPostgres ? sql`json_build_object(${sql.join(parts, sql`, `)})` : sql`json_object(${sql.join(parts, sql`, `)})`;

/** A JSON text value as JSON (to embed it in a JSON object rather than as a string). */
export const jsonValue = (expr: SQL): SQL => (isPostgres ? sql`CAST(${expr} AS JSON)` : sql`json(${expr})`);

/** The values of the group joined with commas. */
export const joinedText = (expr: SQL): SQL => (isPostgres ? sql`string_agg(CAST(${expr} AS TEXT), ',')` : sql`group_concat(${expr})`);

/** The larger of two values (SQLite's scalar max, Postgres's greatest). */
export const greatest = (a: SQL, b: SQL): SQL => (isPostgres ? sql`GREATEST(${a}, ${b})` : sql`max(${a}, ${b})`);

/** The smaller of two values. */
export const least = (a: SQL, b: SQL): SQL => (isPostgres ? sql`LEAST(${a}, ${b})` : sql`min(${a}, ${b})`);

/**
 * A parameter used where Postgres cannot infer its type from a column (a select list, CASE,
 * UNION): typed as an integer there; as is on SQLite.
 */
export const int = (v: number | null | undefined): SQL => (isPostgres ? sql`CAST(${v ?? null} AS BIGINT)` : sql`${v ?? null}`);

/** The same for text parameters. */
export const text = (v: string | null | undefined): SQL => (isPostgres ? sql`CAST(${v ?? null} AS TEXT)` : sql`${v ?? null}`);

/** Position of `needle` in `haystack` (1-based, 0 when absent). */
export const position = (haystack: SQL, needle: SQL): SQL => (isPostgres ? sql`strpos(${haystack}, ${needle})` : sql`instr(${haystack}, ${needle})`);

/**
 * The id the current batch's latest insert into `table` got. On D1, batches run one at a time,
 * so it is the largest id; on Postgres, the table's sequence value in this transaction, as a
 * subquery: `currval` is volatile, and `id = currval(…)` would be checked on every row (a scan of
 * the whole table, with a predicate lock on all of it) instead of once.
 */
export const lastId = (table: string): SQL =>
  isPostgres ? sql`(SELECT currval(pg_get_serial_sequence(${table}, 'id')))` : sql`(SELECT max(id) FROM ${sql.identifier(table)})`;


/** The database's clock in unix seconds (for reads that have no request clock at hand). */
export const epochNow: SQL = isPostgres ? sql`CAST(extract(epoch from now()) AS BIGINT)` : sql`CAST(strftime('%s', 'now') AS INTEGER)`;

/** Postgres only: a text[] from a list, passed as one JSON parameter (for the search query functions). */
export const pgTextArray = (values: readonly string[]): SQL =>
  sql`ARRAY(SELECT jsonb_array_elements_text(CAST(${JSON.stringify(values)} AS JSONB)))`;

/**
 * `col` kept from driving the plan: SQLite's unary `+` stops it from using `col`'s index (for a
 * condition nearly every row meets, e.g. `repost_of IS NULL`, it would read them all and sort).
 * Postgres plans by statistics and needs no hint: there the `+` hid the column's statistics, the
 * planner guessed 0.5 % of rows matched and costed a page ~200 times too high (3,652 vs 19 at
 * 100k posts), past `jit_above_cost` in the full statement, so every page was JIT-compiled.
 */
export const unindexed = (col: SQL | Column): SQL => (isPostgres ? sql`${col}` : sql`+${col}`);
