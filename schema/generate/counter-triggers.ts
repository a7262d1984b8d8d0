/**
 * Both dialects' trigger SQL for the counters declared in schema/spec/counters.ts, and what of it
 * the migrations do not define yet. Pure (the script and the unit test both run it).
 *
 * SQLite: one `AFTER <event>` trigger per source and event, each bumping the shard of the row.
 * Postgres: one plpgsql function per counter table, branching on the source table and operation,
 * and one `FOR EACH ROW` trigger per source calling it (adding a source replaces the function).
 */

import type { CounterTrigger } from "../spec/counters";

export interface CounterSql {
  sqlite: string[];
  pg: string[];
}

const bump = (t: CounterTrigger, row: string) => `UPDATE ${t.counter} SET version = version + 1 WHERE shard = ${row}.${t.key} % ${t.shards};`;
const updateOf = (t: CounterTrigger, event: string) => (event === "update" && t.updateOf ? ` OF ${t.updateOf.join(", ")}` : "");

export const sqliteTriggerName = (t: CounterTrigger, event: string) => {
  const base = t.sqliteName ?? `${t.counter}_${t.source}`;
  return t.events.length > 1 ? `${base}_${event}` : base;
};
export const pgTriggerName = (t: CounterTrigger) => `${t.counter}_${t.source}`;
export const pgFunctionName = (counter: string) => `es_bump_${counter.replace(/s$/, "")}`;

function sqliteTriggers(t: CounterTrigger): string[] {
  return t.events.map(
    (e) =>
      `CREATE TRIGGER \`${sqliteTriggerName(t, e)}\` AFTER ${e.toUpperCase()}${updateOf(t, e)} ON \`${t.source}\` BEGIN\n` +
      `  ${bump(t, e === "delete" ? "old" : "new")}\nEND;`,
  );
}

/** The counter's function: sources that see deletes last, the last source as the ELSE branch. */
function pgFunction(counter: string, sources: CounterTrigger[]): string {
  const ordered = [...sources.filter((t) => !t.events.includes("delete")), ...sources.filter((t) => t.events.includes("delete"))];
  const branches: { cond?: string; body: string }[] = [];
  ordered.forEach((t, i) => {
    const table = i < ordered.length - 1 ? `TG_TABLE_NAME = '${t.source}'` : undefined;
    const and = (...c: (string | undefined)[]) => c.filter(Boolean).join(" AND ") || undefined;
    if (t.events.includes("delete")) branches.push({ cond: and(table, t.events.length > 1 ? "TG_OP = 'DELETE'" : undefined), body: bump(t, "OLD") });
    if (t.events.some((e) => e !== "delete")) branches.push({ cond: table, body: bump(t, "NEW") });
  });
  let body: string;
  if (branches.length === 1 && !branches[0].cond) body = `  ${branches[0].body}\n`;
  else {
    body = branches.map((b, i) => `  ${b.cond ? `${i ? "ELSIF" : "IF"} ${b.cond} THEN` : "ELSE"}\n    ${b.body}\n`).join("");
    body += "  END IF;\n";
  }
  return `CREATE FUNCTION ${pgFunctionName(counter)}() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n${body}  RETURN NULL;\nEND $$;`;
}

function pgTrigger(t: CounterTrigger): string {
  const events = t.events.map((e) => `${e.toUpperCase()}${updateOf(t, e)}`).join(" OR ");
  return `CREATE TRIGGER ${pgTriggerName(t)} AFTER ${events} ON ${t.source} FOR EACH ROW EXECUTE FUNCTION ${pgFunctionName(t.counter)}();`;
}

/** Every counter's SQL, as migration statements. */
export function counterTriggerSql(list: CounterTrigger[]): CounterSql {
  const counters = [...new Set(list.map((t) => t.counter))];
  return {
    sqlite: list.flatMap(sqliteTriggers),
    pg: counters.flatMap((c) => {
      const sources = list.filter((t) => t.counter === c);
      return [pgFunction(c, sources), ...sources.map(pgTrigger)];
    }),
  };
}

/** A migration's statements, comments dropped and whitespace collapsed (how the SQL is compared). */
export function statements(migration: string): string[] {
  return migration
    .split("--> statement-breakpoint")
    .map((s) =>
      s
        .split("\n")
        .filter((l) => !l.trim().startsWith("--"))
        .join(" ")
        .replace(/\s+/g, " ")
        .trim(),
    )
    .filter(Boolean);
}

const norm = (s: string) => statements(s)[0] ?? "";
const FUNCTION = /^CREATE (?:OR REPLACE )?FUNCTION (\w+)\(/;

/**
 * The generated statements that the migrations (each dialect's files, in order) do not define:
 * a trigger whose CREATE is in no migration (after a DROP when one of its name is in place), or
 * a function whose latest definition differs (as CREATE OR REPLACE), to append to a new migration.
 */
export function missingCounterSql(generated: CounterSql, migrations: CounterSql): CounterSql {
  const missing = (mine: string[], theirs: string[]) => {
    const defined = theirs.flatMap(statements);
    const live = new Set(liveTriggers(theirs));
    return mine.flatMap((stmt) => {
      const fn = FUNCTION.exec(stmt)?.[1];
      if (!fn) {
        if (defined.includes(norm(stmt))) return [];
        // A changed trigger: the old one goes first (CREATE TRIGGER refuses an existing name).
        const [, quote, name, table] = /^CREATE TRIGGER ([`"]?)(\w+)[`"]? AFTER .*? ON [`"]?(\w+)/s.exec(stmt) ?? [];
        if (!live.has(name)) return [stmt];
        return [quote ? `DROP TRIGGER IF EXISTS ${quote}${name}${quote};` : `DROP TRIGGER IF EXISTS ${name} ON ${table};`, stmt];
      }
      const latest = defined.filter((s) => FUNCTION.exec(s)?.[1] === fn).at(-1);
      if (latest?.replace("CREATE OR REPLACE FUNCTION", "CREATE FUNCTION") === norm(stmt)) return [];
      return [latest ? stmt.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION") : stmt];
    });
  };
  return { sqlite: missing(generated.sqlite, migrations.sqlite), pg: missing(generated.pg, migrations.pg) };
}

/** Trigger names a dialect's migrations leave in place (created and not dropped later). */
export function liveTriggers(migrations: string[]): string[] {
  const live = new Set<string>();
  for (const s of migrations.flatMap(statements)) {
    const created = /^CREATE TRIGGER [`"]?(\w+)/.exec(s)?.[1];
    const dropped = /^DROP TRIGGER (?:IF EXISTS )?[`"]?(\w+)/.exec(s)?.[1];
    if (created) live.add(created);
    if (dropped) live.delete(dropped);
  }
  return [...live].sort();
}
