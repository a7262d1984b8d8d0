import type { Context, Next } from "hono";
import { BOOKMARK_HEADER, d1Constraint, openDb, requestBookmark, type Db, type ReadSession } from "../db";
import { dialect } from "../db/dialect";
import type { AppEnv } from "../http/types";

/**
 * The per-request services on `c.var` (Unkey's `init()` shape), set once here so that handlers,
 * middleware and services reach bindings only through them:
 * - `db`: the database handle, in the request's read session (a bookmark keeps reads at least as new
 *   as the client's own writes; src/db/read-session.ts, docs/postgres.md "Read replicas");
 * - `files`: the R2 bucket of file contents and profile images;
 * - `bans`: the KV namespace of rate-limit bans;
 * - `rateLimiter`: the rate limiter object of a caller.
 * Durable Objects and the relay open what they need from their own `env` (they have no request).
 * On the way out it returns the bookmark and, in test mode, the database meter's headers.
 */
export async function provideServices(c: Context<AppEnv>, next: Next) {
  c.set("files", c.env.FILES);
  c.set("bans", c.env.KV);
  c.set("rateLimiter", (caller: string) => c.env.RATE_LIMITER.getByName(caller));
  // Reads may go to replicas; the client's bookmark keeps them at least as new as its own writes
  // (src/db/read-session.ts, docs/postgres.md, "Read replicas").
  const read: ReadSession = {
    reads: c.req.method === "GET" || c.req.method === "HEAD",
    bookmark: requestBookmark(c.req.header(BOOKMARK_HEADER)),
  };
  // Test mode, or the benchmark's meter alone (BENCH_ROWS_READ, which turns on nothing else):
  // count the request's database round trips (X-Debug-Db-Calls) and, on D1, the rows they read
  // (X-Debug-Rows-Read: the sum of D1's meta.rows_read; X-Debug-Sql-Ms: of its meta.duration).
  const metered = c.env.ALLOW_TEST_CLOCK === "1" || c.env.BENCH_ROWS_READ === "1";
  let calls = 0;
  let rowsRead = 0;
  let sqlMs = 0;
  c.set("db", openDb(c.env, metered ? { call: () => calls++, rowsRead: (n) => (rowsRead += n), sqlMs: (ms) => (sqlMs += ms) } : undefined, read));
  await next();
  await returnBookmark(c, c.var.db);
  if (!metered) return;
  try {
    c.res.headers.set("X-Debug-Db-Calls", String(calls));
    if (dialect.reportsRowsRead) {
      c.res.headers.set("X-Debug-Rows-Read", String(rowsRead));
      c.res.headers.set("X-Debug-Sql-Ms", sqlMs.toFixed(3));
    }
    // Where the request's D1 session started: "first-unconstrained", "first-primary" or "bookmark".
    if (dialect.readSessions) c.res.headers.set("X-Debug-Db-Session", read.bookmark ? "bookmark" : d1Constraint(read));
    // Postgres with a read replica: where the reads went, e.g. "replica" or "replica,primary".
    if (c.var.db.readsWent) c.res.headers.set("X-Debug-Db-Reads", c.var.db.readsWent.join(","));
  } catch {
    // Immutable headers (a proxied WebSocket upgrade): nothing to report.
  }
}

/** The request's bookmark on its response (`X-Db-Bookmark`), for the client's next request. */
async function returnBookmark(c: Context<AppEnv>, db: Db) {
  const bookmark = await db.bookmark();
  if (!bookmark) return;
  try {
    c.res.headers.set(BOOKMARK_HEADER, bookmark);
  } catch {
    // Immutable headers (a proxied WebSocket upgrade): nothing to return.
  }
}
