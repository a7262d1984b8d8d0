/**
 * The neutral vocabulary of the schema spec (schema/spec/*.ts): each table is written once here,
 * and schema/generate/drizzle.ts writes the SQLite (`schema/tables.ts`) and Postgres
 * (`schema/pg/tables.ts`) drizzle schemas from it. A column's SQL name is its key in snake_case
 * unless given (`int8("shard")`); see docs/schema.md for how each kind maps to each dialect.
 */

/**
 * - `id`: autoincrement integer primary key (SQLite rowid alias / Postgres int8 identity).
 * - `int8`: ids, references, unix-second times, counters, byte sizes (SQLite integer / Postgres bigint).
 * - `int`: small bounded numbers: positions, revisions, percentages, HTTP statuses (integer / integer).
 * - `text`: text, optionally with a TS-only enum (no CREATE TYPE).
 * - `flag`: a 0/1 boolean, NOT NULL, default 0 (integer boolean mode / smallint mapped to boolean).
 * - `json`: JSON kept as text, read whole (text json mode / text with JSON.stringify/parse).
 * - `real`: a floating-point number (real / double precision).
 */
export type ColumnKind = "id" | "int8" | "int" | "text" | "flag" | "json" | "real";

export interface ColumnSpec {
  kind: ColumnKind;
  /** SQL name; defaults to the key in snake_case. */
  name?: string;
  notNull: boolean;
  default?: string | number | boolean;
  primaryKey: boolean;
  enumValues?: readonly string[];
  /** A TypeScript type for the value (drizzle `$type<…>()`), e.g. `string[]`. */
  tsType?: string;
  doc?: string;
}

/** A column being declared: chain `.notNull()`, `.default(v)`, `.primaryKey()`, `.doc("…")`. */
export class Column {
  readonly spec: ColumnSpec;
  constructor(kind: ColumnKind, name?: string) {
    this.spec = { kind, name, notNull: false, primaryKey: false };
  }
  notNull(): this {
    this.spec.notNull = true;
    return this;
  }
  default(value: string | number | boolean): this {
    this.spec.default = value;
    return this;
  }
  primaryKey(): this {
    this.spec.primaryKey = true;
    return this;
  }
  enum(values: readonly string[]): this {
    this.spec.enumValues = values;
    return this;
  }
  type(tsType: string): this {
    this.spec.tsType = tsType;
    return this;
  }
  doc(text: string): this {
    this.spec.doc = text;
    return this;
  }
}

export const id = () => new Column("id").notNull().primaryKey();
export const int8 = (name?: string) => new Column("int8", name);
export const int = (name?: string) => new Column("int", name);
export const text = (name?: string) => new Column("text", name);
/** NOT NULL DEFAULT 0 (`.default(true)` for 1). */
export const flag = (name?: string) => new Column("flag", name).notNull().default(false);
export const json = (name?: string) => new Column("json", name);
export const real = (name?: string) => new Column("real", name);
/** `created_at`: unix seconds, NOT NULL. */
export const createdAt = () => new Column("int8").notNull();
/** A counter kept at write time: int8 NOT NULL DEFAULT 0. */
export const counter = (name?: string) => new Column("int8", name).notNull().default(0);

export interface IndexSpec {
  name: string;
  /** Column keys (not SQL names), in index order. */
  columns: string[];
  unique: boolean;
  /** A partial index's condition, as SQL text valid in both dialects. */
  where?: string;
  doc?: string;
}

export const index = (name: string, columns: string[], opts: { where?: string; doc?: string } = {}): IndexSpec => ({
  name,
  columns,
  unique: false,
  ...opts,
});
export const unique = (name: string, columns: string[], opts: { doc?: string } = {}): IndexSpec => ({
  name,
  columns,
  unique: true,
  ...opts,
});

export interface TableSpec {
  /** SQL name; the exported drizzle table is its camelCase. */
  name: string;
  columns: Record<string, ColumnSpec>;
  /** A composite primary key, by column key. */
  primaryKey?: string[];
  indexes: IndexSpec[];
  doc?: string;
  /** A note that only the Postgres schema carries (e.g. SQL-only columns there). */
  pgDoc?: string;
}

export function table(
  name: string,
  columns: Record<string, Column>,
  opts: { primaryKey?: string[]; indexes?: IndexSpec[]; doc?: string; pgDoc?: string } = {},
): TableSpec {
  const cols = Object.fromEntries(Object.entries(columns).map(([key, c]) => [key, { ...c.spec, name: c.spec.name ?? snake(key) }]));
  for (const key of [...(opts.primaryKey ?? []), ...(opts.indexes ?? []).flatMap((i) => i.columns)]) {
    if (!(key in cols)) throw new Error(`${name}: no column ${key}`);
  }
  return { name, columns: cols, primaryKey: opts.primaryKey, indexes: opts.indexes ?? [], doc: opts.doc, pgDoc: opts.pgDoc };
}

export const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
