/**
 * drizzle's constructor extracts the relational config of every table (`extractTablesRelationalConfig`:
 * 5.5 % of the isolate's CPU in a profile of the mixed benchmark when it ran per request) and
 * builds a query builder per table. So the database object is built once per isolate (per binding
 * or URL), and a request's handle is that object with the request's own session — its client: a
 * D1 session, a metered client, a replica router — layered on top: one small object per request.
 */
interface DrizzleDb {
  session: unknown;
  query: unknown;
}

/**
 * `base` seen through `session` (which runs the statements of every builder: `select`, `insert`,
 * `batch`, raw `run`/`all`). The relational `query` API (unused by the stores) is rebuilt on first
 * use by `relational`, so that it too runs on this request's session.
 */
export function layered<D extends DrizzleDb>(base: D, session: D["session"], client: unknown, relational: () => D["query"]): D {
  const db = Object.create(base) as D;
  let query: D["query"] | undefined;
  Object.defineProperties(db, {
    session: { value: session },
    $client: { value: client },
    query: { get: () => (query ??= relational()) },
  });
  return db;
}

/** Memoizes `build` per key object (a binding): one value per isolate and binding. */
export function oncePer<K extends object, V>(build: (key: K) => V): (key: K) => V {
  const built = new WeakMap<K, V>();
  return (key) => {
    let v = built.get(key);
    if (v === undefined) built.set(key, (v = build(key)));
    return v;
  };
}
