// The SQL-level half of schema parity (schema/parity.ts checks the TypeScript row types at
// compile time): the pg-core mirror must name the same tables, columns, indexes and keys as the
// sqlite-core schema, with the same nullability, defaults and uniqueness, so raw SQL written
// for one backend addresses the same objects on the other.
import { Column, SQL, StringChunk, Table, getTableColumns, getTableName, is } from "drizzle-orm";
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as pg from "../../schema/pg/tables";
import * as sqlite from "../../schema/tables";

const tablesOf = (m: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(m).filter(([, v]) => is(v, Table))) as Record<string, Table>;
const sqliteTables = tablesOf(sqlite);
const pgTables = tablesOf(pg);

/** Dialect-neutral text of an `sql` fragment: its literal text, columns by name, params as `?`. */
function sqlText(q: SQL): string {
  return q.queryChunks
    .map((ch) => (is(ch, StringChunk) ? ch.value.join("") : is(ch, Column) ? `"${ch.name}"` : is(ch, SQL) ? sqlText(ch) : "?"))
    .join("")
    .trim();
}

/** A default as SQL would see it: booleans are 0/1 (flags are integers on both backends), `sql` defaults by their text. */
function sqlDefault(c: Column): unknown {
  const d = c.default;
  if (d === undefined) return undefined;
  if (is(d, SQL)) return sqlText(d);
  if (typeof d === "boolean") return d ? "1" : "0";
  return String(d);
}

/** SQLite storage class of a column type (pg bigint/integer/smallint are all INTEGER). */
const storage = (sqlType: string) => (/^(bigint|integer|smallint)$/.test(sqlType) ? "integer" : sqlType);

interface Shape {
  name: string;
  columns: Record<string, { name: string; type: string; notNull: boolean; default: unknown; primary: boolean; autoId: boolean }>;
  primaryKeys: { name: string; columns: string[] }[];
  indexes: { name: string; columns: string[]; unique: boolean; where: string | undefined }[];
}

function columnShape(c: Column, autoId: boolean) {
  return { name: c.name, type: storage(c.getSQLType()), notNull: c.notNull, default: sqlDefault(c), primary: c.primary, autoId };
}

const whereText = (w: SQL | undefined) => (w ? sqlText(w) : undefined);

function sqliteShape(t: Table): Shape {
  const cfg = sqliteConfig(t as SQLiteTable);
  const keys = Object.entries(getTableColumns(t));
  return {
    name: cfg.name,
    columns: Object.fromEntries(keys.map(([k, c]) => [k, columnShape(c, (c as unknown as { autoIncrement?: boolean }).autoIncrement === true)])),
    primaryKeys: cfg.primaryKeys.map((pk) => ({ name: pk.getName(), columns: pk.columns.map((c) => c.name) })),
    indexes: cfg.indexes
      .map((i) => ({
        name: i.config.name,
        columns: i.config.columns.map((c) => (is(c, Column) ? c.name : String(c))),
        unique: i.config.unique,
        where: whereText(i.config.where),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

function pgShape(t: Table): Shape {
  const cfg = pgConfig(t as PgTable);
  const keys = Object.entries(getTableColumns(t));
  return {
    name: cfg.name,
    columns: Object.fromEntries(keys.map(([k, c]) => [k, columnShape(c, c.generatedIdentity !== undefined)])),
    primaryKeys: cfg.primaryKeys.map((pk) => ({ name: pk.getName(), columns: pk.columns.map((c) => c.name) })),
    indexes: cfg.indexes
      .map((i) => ({
        name: i.config.name!,
        columns: i.config.columns.map((c) => (is(c, Column) ? c.name : (c as { name?: string }).name ?? String(c))),
        unique: i.config.unique,
        where: whereText(i.config.where),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

describe("schema parity: sqlite-core (D1) vs pg-core (Postgres)", () => {
  it("both export the same tables", () => {
    expect(Object.keys(pgTables).sort()).toEqual(Object.keys(sqliteTables).sort());
    expect(Object.keys(sqliteTables).length).toBeGreaterThan(30);
  });

  for (const key of Object.keys(sqliteTables)) {
    it(`${key}: same table, columns, keys and indexes`, () => {
      const s = sqliteShape(sqliteTables[key]);
      const p = pgShape(pgTables[key]);
      expect(getTableName(pgTables[key])).toBe(getTableName(sqliteTables[key]));
      expect(p).toEqual(s);
    });
  }

  it("flags are numeric in SQL and booleans in JS", () => {
    const flag = pg.messages.isDeleted;
    expect(flag.getSQLType()).toBe("smallint");
    expect([flag.mapToDriverValue(true), flag.mapToDriverValue(false)]).toEqual([1, 0]);
    expect([flag.mapFromDriverValue(1), flag.mapFromDriverValue(0)]).toEqual([true, false]);
  });

  it("JSON columns are text holding JSON, as on SQLite", () => {
    const json = pg.appStreams.objectTypes;
    expect(json.getSQLType()).toBe("text");
    expect(json.mapToDriverValue(["post", "message"])).toBe(sqlite.appStreams.objectTypes.mapToDriverValue(["post", "message"]));
    expect(json.mapFromDriverValue('{"a":[1,null]}')).toEqual({ a: [1, null] });
  });
});
