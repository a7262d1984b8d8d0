import { Column, is, SQL, sql } from "drizzle-orm";
import { jsonObject } from "./dialect";
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

/** The fields of a row (selected with `selectGroup`) as an object; null stays null. */
export function pick(row: Row, fields: Field[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, alias, decode] of fields) {
    const v = row[alias];
    out[key] = v == null ? null : decode(v);
  }
  return out;
}

/**
 * `fields` as one JSON object column (keys `<prefix><key>`), for rows that would pass D1's 100
 * columns; `pickJson` decodes it. null when `present` (a condition) is false, as for a LEFT JOIN
 * that found nothing. Postgres: at most 50 fields (json_build_object takes 100 arguments).
 */
export function jsonGroup(fields: Record<string, Expr>, prefix: string, present: SQL): { select: SQL; fields: Field[] } {
  const { fields: out } = selectGroup(fields, prefix);
  const pairs = Object.values(fields).flatMap((expr, i) => [sql.raw(`'${out[i][1]}'`), is(expr, SQL.Aliased) ? expr.sql : expr]);
  return { select: sql`CASE WHEN ${present} THEN ${jsonObject(...(pairs as SQL[]))} END`, fields: out };
}

/** The fields of a `jsonGroup` column (JSON text on D1, parsed already on Postgres), or null. */
export function pickJson(value: unknown, fields: Field[]): Record<string, unknown> | null {
  if (value == null) return null;
  return pick((typeof value === "string" ? JSON.parse(value) : value) as Row, fields);
}
