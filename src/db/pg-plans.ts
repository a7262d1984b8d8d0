import type { FullQueryResults, NeonQueryFunction, NeonQueryPromise } from "@neondatabase/serverless";
import { sha256Hex } from "../auth/crypto";
import type { Query } from "./types";

// Plans kept across requests on Postgres. Neon's HTTP endpoint runs every statement unnamed, so the
// server plans it on every request; for the post render that planning cost twice its execution
// (docs/benchmark.md, eleventh pass). A statement marked `keepPlan` runs instead as the body of a
// PL/pgSQL function made from its own text: PL/pgSQL keeps a function's plans for the session, and
// Neon's HTTP pool keeps a session across queries (its reset leaves out DISCARD PLANS). The
// function's name is a hash of the text (SHA-256), so versions of the Worker deployed side by side never
// share one, and it is made the first time an isolate runs the text and finds none.

type Client = NeonQueryFunction<false, true>;
type Pending = NeonQueryPromise<false, true>;

/** Per isolate and database, per statement text: its function's name once it exists, or false (plain). */
export interface KeptPlans {
  functions: Map<string, string | false>;
  /** How often each text's function was found missing. */
  misses: Map<string, number>;
}
const byDatabase = new Map<string, KeptPlans>();
/** The kept plans of the database at `url`. */
export function keptPlans(url: string): KeptPlans {
  let k = byDatabase.get(url);
  if (!k) byDatabase.set(url, (k = { functions: new Map(), misses: new Map() }));
  return k;
}
/** Most statement texts an isolate keeps plans for: pages with a shape each stay far below. */
const MAX_TEXTS = 512;

/** The call of `q`'s function when it exists (same parameters, same result columns), else `q`. */
export function withKeptPlan({ functions }: KeptPlans, q: Query): Query {
  if (!q.keepPlan) return q;
  const name = functions.get(q.sql);
  if (!name) return q;
  const args = q.params.map((_, i) => `$${i + 1}`).join(", ");
  return { ...q, sql: `SELECT * FROM ${name}(${args})` };
}

/** Whether `err` says a kept plan's function is missing (dropped, or a replica that has not caught up). */
export function missingFunction(err: unknown): boolean {
  const e = err as { code?: string; message?: unknown; cause?: { code?: string; message?: unknown } };
  for (const f of [e, e?.cause]) if (f?.code === "42883" && String(f.message ?? "").includes("es_plan_")) return true;
  return false;
}

/**
 * The functions of `queries` were found missing: dropped (they are made again), or, found missing
 * again, absent where reads go (a replica that is not a copy of the primary): plain from then on.
 */
export function missedKeptPlans({ functions, misses }: KeptPlans, queries: Query[]) {
  for (const q of queries) {
    if (!q.keepPlan || !functions.get(q.sql)) continue;
    const n = (misses.get(q.sql) ?? 0) + 1;
    misses.set(q.sql, n);
    if (n > 1) functions.set(q.sql, false);
    else functions.delete(q.sql);
  }
}

/** The statements of `queries` whose function is not known yet, with their results (for their columns). */
export function plansToKeep({ functions }: KeptPlans, queries: Query[], results: unknown[]): { query: Query; result: FullQueryResults<false> }[] {
  const out: { query: Query; result: FullQueryResults<false> }[] = [];
  queries.forEach((query, i) => {
    if (query.keepPlan && !functions.has(query.sql) && functions.size < MAX_TEXTS) out.push({ query, result: results[i] as FullQueryResults<false> });
  });
  return out;
}

/**
 * Makes the function of a statement that just ran plainly, on the primary: its parameters' types
 * as Postgres inferred them (a PREPARE of the text), its columns as the run returned them. A
 * function that exists already (another isolate made it) is used after checking its body is this
 * text. Any failure leaves the statement plain in this isolate.
 */
export async function keepPlan({ functions }: KeptPlans, primary: Client, query: Query, result: FullQueryResults<false>): Promise<void> {
  const text = query.sql;
  functions.set(text, false); // until made: plain, and made once
  try {
    const hash = (await sha256Hex(text)).slice(0, 16);
    const [name, probe] = [`es_plan_${hash}`, `es_probe_${hash}`];
    const oids = result.fields.map((f) => f.dataTypeID);
    const [, params, , columns] = (await primary.transaction([
      primary.query(`PREPARE ${probe} AS ${text}`, []),
      primary.query("SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = $1", [probe]),
      primary.query(`DEALLOCATE ${probe}`, []),
      primary.query("SELECT coalesce(array_agg(format_type(o, NULL) ORDER BY n), '{}') AS types FROM unnest($1::oid[]) WITH ORDINALITY AS t(o, n)", [
        `{${oids.join(",")}}`,
      ]),
    ] as Pending[])) as unknown as FullQueryResults<false>[];
    // text[] comes back as an array (the driver's own array parser).
    const paramTypes = (params.rows[0]?.types ?? []) as string[];
    const columnTypes = (columns.rows[0]?.types ?? []) as string[];
    if (paramTypes.length !== query.params.length || columnTypes.length !== result.fields.length) return;
    const body = `#variable_conflict use_column\nBEGIN\nRETURN QUERY ${text};\nEND`;
    const out = result.fields.map((f, i) => `"${f.name.replaceAll('"', '""')}" ${columnTypes[i]}`).join(", ");
    const create = `CREATE FUNCTION ${name}(${paramTypes.join(", ")}) RETURNS TABLE(${out}) LANGUAGE plpgsql STABLE AS $es_plan$${body}$es_plan$`;
    await primary.query(create, []).catch((err: { code?: string }) => {
      // Made meanwhile by another isolate: its body is checked below.
      if (err?.code !== "42723" && err?.code !== "23505") throw err;
    });
    const made = (await primary.query("SELECT prosrc FROM pg_proc WHERE proname = $1", [name])) as unknown as FullQueryResults<false>;
    if (made.rows.length === 1 && made.rows[0].prosrc === body) functions.set(text, name);
  } catch (err) {
    console.error(JSON.stringify({ error: "keeping a statement's plan failed", detail: String(err), statement: text.slice(0, 200) }));
  }
}
