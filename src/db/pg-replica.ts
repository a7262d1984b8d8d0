import type { NeonQueryFunction, NeonQueryPromise } from "@neondatabase/serverless";
import type { ReadSession } from "./read-session";

type Client = NeonQueryFunction<false, true>;
type Pending = NeonQueryPromise<false, true>;
type Data = { queryData: { query: string; params: unknown[] }; opts?: object };

// True only on a standby that has replayed the primary's WAL up to the bookmark. NULL (a database
// that is not a standby, e.g. the tests' stale copy) counts as behind: such a copy cannot show
// that it holds the client's write.
const CAUGHT_UP = "SELECT (pg_last_wal_replay_lsn() >= $1::pg_lsn) IS TRUE AS fresh";
// The primary's WAL position once the request's writes have committed: the response's bookmark.
const PRIMARY_POSITION = "SELECT pg_current_wal_lsn()::text AS lsn";

export interface ReadRouter {
  /** Runs read-only statements (one, or several as one snapshot) where the rule allows; their results. */
  read(queries: Pending[]): Promise<unknown[]>;
  /** The request is about to write: from now on it reads from the primary too. */
  wrote(): void;
  /** The bookmark to return: the primary's position after this request's writes, else the client's own. */
  bookmark(): Promise<string | null>;
  /** Where this request's reads went so far, in order without repeats (test mode's `X-Debug-Db-Reads`). */
  readonly readsWent: ("replica" | "primary")[];
}

interface RouterParts {
  primary: Client;
  replica: Client;
  session: ReadSession;
  count: () => void;
  runTransaction(raw: Client, queries: Pending[], opts: object, count: () => void): Promise<unknown[]>;
}

/**
 * Where a request's read-only work goes when a read replica is configured (docs/postgres.md, "Read replicas"):
 * - a request that is not a GET/HEAD, or that has written, or whose bookmark is malformed: primary;
 * - a GET without a bookmark: the replica (it may lag; the client has shown no write to wait for);
 * - a GET with a bookmark: a single statement goes to the replica together with a check that the
 *   replica has replayed up to the bookmark, in one round trip and one read-committed transaction
 *   (the statement's snapshot is taken after the check, so it holds everything the check saw); if
 *   the replica is behind, the statement and the rest of the request go to the primary (one more
 *   round trip). Several statements that must share one snapshot go to the primary: on a standby
 *   that snapshot would be taken before the check could vouch for it.
 */
export function readRouter({ primary, replica, session, count, runTransaction }: RouterParts): ReadRouter {
  let onPrimary = !session.reads || session.bookmark === "";
  let wrote = false;
  const readsWent: ("replica" | "primary")[] = [];
  const went = (where: "replica" | "primary") => readsWent.at(-1) !== where && readsWent.push(where);
  const onPrimaryRun = async (queries: Pending[]) => {
    went("primary");
    if (queries.length > 1) return runTransaction(primary, queries, {}, count);
    count();
    return [await queries[0]];
  };
  const copy = (q: Pending) => {
    const { queryData, opts } = q as unknown as Data;
    return replica.query(queryData.query, queryData.params, opts as never) as Pending;
  };
  return {
    readsWent,
    async read(queries) {
      if (onPrimary) return onPrimaryRun(queries);
      const bookmark = session.bookmark;
      if (!bookmark) {
        went("replica");
        if (queries.length > 1) return runTransaction(replica, queries, {}, count);
        count();
        return [await copy(queries[0])];
      }
      if (queries.length > 1) return onPrimaryRun(queries);
      count();
      const check = replica.query(CAUGHT_UP, [bookmark]) as Pending;
      const [caughtUp, result] = (await replica.transaction([check, queries[0]], { isolationLevel: "ReadCommitted", readOnly: true })) as unknown as [
        { rows: { fresh: unknown }[] },
        unknown,
      ];
      if (caughtUp.rows[0]?.fresh) {
        went("replica");
        return [result];
      }
      onPrimary = true;
      return onPrimaryRun(queries);
    },
    wrote() {
      wrote = true;
      onPrimary = true;
    },
    async bookmark() {
      if (!wrote) return session.bookmark || null;
      count();
      const r = (await primary.query(PRIMARY_POSITION)) as unknown as { rows: { lsn: string }[] };
      return r.rows[0]?.lsn ?? null;
    },
  };
}
