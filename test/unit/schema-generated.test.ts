// The drizzle schemas are generated from one spec (schema/spec, docs/schema.md): the committed
// schema/tables.ts and schema/pg/tables.ts must be what the generator writes today, so an edit to
// the spec without `npm run db:generate` (or a hand edit of a generated file) fails here. The
// files are read through Vite's glob imports, which run in Node when the test is built.
/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { counterTriggerSql, liveTriggers, missingCounterSql, pgTriggerName, sqliteTriggerName } from "../../schema/generate/counter-triggers";
import { generateDrizzleSchemas } from "../../schema/generate/drizzle";
import * as pg from "../../schema/pg/tables";
import { tables } from "../../schema/spec";
import { counterTriggers, handWrittenTriggers } from "../../schema/spec/counters";
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

const migrations = (dir: string) =>
  Object.entries(
    import.meta.glob<string>(["../../schema/migrations/*.sql", "../../schema/pg/migrations/*.sql"], { query: "?raw", import: "default", eager: true }),
  )
    .filter(([path]) => path.startsWith(`../../schema/${dir}migrations/`))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, text]) => text);

describe("counter triggers (schema/spec/counters.ts)", () => {
  const sql = counterTriggerSql(counterTriggers);
  const defined = { sqlite: migrations(""), pg: migrations("pg/") };

  it("the migrations define every generated trigger and function, as generated (whitespace aside)", () => {
    expect(defined.sqlite.length).toBeGreaterThan(10);
    expect(defined.pg.length).toBeGreaterThan(10);
    expect(sql.sqlite.length).toBeGreaterThan(0);
    expect(missingCounterSql(sql, defined)).toEqual({ sqlite: [], pg: [] });
  });

  it("every trigger the migrations leave in place is a declared counter or a listed hand-written one", () => {
    const declared = {
      sqlite: counterTriggers.flatMap((t) => t.events.map((e) => sqliteTriggerName(t, e))),
      pg: counterTriggers.map(pgTriggerName),
    };
    expect(liveTriggers(defined.sqlite)).toEqual([...declared.sqlite, ...handWrittenTriggers].sort());
    expect(liveTriggers(defined.pg)).toEqual([...declared.pg].sort());
  });

  it("a changed declaration shows as missing SQL, the old trigger dropped first", () => {
    const changed = counterTriggers.map((t) => (t.source === "users" ? { ...t, updateOf: [...(t.updateOf ?? []), "cover_url"] } : t));
    const missing = missingCounterSql(counterTriggerSql(changed), defined);
    expect(missing.sqlite).toEqual([
      "DROP TRIGGER IF EXISTS `presence_versions_users`;",
      expect.stringContaining("AFTER UPDATE OF username, name, avatar_url, is_disabled, cover_url ON `users`"),
    ]);
    expect(missing.pg).toEqual(["DROP TRIGGER IF EXISTS presence_versions_users ON users;", expect.stringContaining("cover_url ON users")]);
  });

  it("a new counted table is its triggers and, on Postgres, the counter's function replaced", () => {
    const added = [...counterTriggers, { counter: "presence_versions", source: "channel_presence", events: ["insert" as const], key: "user_id", shards: 16 }];
    const missing = missingCounterSql(counterTriggerSql(added), defined);
    expect(missing.sqlite).toEqual([
      "CREATE TRIGGER `presence_versions_channel_presence` AFTER INSERT ON `channel_presence` BEGIN\n" +
        "  UPDATE presence_versions SET version = version + 1 WHERE shard = new.user_id % 16;\nEND;",
    ]);
    expect(missing.pg).toEqual([
      expect.stringMatching(
        /^CREATE OR REPLACE FUNCTION es_bump_presence_version\(\)[\s\S]*IF TG_TABLE_NAME = 'users' THEN[\s\S]*ELSIF TG_TABLE_NAME = 'channel_presence' THEN/,
      ),
      "CREATE TRIGGER presence_versions_channel_presence AFTER INSERT ON channel_presence FOR EACH ROW EXECUTE FUNCTION es_bump_presence_version();",
    ]);
  });
});
