/**
 * The SQL dialect of this deployment's database, chosen once per isolate with the backend
 * (src/db/backend.ts): one object (./sqlite.ts or ./postgres.ts) implementing SqlDialect. The
 * stores write SQL both databases accept and take the few fragments that differ from here.
 */
import { sql, type SQL } from "drizzle-orm";
import { BACKEND } from "../backend";
import { postgresDialect } from "./postgres";
import { sqliteDialect } from "./sqlite";
import type { List, SqlDialect } from "./types";

export type { SqlDialect } from "./types";
export { pgArrayLiteral, pgIdArray, pgIdLiteral, pgTextArray } from "./postgres";

export const dialect: SqlDialect = BACKEND === "postgres" ? postgresDialect : sqliteDialect;

// The fragments as plain functions, for the stores' SQL templates.
export const {
  jsonRows,
  jsonItem,
  jsonValues,
  jsonFirstItemField,
  jsonHasAnyKey,
  jsonArrayAgg,
  jsonArray,
  jsonObject,
  jsonValue,
  joinedText,
  greatest,
  least,
  int,
  text,
  position,
  lastId,
  epochNow,
  unindexed,
  existsFlag,
  lateralRows,
} = dialect;

/** `(SELECT value FROM <the items of a JSON array>)`, for `x IN ${inList(ids)}`. */
export const inList = (values: List | SQL, as: "int" | "text" = "int"): SQL => sql`(SELECT value FROM ${dialect.jsonRows(values, "jl", as)})`;
