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
import type { ReadSession } from "./read-session";
import type { Executor } from "./types";

export type { DbMeter } from "./d1";
export { BOOKMARK_HEADER, d1Constraint, requestBookmark, type ReadSession } from "./read-session";

export { BACKEND, isPostgres } from "./backend";
export { schema } from "./schema";
export type { RawResult, Row } from "./types";

/**
 * The handle every store takes; one per request, on `c.var.db`. Its builder types are those of
 * the SQLite schema; on Postgres the same calls run on the pg-core tables (see ./schema.ts).
 */
export type Db = DrizzleD1Database<typeof sqliteTables> & {
  readonly exec: Executor;
  /** The bookmark for the response (`X-Db-Bookmark`), or null: see ./read-session.ts. */
  readonly bookmark: () => Promise<string | null>;
  /** Postgres with a read replica: where the request's reads went so far (test mode's `X-Debug-Db-Reads`). */
  readonly readsWent?: readonly string[];
  /** Whether this handle's reads may come from a replica that lags the primary (no bookmark to wait for). */
  readonly readsMayLag: boolean;
  /** The same database with every statement on the primary (for a lookup that missed on a replica). */
  readonly onPrimary: () => Db;
};

type DbEnv = Pick<Env, "DB"> & { DATABASE_URL?: string; DATABASE_READ_URL?: string; DB_PROXY?: string };

/**
 * Opens the configured database. With a `meter`, every round trip (and on D1 the rows read) is
 * reported to it (test mode's `X-Debug-Db-Calls` and `X-Debug-Rows-Read`). With `read` (an HTTP
 * request), reads may go to replicas under the read-your-writes rule of ./read-session.ts; without
 * it (Durable Objects, background work) everything runs on the primary.
 */
export function openDb(env: DbEnv, meter?: DbMeter, read?: ReadSession): Db {
  const { orm, exec, bookmark, readsWent } = isPostgres
    ? openPg({ url: env.DATABASE_URL, readUrl: env.DATABASE_READ_URL || undefined, proxy: env.DB_PROXY }, meter && (() => meter.call()), read)
    : openD1(env.DB, meter, read);
  // On the request's own object (drizzle's shared parts are its prototype): no copy of drizzle.
  const readsMayLag = !!read && read.reads && read.bookmark === null && (!isPostgres || !!env.DATABASE_READ_URL);
  const onPrimary = () => openDb(env, meter, read && { reads: false, bookmark: null });
  return Object.assign(orm as unknown as DrizzleD1Database<typeof sqliteTables>, { exec, bookmark, readsWent, readsMayLag, onPrimary });
}
