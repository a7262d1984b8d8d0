import { neon, neonConfig, types, type FullQueryResults, type NeonQueryFunction, type NeonQueryPromise } from "@neondatabase/serverless";
import { drizzle, NeonHttpSession } from "drizzle-orm/neon-http";
import * as tables from "../../schema/pg/tables";
import { MAX_BOUND_PARAMETERS } from "./backend";
import { layered } from "./per-request";
import { readRouter, type ReadRouter } from "./pg-replica";
import type { ReadSession } from "./read-session";
import type { Executor, Query } from "./types";
import { readsOnly } from "./deferred-check";
import { keepPlan, keptPlans, missedKeptPlans, missingFunction, plansToKeep, withKeptPlan } from "./pg-plans";

// Results read the same as D1's, decided once for the isolate (the driver's parsers are global):
// int8 (ids, count(*)) and numeric (sum) as numbers — ids stay below 2^53; booleans as 0/1 as
// SQLite gives them; json as text, which the stores parse where they need it.
types.setTypeParser(types.builtins.INT8, Number);
types.setTypeParser(types.builtins.NUMERIC, Number);
types.setTypeParser(types.builtins.BOOL, (v: string) => (v === "t" ? 1 : 0));
types.setTypeParser(types.builtins.JSON, (v: string) => v);
types.setTypeParser(types.builtins.JSONB, (v: string) => v);

/** Per isolate: the Neon driver's configuration is module-global, so the proxy it points at is too. */
let localProxy: string | undefined;

/**
 * Points the driver at the project's local stand-in for Neon's proxies (scripts/pg/), when
 * `DB_PROXY` is set (local development and tests only; never in production).
 */
function useLocalProxy(proxy: string | undefined) {
  if (!proxy || proxy === localProxy) return;
  localProxy = proxy;
  neonConfig.fetchEndpoint = () => `http://${proxy}/sql`;
  neonConfig.wsProxy = (host, port) => `${proxy}/v1?address=${host}:${port}`;
  neonConfig.useSecureWebSocket = false;
}

// Contended rows (a popular post's counters, one user's post count) abort all but one of the
// concurrent writers each round, so N writers need up to N rounds; each retry waits a random time
// that grows with the attempt, up to a quarter second. The bench's replay row (16 writers of one
// user, 1,000 posts) needed more than 12, and once in a run more than 40: a writer can lose many
// rounds in a row to newcomers.
const RETRIES = 100;
const retryable = (err: unknown) => {
  const code = (err as { code?: string })?.code;
  return code === "40001" || code === "40P01";
};
const pause = (attempt: number) => new Promise((r) => setTimeout(r, Math.random() * Math.min(250, 5 * 2 ** attempt)));

type Client = NeonQueryFunction<false, true>;
type Pending = NeonQueryPromise<false, true>;
const textOf = (q: Pending) => (q as unknown as { queryData: { query: string } }).queryData.query;

/** Neon's HTTP client per connection string, built once per isolate (it holds no connection). */
const rawClients = new Map<string, Client>();
export function rawClient(url: string): Client {
  let c = rawClients.get(url);
  if (!c) rawClients.set(url, (c = neon(url, { fullResults: true })));
  return c;
}

/** Runs `queries` as one transaction on `raw`: Serializable and retried, or one read-only snapshot. */
async function runTransaction(raw: Client, queries: Pending[], opts: object, count: () => void) {
  const reads = queries.every((q) => readsOnly(textOf(q)));
  const mode = reads ? { isolationLevel: "RepeatableRead", readOnly: true } : { isolationLevel: "Serializable" };
  for (let attempt = 0; ; attempt++) {
    count();
    try {
      return await raw.transaction(queries, { ...opts, ...mode } as never);
    } catch (err) {
      if (attempt >= RETRIES || !retryable(err)) throw err;
      await pause(attempt);
    }
  }
}

/**
 * The Neon HTTP client as drizzle and the executor use it, with additions: every round trip
 * is counted (`X-Debug-Db-Calls`); every transaction — the unit of a write, like a D1 batch —
 * runs Serializable and is retried on serialization failures and deadlocks, so the stores'
 * guard statements (`insert … where not exists …`) hold under concurrency as they do on D1,
 * which runs batches one at a time; read-only transactions take one snapshot (repeatable read).
 * With a `router` (a read replica is configured), work that only reads goes where it decides
 * (./pg-replica.ts) and every write is reported to it.
 */
function countedClient(raw: Client, count: () => void, router?: ReadRouter, before?: () => Promise<void>): Client {
  // A query runs when first awaited (Neon's queries are lazy); here once, however often awaited.
  const routed = (p: Pending) => {
    let run: Promise<unknown> | undefined;
    const start = async () => {
      await before?.();
      if (!router) {
        count();
        return p;
      }
      if (readsOnly(textOf(p))) return router.read([p]).then((r) => r[0]);
      count();
      router.wrote();
      return p;
    };
    const q = Object.create(p) as Pending;
    for (const m of ["then", "catch", "finally"] as const) {
      (q as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        run ??= Promise.resolve(start());
        return (run[m] as (...a: unknown[]) => unknown).apply(run, args);
      };
    }
    return q;
  };
  const client = ((strings: TemplateStringsArray, ...values: unknown[]) => routed(raw(strings, ...values))) as unknown as Client;
  Object.assign(client, {
    query: (text: string, params?: unknown[], opts?: object) => {
      if (params && params.length > MAX_BOUND_PARAMETERS) {
        throw new Error(`a statement binds ${params.length} parameters; D1 allows ${MAX_BOUND_PARAMETERS}: ${text.slice(0, 200)}`);
      }
      return routed(raw.query(text, params, opts as never) as Pending);
    },
    unsafe: raw.unsafe,
    transaction: async (queries: Pending[], opts: object = {}) => {
      await before?.();
      if (router && queries.every((q) => readsOnly(textOf(q)))) return router.read(queries);
      router?.wrote();
      return runTransaction(raw, queries, opts, count);
    },
  });
  return client;
}

/** drizzle over Postgres, built once per isolate and connection string (see ./per-request.ts). */
const buildOrm = (client: Client) => drizzle({ client: client as unknown as NeonQueryFunction<false, false>, schema: tables });
const baseOrms = new Map<string, ReturnType<typeof buildOrm>>();
function baseOrm(url: string) {
  let orm = baseOrms.get(url);
  if (!orm) baseOrms.set(url, (orm = buildOrm(rawClient(url))));
  return orm;
}

/** Where the Postgres backend connects: the primary, and optionally a read replica. */
export interface PgUrls {
  url: string | undefined;
  readUrl?: string;
  proxy?: string;
}

/**
 * drizzle over Postgres (Neon's HTTP transport) and the executor of raw batches. With a read
 * replica (`readUrl`) and a request's `read` session, read-only work may go to the replica under
 * the read-your-writes rule of ./pg-replica.ts; `bookmark()` gives the bookmark for the response.
 */
export function openPg({ url, readUrl, proxy }: PgUrls, count: () => void = () => {}, read?: ReadSession, beforeOrm?: () => Promise<void>) {
  if (!url) throw new Error("DB_BACKEND is 'postgres' but DATABASE_URL is not set");
  useLocalProxy(proxy);
  const primary = rawClient(url);
  const router = readUrl && read ? readRouter({ primary, replica: rawClient(readUrl), session: read, count, runTransaction }) : undefined;
  const client = countedClient(primary, count, router);
  const plans = keptPlans(url);
  const exec: Executor = {
    kind: "postgres",
    batch: async (queries: Query[]) => {
      const run = async (qs: Query[]) => {
        const prepared = qs.map((q) => client.query(q.sql, q.params, { arrayMode: q.arrayMode ?? false, fullResults: true }) as Pending);
        // One statement that only reads is a snapshot by itself: sent alone it spares the proxy
        // and the server a BEGIN and a COMMIT (a hot read is usually one statement).
        if (prepared.length === 1 && readsOnly(qs[0].sql)) return [await prepared[0]];
        return client.transaction(prepared);
      };
      const planned = queries.map((q) => withKeptPlan(plans, q));
      let results: unknown[];
      try {
        results = await run(planned);
      } catch (err) {
        // A kept plan's function that is gone (or not on a replica yet): the statements as written.
        if (!missingFunction(err) || planned.every((q, i) => q === queries[i])) throw err;
        missedKeptPlans(plans, queries);
        results = await run(queries);
      }
      for (const { query, result } of plansToKeep(plans, queries, results)) await keepPlan(plans, primary, query, result);
      return results;
    },
    rows: (native) => {
      const r = native as FullQueryResults<false>;
      return { results: r.rows ?? [], changes: r.rowCount ?? 0 };
    },
  };
  const base = baseOrm(url);
  // The session drizzle would build, over this request's client; the rest of `base` is shared.
  const { dialect, schema, options } = (base as unknown as { session: { dialect: never; schema: never; options: object } }).session;
  // drizzle's statements wait for a deferred check (./deferred-check.ts); the executor carries it.
  const ormClient = beforeOrm ? countedClient(primary, count, router, beforeOrm) : client;
  const orm = layered(
    base as typeof base & { session: unknown },
    new NeonHttpSession(ormClient, dialect, schema, options),
    ormClient,
    () => buildOrm(ormClient).query,
  );
  return { orm, exec, bookmark: router ? router.bookmark : async () => null, readsWent: router?.readsWent };
}
