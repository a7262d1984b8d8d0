// The drizzle schemas are generated from one spec (schema/spec, docs/schema.md): the committed
// schema/tables.ts and schema/pg/tables.ts must be what the generator writes today, so an edit to
// the spec without `npm run db:generate` (or a hand edit of a generated file) fails here. The
// files are read through Vite's glob imports, which run in Node when the test is built.
/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { generateDrizzleSchemas } from "../../schema/generate/drizzle";
import * as pg from "../../schema/pg/tables";
import { tables } from "../../schema/spec";
import * as sqlite from "../../schema/tables";

const committed = import.meta.glob<string>(["../../schema/tables.ts", "../../schema/pg/tables.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
});

describe("generated drizzle schemas", () => {
  const generated = generateDrizzleSchemas(tables);

  it("schema/tables.ts is what the spec generates (run `npm run db:generate`)", () => {
    expect(committed["../../schema/tables.ts"]).toBe(generated.sqlite);
  });

  it("schema/pg/tables.ts is what the spec generates (run `npm run db:generate`)", () => {
    expect(committed["../../schema/pg/tables.ts"]).toBe(generated.pg);
  });

  it("every spec table is exported by both schemas", () => {
    const names = (m: Record<string, unknown>) => Object.keys(m).sort();
    expect(names(pg)).toEqual(names(sqlite));
    expect(names(sqlite).length).toBe(tables.length);
  });

  it("flags are numeric in SQL and booleans in JS on Postgres", () => {
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
