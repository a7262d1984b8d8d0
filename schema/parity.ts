/**
 * Compile-time parity of the two generated schemas (types only; this module has no runtime code
 * and nothing imports it: `tsc --noEmit` checks it because tsconfig includes `schema/**`).
 *
 * Both files are generated from one spec (schema/spec, schema/generate/drizzle.ts), so their SQL
 * names, keys, defaults and indexes agree by construction (and drizzle-kit compares each with its
 * migration snapshots). What the generator can still get wrong is the TypeScript side of its two
 * dialect mappings: on Postgres the stores use the pg-core tables of `./pg/tables.ts` at runtime
 * while their types are those of `./tables.ts` (sqlite-core), so for every table the row types
 * must be exactly equal. A mismatch fails `npm run typecheck` on the line of the table concerned.
 *   (a) both modules export the same table names;
 *   (b) `$inferSelect` and `$inferInsert` are exactly equal per table;
 *   (c) the JS keys map to the same SQL column names, and the SQL table names agree, where
 *       the types carry them as literals (columns built by a helper taking `name: string`
 *       carry plain `string`).
 */

import type { Table } from "drizzle-orm";
import type * as pg from "./pg/tables";
import type * as sqlite from "./tables";

/** Strict type equality (distinguishes `any`, optional vs `| undefined`, readonly). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Errors name the offending tables: "Type '"foo"' does not satisfy the constraint 'never'". */
type ExpectNever<T extends never> = T;
/** Errors name the offending tables and what differs: "Property 'users' is incompatible ...". */
type ExpectEmpty<T extends Record<string, never>> = T;

type TableKeys<M> = { [K in keyof M]: M[K] extends Table ? K : never }[keyof M];
type SqliteTables = TableKeys<typeof sqlite>;
type PgTables = TableKeys<typeof pg>;

/** Mismatches per table; `never` when the two agree. */
type Mismatch<K extends SqliteTables & PgTables> =
  | (Equal<(typeof sqlite)[K]["$inferSelect"], (typeof pg)[K]["$inferSelect"]> extends true ? never : "$inferSelect")
  | (Equal<(typeof sqlite)[K]["$inferInsert"], (typeof pg)[K]["$inferInsert"]> extends true ? never : "$inferInsert")
  | (Equal<(typeof sqlite)[K]["_"]["name"], (typeof pg)[K]["_"]["name"]> extends true ? never : "table name")
  | ColumnNameMismatch<(typeof sqlite)[K]["_"]["columns"], (typeof pg)[K]["_"]["columns"]>;

/** `column <key>: <sqlite name> vs <pg name>` for each key whose literal SQL names differ. */
type ColumnNameMismatch<S, P> = {
  [C in keyof S & keyof P]: S[C] extends { _: { name: infer SN extends string } }
    ? P[C] extends { _: { name: infer PN extends string } }
      ? string extends SN | PN
        ? never // a name typed as plain `string`: left to the runtime test
        : Equal<SN, PN> extends true
          ? never
          : `column ${C & string}: ${SN} vs ${PN}`
      : `column ${C & string}: no name`
    : `column ${C & string}: no name`;
}[keyof S & keyof P];

/** Tables whose pg mirror differs, with what differs; must be empty. */
type Mismatches = { [K in SqliteTables & PgTables as Mismatch<K> extends never ? never : K]: Mismatch<K> };

// (a) same set of tables
export type _onlyInSqlite = ExpectNever<Exclude<SqliteTables, PgTables>>;
export type _onlyInPg = ExpectNever<Exclude<PgTables, SqliteTables>>;
// (b) + (c)
export type _rowTypesAndNames = ExpectEmpty<Mismatches>;
