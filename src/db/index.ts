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
import { CheckGate, type DeferredCheck } from "./deferred-check";

export type { DbMeter } from "./d1";
export type { DeferredCheck } from "./deferred-check";
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
  /** The database for work after the response (waitUntil): on the primary, outside the request's meter. */
  readonly background: () => Db;
  /** Makes `check` ride in the request's first read-only batch (./deferred-check.ts). */
  readonly defer: (check: DeferredCheck) => void;
  /** Runs a deferred check that has not run yet; throws its failure. */
  readonly settle: () => Promise<void>;
};

type DbEnv = Pick<Env, "DB"> & { DATABASE_URL?: string; DATABASE_READ_URL?: string; DB_PROXY?: string };

/**
 * Opens the configured database. With a `meter`, every round trip (and on D1 the rows read) is
 * reported to it (test mode's `X-Debug-Db-Calls` and `X-Debug-Rows-Read`). With `read` (an HTTP
 * request), reads may go to replicas under the read-your-writes rule of ./read-session.ts; without
 * it (Durable Objects, background work) everything runs on the primary.
 */
export function openDb(env: DbEnv, meter?: DbMeter, read?: ReadSession): Db {
  // drizzle's builders cannot carry a deferred check: their statements wait for it to run alone.
  let gate: CheckGate | undefined;
  const beforeOrm = () => gate?.settle() ?? Promise.resolve();
  const opened = isPostgres
    ? openPg({ url: env.DATABASE_URL, readUrl: env.DATABASE_READ_URL || undefined, proxy: env.DB_PROXY }, meter && (() => meter.call()), read, beforeOrm)
    : openD1(env.DB, meter, read, beforeOrm);
  const { orm, bookmark, readsWent } = opened;
  const readsMayLag = !!read && read.reads && read.bookmark === null && (!isPostgres || !!env.DATABASE_READ_URL);
  const onPrimary = () => openDb(env, meter, read && { reads: false, bookmark: null });
  gate = new CheckGate(opened.exec, readsMayLag ? () => onPrimary().exec : undefined);
  const g = gate;
  const exec = g.executor();
  // On the request's own object (drizzle's shared parts are its prototype): no copy of drizzle.
  return Object.assign(orm as unknown as DrizzleD1Database<typeof sqliteTables>, {
    exec,
    bookmark,
    readsWent,
    readsMayLag,
    onPrimary,
    background: () => openDb(env),
    defer: (check: DeferredCheck) => g.defer(check),
    settle: () => g.settle(),
  });
}
