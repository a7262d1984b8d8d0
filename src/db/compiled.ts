import { Column, is, SQL, sql } from "drizzle-orm";
import { jsonArray, jsonValue } from "./dialect";
import type { Row } from "./types";

// Statements of the hot reads are compiled once and their rows decoded by field lists built
// once: drizzle's builder and generic row mapper cost more per request than the reads themselves.

export type Decode = (value: unknown) => unknown;
/** A selected value: its key in the decoded object, its column alias, and its decoding. */
export type Field = readonly [key: string, alias: string, decode: Decode];
type Expr = Column | SQL | SQL.Aliased;

const asIs: Decode = (v) => v;

/** How a selected value comes back from the driver: a column's own mapping, or a `mapWith`. */
function decoderOf(f: Expr): Decode {
  if (is(f, Column)) return f.mapFromDriverValue === Column.prototype.mapFromDriverValue ? asIs : (v) => f.mapFromDriverValue(v);
  const decoder = (is(f, SQL) ? f : f.sql) as unknown as { decoder?: { mapFromDriverValue(v: unknown): unknown } };
  const d = decoder.decoder;
  return d ? (v) => d.mapFromDriverValue(v) : asIs;
}

/**
 * Select-list entries `expr AS "<prefix><key>"` for `fields`, and the field list that `pick` decodes
 * them with (each value as its column or `mapWith` maps it).
 */
export function selectGroup(fields: Record<string, Expr>, prefix: string): { select: SQL[]; fields: Field[] } {
  const select: SQL[] = [];
  const out: Field[] = [];
  for (const [key, expr] of Object.entries(fields)) {
    const alias = prefix + key;
    select.push(sql`${is(expr, SQL.Aliased) ? expr.sql : expr} AS ${sql.identifier(alias)}`);
    out.push([key, alias, decoderOf(expr)]);
  }
  return { select, fields: out };
}

/**
 * Per field list: an object with every key set to null, in order. A decoded object starts as its
 * copy, so each field is a store to an existing property rather than a property added (new hidden
 * class on every key); ~25 % less decoding time in a Node micro-benchmark of a 60-field post.
 */
const templates = new WeakMap<Field[], Record<string, null>>();
function templateOf(fields: Field[]): Record<string, null> {
  let t = templates.get(fields);
  if (!t) templates.set(fields, (t = Object.fromEntries(fields.map(([key]) => [key, null]))));
  return t;
}

/** The fields of a row (selected with `selectGroup`) as an object; null stays null. */
export function pick(row: Row, fields: Field[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...templateOf(fields) };
  for (const [key, alias, decode] of fields) {
    const v = row[alias];
    if (v != null) out[key] = decode(v);
  }
  return out;
}

/** Postgres functions take at most 100 arguments (json_build_array's values). */
const MAX_ARRAY_ITEMS = 100;

/** One group of a `jsonArrayGroup` cell: its fields, from position `from` on. */
export interface ArrayPart {
  fields: Field[];
  from: number;
}

/**
 * The groups of `groups` as one JSON array cell, their values side by side in order; `pickArray`
 * decodes a group by position. Database clients pay per cell (D1's client turns every cell of a
 * row into a property, one value at a time): one array costs less than the same values as
 * columns. null when `present` (a condition, optional) is false. At most 100 values in all: split
 * longer lists into two cells.
 */
export function jsonArrayGroup(groups: Record<string, Expr>[], present?: SQL): { select: SQL; parts: ArrayPart[] } {
  const parts: ArrayPart[] = [];
  const items: SQL[] = [];
  for (const group of groups) {
    const exprs = Object.values(group);
    const fields = selectGroup(group, "").fields.map((f, i): Field => {
      const expr = exprs[i];
      const value = is(expr, Column) ? sql`${expr}` : is(expr, SQL.Aliased) ? expr.sql : expr;
      // A JSON text column is embedded as JSON: parsed with the cell, not again on its own.
      const json = decodesJson(f[2]);
      items.push(json ? jsonValue(value) : value);
      return json ? [f[0], f[1], asIs] : f;
    });
    parts.push({ fields, from: items.length - fields.length });
  }
  if (items.length > MAX_ARRAY_ITEMS) throw new Error(`jsonArrayGroup: ${items.length} values, at most ${MAX_ARRAY_ITEMS}`);
  const array = jsonArray(...items);
  return { select: present ? sql`CASE WHEN ${present} THEN ${array} END` : array, parts };
}

/** Whether `decode` parses JSON text (a JSON column's own mapping): it makes an array of "[]". */
function decodesJson(decode: Decode): boolean {
  if (decode === asIs) return false;
  try {
    return Array.isArray(decode("[]"));
  } catch {
    return false;
  }
}

/** A `jsonArrayGroup` cell's values (JSON text on D1, parsed already on Postgres), or null. */
export function jsonArrayValues(value: unknown): unknown[] | null {
  if (value == null) return null;
  return (typeof value === "string" ? JSON.parse(value) : value) as unknown[];
}

/** The fields of one group of a `jsonArrayGroup` cell's values as an object; null stays null. */
export function pickArray(values: unknown[], part: ArrayPart): Record<string, unknown> {
  const { fields, from } = part;
  const out: Record<string, unknown> = { ...templateOf(fields) };
  for (let i = 0; i < fields.length; i++) {
    const v = values[from + i];
    if (v != null) {
      const [key, , decode] = fields[i];
      out[key] = decode(v);
    }
  }
  return out;
}

/** `pickArray`, or null when the group's first value is null (a join that found nothing). */
export function pickFound(values: unknown[], part: ArrayPart): Record<string, unknown> | null {
  return values[part.from] == null ? null : pickArray(values, part);
}
