import { Column, fillPlaceholders, is, Param, Placeholder, sql, SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { isPostgres } from "./backend";
import type { Db } from "./index";
import type { Query, RawResult, Row } from "./types";

const dialect = isPostgres ? new PgDialect() : new SQLiteSyncDialect();

/** What drizzle's own batch uses of a query builder: its prepared query and result mapping. */
interface Preparable {
  _prepare(): {
    getQuery(): { sql: string; params: unknown[] };
    mapResult(result: unknown, isFromBatch?: boolean): unknown;
    isResponseInArrayMode?(): boolean;
  };
}

/**
 * A statement compiled once and bound per request (the hot reads: see `src/stores/post-statement.ts`);
 * in a batch it gives its raw rows, like a `sql` template.
 */
export class BoundQuery {
  /** `scalar`: the statement returns one row with the one column `v` (it may then ride inside another). */
  constructor(
    readonly query: Query,
    readonly scalar = false,
  ) {}
  toSQL(): Query {
    return this.query;
  }
}

type BatchItem = SQL | BoundQuery | PromiseLike<unknown>;
type BatchResult<T> = T extends SQL | BoundQuery ? RawResult : Awaited<T>;

/** A `sql` template compiled for the active backend (`?` for D1, `$n` for Postgres). */
export function compile(q: SQL): Query {
  const { sql: text, params } = dialect.sqlToQuery(q);
  return { sql: text, params };
}

/** A `sql` template built for this request, compiled with its isolate values (`isolateValue`) bound. */
function compileBound(q: SQL): Query {
  const query = compile(q);
  return { sql: query.sql, params: bindParams(query.params) };
}

/** A per-request value of a statement compiled once per shape (`boundShape`), named `name` in its values. */
export const placeholder = (name: string): SQL => sql`${sql.placeholder(name)}`;

/** Per isolate: the values statements take from the isolate when bound (`isolateValue`), by name. */
const isolateValues = new Map<string, () => unknown>();

/**
 * A value a statement takes from the isolate at the time it is bound, not from the request (the
 * clients a render need not read: stores/app-refs.ts), named `name`. Statements compiled once and
 * statements built per request alike get it from `bindParams`.
 */
export function isolateValue(name: string, get: () => unknown): SQL {
  isolateValues.set(name, get);
  return placeholder(name);
}

const placeholderName = (p: unknown): string | undefined => (is(p, Placeholder) ? p.name : is(p, Param) && is(p.value, Placeholder) ? p.value.name : undefined);

/** Above 0 while `boundShapes` builds statements to compile once (builds are synchronous). */
let compiling = 0;

/**
 * `params` with their placeholders filled from `values`, and those of isolate values
 * (`isolateValue`) from the isolate. While `boundShapes` builds a statement to compile once (the
 * post render composed into the interactions page), isolate values stay placeholders: they are
 * bound each time the compiled statement runs, not baked in at its first build.
 */
export function bindParams(params: unknown[], values: Record<string, unknown> = {}): unknown[] {
  let all = values;
  let any = false;
  for (const p of params) {
    const name = placeholderName(p);
    if (name === undefined) continue;
    any = true;
    const get = name in all ? undefined : isolateValues.get(name);
    if (get) {
      if (all === values) all = { ...values };
      all[name] = compiling > 0 ? sql.placeholder(name) : get();
    }
  }
  return any ? fillPlaceholders(params, all) : params;
}

/**
 * A statement whose text depends only on `key`: built (with `placeholder(name)` for every
 * per-request value) and compiled on the first request of its shape, then bound to `values` by
 * name. drizzle's compile of a list's page cost 0.15-0.4 ms of CPU per request (more than its
 * building); this is a map lookup. Keys come from code (kinds and flags), so they are few; they
 * share one cache with `boundShapes`'.
 */
export function boundShape(key: string, build: () => SQL, values: Record<string, unknown>): BoundQuery {
  return boundShapes(key, () => [build()], values)[0];
}

/** Per isolate: statements compiled once per shape key (see boundShapes). */
const shapeLists = new Map<string, Query[]>();

/**
 * `boundShape` for the statements of one batch: `build` gives them (raw `sql`, or BoundQuery
 * whose parameters may still hold placeholders), compiled once per `key`, each bound to `values`.
 */
export function boundShapes(key: string, build: () => (SQL | BoundQuery)[], values: Record<string, unknown>): BoundQuery[] {
  let qs = shapeLists.get(key);
  if (!qs) {
    if (shapeLists.size >= 4096) shapeLists.clear();
    compiling++;
    try {
      qs = build().map((s) => (s instanceof BoundQuery ? s.query : compile(s)));
    } finally {
      compiling--;
    }
    shapeLists.set(key, qs);
  }
  return qs.map((q) => new BoundQuery({ sql: q.sql, params: bindParams(q.params, values), keepPlan: q.keepPlan }));
}

/** Compiled Postgres text with its `$n` parameters renumbered to follow `n` others (to put it after them). */
export const shiftParams = (text: string, n: number): string => text.replace(/\$(\d+)/g, (_, i) => `$${Number(i) + n}`);

/**
 * Runs drizzle query builders and raw `sql` statements (with parameters) atomically in one round
 * trip: one D1 batch, or one Postgres transaction. Builder results come back mapped as drizzle
 * maps them (`await builder` types); raw statements give their rows and changes. drizzle maps
 * batch rows by column position, so a select in a batch must not repeat a column name (alias
 * joined columns, as the post selection does). Any failing statement rolls the whole batch back
 * and rejects.
 */
export async function mixedBatch<const T extends readonly BatchItem[]>(db: Db, items: T): Promise<{ -readonly [K in keyof T]: BatchResult<T[K]> }> {
  const mappers: (((r: unknown) => unknown) | null)[] = [];
  const queries = items.map((item): Query => {
    if (is(item, SQL)) {
      mappers.push(null);
      return compileBound(item);
    }
    if (item instanceof BoundQuery) {
      mappers.push(null);
      return item.query;
    }
    const prepared = (item as unknown as Preparable)._prepare();
    mappers.push((r) => prepared.mapResult(r, true));
    return { ...prepared.getQuery(), arrayMode: prepared.isResponseInArrayMode?.() ?? false };
  });
  const results = await db.exec.batch(queries);
  return results.map((r, i) => (mappers[i] ? mappers[i](r) : db.exec.rows(r))) as { -readonly [K in keyof T]: BatchResult<T[K]> };
}

/** A raw statement, or a query builder whose result is wanted raw (rows and changes). */
export type Statement = SQL | { toSQL(): { sql: string; params: unknown[] } };

/** Runs statements atomically in one round trip; the rows and changes of each. */
export async function runBatch(db: Db, items: Statement[]): Promise<RawResult[]> {
  const results = await db.exec.batch(items.map((q) => (is(q, SQL) ? compileBound(q) : q.toSQL())));
  return results.map((r) => db.exec.rows(r));
}

/** Runs one raw statement. */
export async function runOne(db: Db, q: Statement): Promise<RawResult> {
  const [r] = await runBatch(db, [q]);
  return r;
}

/** The rows of one raw statement. */
export async function allRows<T = Row>(db: Db, q: Statement): Promise<T[]> {
  return (await runOne(db, q)).results as T[];
}

/** The first of a query's rows, for `query.then(first)` (drizzle's `.get()` exists only on SQLite). */
export const first = <T>(rows: T[]): T | undefined => rows[0];

/**
 * True for the error a statement raises when it breaks the constraint on `table` (`column`:
 * a NOT NULL constraint on that column; none: a unique or primary key). The batch it was part of
 * was rolled back. Stores use such failures as guards (a statement that inserts NULL when a
 * condition fails), and each backend reports them its own way: D1 in the message, Postgres in
 * the error's SQLSTATE and fields (on the error, or its cause when drizzle wrapped it).
 */
export function violates(err: unknown, table: string, column?: string): boolean {
  for (const e of [err, (err as { cause?: unknown })?.cause]) {
    const f = (e ?? {}) as { code?: string; table?: string; column?: string; message?: unknown };
    if (isPostgres) {
      if (column ? f.code === "23502" && f.table === table && f.column === column : f.code === "23505" && f.table === table) return true;
      continue;
    }
    const message = String(f.message ?? "");
    if (
      column
        ? message.includes(`NOT NULL constraint failed: ${table}.${column}`)
        : new RegExp(`(UNIQUE|PRIMARY KEY) constraint failed: ${table}\\.`).test(message)
    )
      return true;
  }
  return false;
}

/**
 * Select fields with every column aliased `prefix + key`, so that a select joining several tables
 * repeats no column name and can run in a batch. Decoding (JSON, booleans) is kept.
 */
export function aliasedFields(fields: Record<string, Column | SQL | SQL.Aliased>, prefix: string): Record<string, SQL.Aliased> {
  return Object.fromEntries(
    Object.entries(fields).map(([key, f]) => {
      const expr = is(f, Column) ? sql`${f}`.mapWith(f) : is(f, SQL) ? f : f.sql;
      return [key, expr.as(prefix + key)];
    }),
  );
}
