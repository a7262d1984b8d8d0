// `npm run db:generate [-- --name <x>]`: writes schema/tables.ts and schema/pg/tables.ts from the
// spec (schema/spec/*.ts); with --drizzle, then runs drizzle-kit generate for both dialects (other
// arguments, e.g. --name or --custom, passed on); last, prints the counter triggers' SQL
// (schema/spec/counters.ts) that no migration defines yet. The generator is TypeScript (the unit test
// test/unit/schema-generated.test.ts runs the same function), so esbuild bundles it for Node first.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const { outputFiles } = await build({
  stdin: {
    contents: [
      `export { tables } from "./schema/spec/index.ts";`,
      `export { counterTriggers } from "./schema/spec/counters.ts";`,
      `export { generateDrizzleSchemas } from "./schema/generate/drizzle.ts";`,
      `export { counterTriggerSql, missingCounterSql } from "./schema/generate/counter-triggers.ts";`,
    ].join("\n"),
    resolveDir: root,
    loader: "ts",
  },
  bundle: true,
  format: "esm",
  platform: "node",
  write: false,
});
const mod = await import(`data:text/javascript;base64,${Buffer.from(outputFiles[0].text).toString("base64")}`);
const { sqlite, pg } = mod.generateDrizzleSchemas(mod.tables);
for (const [file, text] of [
  ["schema/tables.ts", sqlite],
  ["schema/pg/tables.ts", pg],
]) {
  const full = path.join(root, file);
  const before = readFileSync(full, "utf8");
  if (before === text) console.log(`${file}: up to date`);
  else {
    writeFileSync(full, text);
    console.log(`${file}: written`);
  }
}

const args = process.argv.slice(2);
if (args.includes("--drizzle")) {
  const rest = args.filter((a) => a !== "--drizzle");
  const kit = path.join(root, "node_modules", "drizzle-kit", "bin.cjs");
  for (const config of ["drizzle.config.ts", "drizzle.pg.config.ts"]) {
    execFileSync(process.execPath, [kit, "generate", "--config", config, ...rest], { cwd: root, stdio: "inherit" });
  }
}

// Counter triggers no migration defines yet: printed, not written, because only the author knows
// which migration is new (appending to one already applied would never run). See docs/schema.md.
const migrations = (dir) =>
  readdirSync(path.join(root, dir))
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => readFileSync(path.join(root, dir, f), "utf8"));
const missing = mod.missingCounterSql(mod.counterTriggerSql(mod.counterTriggers), {
  sqlite: migrations("schema/migrations"),
  pg: migrations("schema/pg/migrations"),
});
for (const [dialect, dir] of [
  ["sqlite", "schema/migrations"],
  ["pg", "schema/pg/migrations"],
]) {
  if (!missing[dialect].length) continue;
  console.log(`\nCounter triggers (schema/spec/counters.ts) missing from ${dir}: append to the new migration,`);
  console.log("under the comment, then check `npm test -- schema-generated`:\n");
  console.log(`--> statement-breakpoint\n-- Hand-written (generated from schema/spec/counters.ts): counter triggers.`);
  console.log(missing[dialect].join("\n--> statement-breakpoint\n"));
}
