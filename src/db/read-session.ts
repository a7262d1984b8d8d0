import { BACKEND, type Backend } from "./backend";
/**
 * Reads that scale out, with read-your-writes (docs/postgres.md, "Read replicas"). Every response of a request
 * that used the database may carry a bookmark (`X-Db-Bookmark`): the position of the database that
 * the request's work reached (D1: the session's bookmark; Postgres: the primary's WAL position after
 * the request's writes). A client sends its latest bookmark back on its next requests; a request
 * reads from a replica only where the replica is known to be at least at that position, else from
 * the primary. A request without a bookmark may read anything a replica has.
 */
export const BOOKMARK_HEADER = "X-Db-Bookmark";

/** What a request brings to the choice of where its reads go. */
export interface ReadSession {
  /** GET or HEAD: the request is expected only to read (a write still goes to the primary). */
  reads: boolean;
  /** The bookmark the client sent back; `""` when it sent one that is malformed. */
  bookmark: string | null;
}

// A D1 bookmark is an opaque token of hex groups (locally e.g. `00000000-00000003-00004ff8-<32 hex>`);
// anything else is refused here rather than passed on to fail the request's first query.
const D1_BOOKMARK = /^[0-9a-f]{1,32}(-[0-9a-f]{1,64}){1,5}$/i;
// A Postgres WAL position as pg_lsn prints it.
const PG_LSN = /^[0-9a-f]{1,8}\/[0-9a-f]{1,8}$/i;

/** The bookmark of a request's header for `backend`: null when absent, `""` when malformed. */
export function requestBookmark(value: string | undefined, backend: Backend = BACKEND): string | null {
  if (value === undefined || value.trim() === "") return null;
  const v = value.trim();
  return (backend === "d1" ? D1_BOOKMARK : PG_LSN).test(v) ? v : "";
}

/**
 * The D1 session a request runs in: after its client's bookmark (every replica it reads from is at
 * least there); without one, a read request may start anywhere ("first-unconstrained") and any
 * other request starts at the primary ("first-primary"), so the checks it makes before writing
 * see the latest state. A malformed bookmark also starts at the primary: never stale, never an error.
 */
export function d1Constraint(s: ReadSession): string {
  if (s.bookmark) return s.bookmark;
  return s.reads && s.bookmark === null ? "first-unconstrained" : "first-primary";
}
