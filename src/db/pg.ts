import { neon, neonConfig, types, type FullQueryResults, type NeonQueryFunction, type NeonQueryPromise } from "@neondatabase/serverless";
import { drizzle } from "drizzle-orm/neon-http";
import * as tables from "../../schema/pg/tables";
import { MAX_BOUND_PARAMETERS } from "./backend";
import type { Executor, Query } from "./types";

// Results read the same as D1's, decided once for the isolate (the driver's parsers are global):
// int8 (ids, count(*)) and numeric (sum) as numbers — ids stay below 2^53; booleans as 0/1 as
// SQLite gives them; json as text, which the stores parse where they need it.
types.setTypeParser(types.builtins.INT8, Number);
types.setTypeParser(types.builtins.NUMERIC, Number);
types.setTypeParser(types.builtins.BOOL, (v: string) => (v === "t" ? 1 : 0));
types.setTypeParser(types.builtins.JSON, (v: string) => v);
types.setTypeParser(types.builtins.JSONB, (v: string) => v);

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

/** A statement that only reads: runs without serializable bookkeeping. */
const READ_ONLY = /^\s*(select|with)\b/i;
const WRITES = /\b(insert|update|delete)\b/i;
const readsOnly = (q: { query: string }) => READ_ONLY.test(q.query) && !WRITES.test(q.query);

type Client = NeonQueryFunction<false, true>;

/**
 * The Neon HTTP client as drizzle and the executor use it, with two additions: every round trip
 * is counted (`X-Debug-Db-Calls`), and every transaction — the unit of a write, like a D1 batch —
 * runs Serializable and is retried on serialization failures and deadlocks, so the stores'
 * guard statements (`insert … where not exists …`) hold under concurrency as they do on D1,
 * which runs batches one at a time. Read-only transactions take one snapshot (repeatable read).
 */
function countedClient(url: string, count: () => void): Client {
  const raw = neon(url, { fullResults: true });
  const counted = (p: NeonQueryPromise<false, true>) => {
    const q = Object.create(p) as NeonQueryPromise<false, true>;
    for (const m of ["then", "catch", "finally"] as const) {
      (q as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        count();
        return (p[m] as (...a: unknown[]) => unknown).apply(p, args);
      };
    }
    return q;
  };
  const client = ((strings: TemplateStringsArray, ...values: unknown[]) => counted(raw(strings, ...values))) as unknown as Client;
  Object.assign(client, {
    query: (text: string, params?: unknown[], opts?: object) => {
      if (params && params.length > MAX_BOUND_PARAMETERS) {
        throw new Error(`a statement binds ${params.length} parameters; D1 allows ${MAX_BOUND_PARAMETERS}: ${text.slice(0, 200)}`);
      }
      return counted(raw.query(text, params, opts as never) as NeonQueryPromise<false, true>);
    },
    unsafe: raw.unsafe,
    transaction: async (queries: NeonQueryPromise<false, true>[], opts: object = {}) => {
      const reads = queries.every((q) => readsOnly((q as unknown as { queryData: { query: string } }).queryData));
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
    },
  });
  return client;
}

/** drizzle over Postgres (Neon's HTTP transport) and the executor of raw batches. */
export function openPg(url: string | undefined, proxy: string | undefined, count: () => void = () => {}) {
  if (!url) throw new Error("DB_BACKEND is 'postgres' but DATABASE_URL is not set");
  useLocalProxy(proxy);
  const client = countedClient(url, count);
  const exec: Executor = {
    kind: "postgres",
    batch: async (queries: Query[]) => {
      const prepared = queries.map((q) => client.query(q.sql, q.params, { arrayMode: q.arrayMode ?? false, fullResults: true }) as NeonQueryPromise<false, true>);
      // One statement that only reads is a snapshot by itself: sent alone it spares the proxy
      // and the server a BEGIN and a COMMIT (a hot read is usually one statement).
      if (prepared.length === 1 && readsOnly({ query: queries[0].sql })) return [await prepared[0]];
      return client.transaction(prepared);
    },
    rows: (native) => {
      const r = native as FullQueryResults<false>;
      return { results: r.rows ?? [], changes: r.rowCount ?? 0 };
    },
  };
  return { orm: drizzle({ client, schema: tables }), exec };
}
