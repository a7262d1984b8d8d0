/**
 * The data layer's one entry: `openDb(env)` gives the stores a drizzle handle and a batch
 * executor for the backend this deployment is configured with (`DB_BACKEND`: D1 by default,
 * or Postgres through the Neon driver with `DATABASE_URL`). Stores write SQL once; where the
 * dialects differ they use the fragments of `./dialect`.
 */
import type { DrizzleD1Database } from "drizzle-orm/d1";
import type * as sqliteTables from "../../schema/tables";
import { isPostgres } from "./backend";
import { openD1 } from "./d1";
import { openPg } from "./pg";
import type { DbMeter } from "./d1";
import type { Executor } from "./types";

export type { DbMeter } from "./d1";

export { BACKEND, isPostgres } from "./backend";
export { schema } from "./schema";
export type { RawResult, Row } from "./types";

/**
 * The handle every store takes; one per request, on `c.var.db`. Its builder types are those of
 * the SQLite schema; on Postgres the same calls run on the pg-core tables (see ./schema.ts).
 */
export type Db = DrizzleD1Database<typeof sqliteTables> & { readonly exec: Executor };

type DbEnv = Pick<Env, "DB"> & { DATABASE_URL?: string; DB_PROXY?: string };

/**
 * Opens the configured database. With a `meter`, every round trip (and on D1 the rows read) is
 * reported to it (test mode's `X-Debug-Db-Calls` and `X-Debug-Rows-Read`).
 */
export function openDb(env: DbEnv, meter?: DbMeter): Db {
  const { orm, exec } = isPostgres ? openPg(env.DATABASE_URL, env.DB_PROXY, meter && (() => meter.call())) : openD1(env.DB, meter);
  return Object.assign(orm as unknown as DrizzleD1Database<typeof sqliteTables>, { exec });
}
