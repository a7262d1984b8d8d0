import { sql, type Column, type SQL } from "drizzle-orm";
import type { List, SqlDialect } from "./types";

const json = (values: List) => (typeof values === "string" ? values : JSON.stringify(values));
const param = (values: List | SQL) => (typeof values === "object" && !Array.isArray(values) ? (values as SQL) : sql`${json(values as List)}`);
const typed = (type: string, v: unknown) => sql`CAST(${v ?? null} AS ${sql.raw(type)})`;

/** Postgres through the Neon driver (see SqlDialect for what each member means). */
export const postgresDialect: SqlDialect = {
  backend: "postgres",
  serializesWrites: false,
  batchCostsTransaction: true,
  numberedParams: true,
  reportsRowsRead: false,
  readSessions: false,
  pick: (impls) => impls.postgres,
  jsonRows: (values, alias, as = "int") => {
    const value = as === "int" ? sql`CAST(value AS BIGINT)` : sql`value`;
    return sql`(SELECT ${value} AS value, ord - 1 AS key FROM jsonb_array_elements_text(CAST(${param(values)} AS JSONB)) WITH ORDINALITY AS t(value, ord)) ${sql.raw(alias)}`;
  },
  jsonItem: (expr, index) => sql`(CAST(${expr} AS JSONB) ->> ${sql.raw(String(index))})`,
  jsonValues: (values, alias) =>
    sql`(SELECT CAST(value AS TEXT) AS value FROM jsonb_array_elements(CAST(${Array.isArray(values) ? JSON.stringify(values) : values} AS JSONB)) AS t(value)) ${sql.raw(alias)}`,
  jsonFirstItemField: (column, key, field) => {
    const [head, sub] = field.split(".");
    const item = sql`(CAST(${column} AS JSONB) -> ${typed("TEXT", key)} -> 0)`;
    return sub ? sql`(${item} -> ${typed("TEXT", head)} ->> ${typed("TEXT", sub)})` : sql`(${item} ->> ${typed("TEXT", head)})`;
  },
  jsonHasAnyKey: (column, keys) => sql`EXISTS (SELECT 1 FROM jsonb_object_keys(CAST(${column} AS JSONB)) AS rk(key) WHERE rk.key IN ${keys})`,
  jsonArrayAgg: (expr, distinct = false) => sql`COALESCE(CAST(json_agg(${distinct ? sql`DISTINCT ` : sql``}${expr}) AS TEXT), '[]')`,
  jsonArray: (...items) => sql`json_build_array(${sql.join(items, sql`, `)})`,
  jsonObject: (...parts) => sql`json_build_object(${sql.join(parts, sql`, `)})`,
  jsonValue: (expr) => sql`CAST(${expr} AS JSON)`,
  joinedText: (expr) => sql`string_agg(CAST(${expr} AS TEXT), ',')`,
  greatest: (a, b) => sql`GREATEST(${a}, ${b})`,
  least: (a, b) => sql`LEAST(${a}, ${b})`,
  int: (v) => typed("BIGINT", v),
  text: (v) => typed("TEXT", v),
  position: (haystack, needle) => sql`strpos(${haystack}, ${needle})`,
  lastId: (table) => sql`(SELECT currval(pg_get_serial_sequence(${table}, 'id')))`,
  epochNow: sql`CAST(extract(epoch from now()) AS BIGINT)`,
  unindexed: (col: SQL | Column) => sql`${col}`,
  existsFlag: (subquery) => sql`((${subquery} LIMIT 1) IS NOT NULL)`,
  lateralRows: (_table, alias, walk) => ({ from: sql`cross join lateral (${walk}) ${sql.identifier(alias)}`, where: sql`true` }),
  transactionLock: (key) => sql`FROM (SELECT pg_advisory_xact_lock(${key})) AS tx_lock`,
};

/**
 * A text[] from a list, passed as one parameter in array-literal form (for the Postgres search
 * query functions). A cast of a parameter, not a subquery: a custom plan (the driver's unnamed
 * statements) folds `es_search_query(<it>)` into a constant tsquery at planning, so the planner
 * estimates its matches from the column's statistics, and the function runs once, not once per
 * row compared (a subquery's value is a run-time parameter: the function, stemming included, ran
 * for every row of the walk, 60 ms of a 5,000-row post search).
 */
export const pgTextArray = (values: readonly string[] | SQL): SQL => sql`CAST(${Array.isArray(values) ? pgArrayLiteral(values) : values} AS TEXT[])`;

/** A bigint[] of ids as one parameter, for `= ANY(…)`: a constant when planning, as `pgTextArray` is (`inList` is a subquery). */
export const pgIdArray = (ids: readonly number[] | SQL): SQL => sql`CAST(${Array.isArray(ids) ? pgIdLiteral(ids) : ids} AS BIGINT[])`;

/** The parameter of `pgIdArray` (for a placeholder's value). */
export const pgIdLiteral = (ids: readonly number[]): string => `{${ids.map((id) => Math.trunc(Number(id))).join(",")}}`;

/** `{"a","b \"c\""}`: each item quoted, its backslashes and double quotes escaped (the parameter of `pgTextArray`). */
export const pgArrayLiteral = (values: readonly string[]): string => `{${values.map((v) => `"${v.replace(/[\\"]/g, "\\$&")}"`).join(",")}}`;
