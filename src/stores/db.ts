import { drizzle } from "drizzle-orm/d1";
import * as schema from "../../schema/tables";

/** The drizzle handle every store takes; one per request, on `c.var.db`. */
export type Db = ReturnType<typeof openDb>;

export function openDb(d1: D1Database) {
  return drizzle(d1, { schema });
}

export { schema };

/** Methods of a D1 prepared statement that each cost one round trip to the database. */
const STATEMENT_CALLS = new Set<PropertyKey>(["first", "all", "run", "raw"]);

/**
 * Wraps a D1 binding so that every round trip to the database (a statement's first/all/run/raw,
 * a batch, an exec) is counted. Test mode uses it to report the calls of a request in the
 * `X-Debug-Db-Calls` header, so tests can hold reads to one round trip.
 */
export function countingD1(d1: D1Database): { d1: D1Database; calls: () => number } {
  let calls = 0;
  const unwrapped = new WeakMap<object, D1PreparedStatement>();
  const wrap = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        if (prop === "bind") return (...values: unknown[]) => wrap(target.bind(...values));
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (!STATEMENT_CALLS.has(prop)) return value.bind(target);
        return (...args: unknown[]) => {
          calls += 1;
          return value.apply(target, args);
        };
      },
    });
    unwrapped.set(proxy, stmt);
    return proxy;
  };
  const proxy = new Proxy(d1, {
    get(target, prop) {
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query));
      if (prop === "batch") {
        return (stmts: D1PreparedStatement[]) => {
          calls += 1;
          return target.batch(stmts.map((s) => unwrapped.get(s) ?? s));
        };
      }
      if (prop === "exec") {
        return (query: string) => {
          calls += 1;
          return target.exec(query);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { d1: proxy, calls: () => calls };
}
