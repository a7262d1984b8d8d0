import { sql, type Column, type SQL } from "drizzle-orm";
import type { List, SqlDialect } from "./types";

const json = (values: List) => (typeof values === "string" ? values : JSON.stringify(values));
const param = (values: List | SQL) => (typeof values === "object" && !Array.isArray(values) ? (values as SQL) : sql`${json(values as List)}`);

/** SQLite as D1 runs it (see SqlDialect for what each member means). */
export const sqliteDialect: SqlDialect = {
  backend: "d1",
  serializesWrites: true,
  batchCostsTransaction: false,
  numberedParams: false,
  reportsRowsRead: true,
  readSessions: true,
  pick: (impls) => impls.sqlite,
  jsonRows: (values, alias) => sql`json_each(${param(values)}) ${sql.raw(alias)}`,
  jsonItem: (expr, index) => sql`json_extract(${expr}, ${`$[${index}]`})`,
  jsonValues: (values, alias) => sql`json_each(${Array.isArray(values) ? JSON.stringify(values) : values}) ${sql.raw(alias)}`,
  jsonFirstItemField: (column, key, field) => sql`json_extract(${column}, ${`$."${key.replaceAll('"', "")}"[0].${field}`})`,
  jsonHasAnyKey: (column, keys) => sql`EXISTS (SELECT 1 FROM json_each(${column}) rk WHERE rk.key IN ${keys})`,
  jsonArrayAgg: (expr, distinct = false) => sql`json_group_array(${distinct ? sql`DISTINCT ` : sql``}${expr})`,
  jsonArray: (...items) => sql`json_array(${sql.join(items, sql`, `)})`,
  jsonObject: (...parts) => sql`json_object(${sql.join(parts, sql`, `)})`,
  jsonValue: (expr) => sql`json(${expr})`,
  joinedText: (expr) => sql`group_concat(${expr})`,
  greatest: (a, b) => sql`max(${a}, ${b})`,
  least: (a, b) => sql`min(${a}, ${b})`,
  int: (v) => sql`${v ?? null}`,
  text: (v) => sql`${v ?? null}`,
  position: (haystack, needle) => sql`instr(${haystack}, ${needle})`,
  lastId: (table) => sql`(SELECT max(id) FROM ${sql.identifier(table)})`,
  epochNow: sql`CAST(strftime('%s', 'now') AS INTEGER)`,
  unindexed: (col: SQL | Column) => sql`+${col}`,
  existsFlag: (subquery) => sql`exists(${subquery})`,
  lateralRows: (table, alias, walk) => ({
    from: sql`cross join ${sql.identifier(table)} ${sql.identifier(alias)}`,
    where: sql`${sql.identifier(alias)}.id in (${walk})`,
  }),
  transactionLock: () => sql``,
};
