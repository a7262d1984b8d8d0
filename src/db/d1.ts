import { type DrizzleD1Database, drizzle, SQLiteD1Session } from "drizzle-orm/d1";
import * as tables from "../../schema/tables";
import { layered, oncePer } from "./per-request";
import { d1Constraint, type ReadSession } from "./read-session";
import type { Executor, Query } from "./types";

/** Methods of a D1 prepared statement that each cost one round trip to the database. */
const STATEMENT_CALLS = new Set<PropertyKey>(["first", "all", "run", "raw"]);

/** What a request's reads cost, reported in test mode (`X-Debug-Db-Calls`, `X-Debug-Rows-Read`). */
export interface DbMeter {
  /** One round trip to the database. */
  call(): void;
  /** Rows the database read (D1's `meta.rows_read` of batches and `all`/`run`; `raw`/`first` carry no meta); not on Postgres. */
  rowsRead?(n: number): void;
  /** Milliseconds the database spent running the statements (D1's `meta.duration`, as the rows); not on Postgres. */
  sqlMs?(ms: number): void;
}

const metaRows = (r: unknown) => Number((r as D1Result | undefined)?.meta?.rows_read ?? 0);
const metaMs = (r: unknown) => Number((r as D1Result | undefined)?.meta?.duration ?? 0);

/**
 * `d1` with every round trip to the database (a statement's first/all/run/raw, a batch, an exec)
 * run through `around`, which gets the call to make and the method's name.
 */
function aroundRoundTrips(d1: D1Database, around: (call: () => Promise<unknown>, method: PropertyKey) => Promise<unknown>): D1Database {
  const unwrapped = new WeakMap<object, D1PreparedStatement>();
  const wrap = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        if (prop === "bind") return (...values: unknown[]) => wrap(target.bind(...values));
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (!STATEMENT_CALLS.has(prop)) return value.bind(target);
        return (...args: unknown[]) => around(() => value.apply(target, args), prop);
      },
    });
    unwrapped.set(proxy, stmt);
    return proxy;
  };
  return new Proxy(d1, {
    get(target, prop) {
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query));
      if (prop === "batch") return (stmts: D1PreparedStatement[]) => around(() => target.batch(stmts.map((s) => unwrapped.get(s) ?? s)), prop);
      if (prop === "exec") return (query: string) => around(() => target.exec(query), prop);
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Wraps a D1 binding so that every round trip to the database is counted, and the rows it read
 * summed (D1's meta of batches and `all`/`run`), for the headers of test mode.
 */
function countingD1(d1: D1Database, meter: DbMeter): D1Database {
  return aroundRoundTrips(d1, async (call, method) => {
    meter.call();
    const result = await call();
    if (meter.rowsRead && (method === "all" || method === "run" || method === "batch")) {
      for (const r of Array.isArray(result) ? result : [result]) {
        meter.rowsRead(metaRows(r));
        meter.sqlMs?.(metaMs(r));
      }
    }
    return result;
  });
}

/** `d1` whose every round trip first awaits `before` (a deferred check: ./deferred-check.ts). */
const gated = (d1: D1Database, before: () => Promise<void>): D1Database =>
  aroundRoundTrips(d1, async (call) => {
    await before();
    return call();
  });

type D1Orm = DrizzleD1Database<typeof tables>;

/** drizzle over a D1 binding, built once per isolate and binding (see ./per-request.ts). */
const baseOrm = oncePer((binding: D1Database) => drizzle(binding, { schema: tables }));

/**
 * drizzle over D1 and the executor of raw batches: D1 runs a batch as one serialized transaction.
 * With `read`, the request runs in a D1 session (Sessions API: reads may go to replicas, each at
 * least at the session's bookmark); `bookmark()` then gives the session's latest bookmark.
 */
export function openD1(binding: D1Database, meter?: DbMeter, read?: ReadSession, beforeOrm?: () => Promise<void>) {
  const session = read ? binding.withSession(d1Constraint(read)) : undefined;
  // A session has the binding's prepare and batch, all that drizzle and the executor use.
  const client = (session ?? binding) as D1Database;
  const d1 = meter ? countingD1(client, meter) : client;
  const exec: Executor = {
    kind: "d1",
    batch: (queries: Query[]) => d1.batch(queries.map((q) => d1.prepare(q.sql).bind(...q.params))),
    rows: (native) => {
      const r = native as D1Result;
      return { results: (r.results ?? []) as Record<string, unknown>[], changes: r.meta?.changes ?? 0 };
    },
  };
  const base = baseOrm(binding);
  // The session drizzle would build, over this request's client; the rest of `base` is shared.
  const { dialect, schema, options } = (base as unknown as { session: { dialect: never; schema: never; options: object } }).session;
  const orm = layered(
    base as unknown as D1Orm & { session: unknown },
    new SQLiteD1Session(beforeOrm ? gated(d1, beforeOrm) : d1, dialect, schema, options),
    d1,
    () => drizzle(d1, { schema: tables }).query,
  );
  return { orm, exec, bookmark: async () => session?.getBookmark() ?? null, readsWent: undefined };
}
