// `npm run db:generate`, step 1: writes schema/tables.ts and schema/pg/tables.ts from the spec
// (schema/spec/*.ts) and prints the counter triggers' SQL (schema/generate/counters.ts) for a
// migration that adds a counted table. The generator is TypeScript (the unit test
// test/unit/schema-generated.test.ts runs the same function), so esbuild bundles it for Node first.
import { writeFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const { outputFiles } = await build({
  stdin: {
    contents: `export { tables } from "./schema/spec/index.ts"; export { generateDrizzleSchemas } from "./schema/generate/drizzle.ts";`,
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
for (const [file, text] of [["schema/tables.ts", sqlite], ["schema/pg/tables.ts", pg]]) {
  const full = path.join(root, file);
  const before = readFileSync(full, "utf8");
  if (before === text) console.log(`${file}: up to date`);
  else {
    writeFileSync(full, text);
    console.log(`${file}: written`);
  }
}
