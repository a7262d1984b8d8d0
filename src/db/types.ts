import type { Backend } from "./backend";

export type Row = Record<string, unknown>;

/** A compiled statement: SQL text in the backend's dialect and its parameters. */
export interface Query {
  sql: string;
  params: unknown[];
  /** Rows as arrays (drizzle builders map batch rows by position) rather than objects. */
  arrayMode?: boolean;
  /** Postgres: run as a function made from its text, whose plan the session keeps (./pg-plans.ts). */
  keepPlan?: boolean;
}

/** Rows and affected-row count of a raw statement, the same on both backends. */
export interface RawResult {
  results: Row[];
  changes: number;
}

/** How a backend runs statements; the stores reach it only through `src/db/batch.ts`. */
export interface Executor {
  readonly kind: Backend;
  /** Runs the statements atomically, in one round trip; the backend's own result objects. */
  batch(queries: Query[]): Promise<unknown[]>;
  /** A backend result (of a statement run with objects as rows) as rows and changes. */
  rows(native: unknown): RawResult;
}
