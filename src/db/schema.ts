import * as pgTables from "../../schema/pg/tables";
import * as sqliteTables from "../../schema/tables";
import { isPostgres } from "./backend";

/**
 * The tables of the active backend. Typed as the SQLite schema: `schema/parity.ts` proves at
 * compile time that both schemas have the same tables, keys and row types, so stores written
 * against one run unchanged on the other.
 */
export const schema = (isPostgres ? pgTables : sqliteTables) as unknown as typeof sqliteTables;
