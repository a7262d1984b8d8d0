// `npm run lint:openapi`: lints the OpenAPI document the built Worker serves at /v1/openapi.json
// with Redocly's CLI (redocly.yaml: the recommended ruleset plus descriptions and examples;
// .redocly.lint-ignore.yaml: the two documented exceptions). Offline: no telemetry, no update check.
// The document is the one served with BENCH_FLOORS=1, so the benchmark's routes are linted too.
// Prints each problem with the operation and the route file it comes from, then one line:
// `OpenAPI lint: N errors, N warnings` (exit 1 unless both are 0).
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { servedOpenApi } from "./local-worker.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();
// The path the ignore file names the document by (relative to the repository; .wrangler is not tracked).
const docFile = ".wrangler/openapi.json";

const doc = await servedOpenApi({ ADMIN_TOKEN: "lint-admin-token", RATE_LIMITS: "0", BENCH_FLOORS: "1" });
mkdirSync(path.join(root, ".wrangler"), { recursive: true });
writeFileSync(path.join(root, docFile), JSON.stringify(doc, null, 2));

const run = spawnSync(
  process.execPath,
  [path.join(root, "node_modules/@redocly/cli/bin/cli.js"), "lint", docFile, "--config", "redocly.yaml", "--format", "json", "--max-problems", "10000"],
  { cwd: root, encoding: "utf8", env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } },
);
let report;
try {
  report = JSON.parse(run.stdout);
} catch {
  console.error(run.stdout + run.stderr);
  console.log("OpenAPI lint: the linter did not run");
  process.exit(1);
}

/** Route file(s) naming each path (a string literal "/…" in src/routes/*.ts), for the report. */
const routesDir = path.join(root, "src/routes");
const fileOf = new Map();
for (const name of readdirSync(routesDir).filter((n) => n.endsWith(".ts"))) {
  for (const m of readFileSync(path.join(routesDir, name), "utf8").matchAll(/"(\/[^"\s]*)"/g)) {
    fileOf.set(`/v1${m[1]}`, [...new Set([...(fileOf.get(`/v1${m[1]}`) ?? []), `src/routes/${name}`])]);
  }
}
const unescapePointer = (s) => s.replace(/~1/g, "/").replace(/~0/g, "~");
function where(pointer) {
  const [, p, method, ...rest] = pointer.replace(/^#\//, "").split("/").map(unescapePointer);
  if (pointer.startsWith("#/paths/") && p) {
    const op = method && /^(get|put|post|delete|patch|head|options)$/.test(method) ? `${method.toUpperCase()} ${p}` : p;
    const detail = rest[0] === "parameters" ? ` parameter ${doc.paths[p]?.[method]?.parameters?.[rest[1]]?.name ?? rest[1]}` : "";
    return `${(fileOf.get(p) ?? ["?"]).join(", ")}: ${op}${detail}`;
  }
  return pointer;
}

const problems = report.problems.filter((p) => p.ignored !== true);
const byRule = new Map();
for (const p of problems) {
  const key = `${p.severity} ${p.ruleId}`;
  byRule.set(key, [...(byRule.get(key) ?? []), where(p.location[0]?.pointer ?? "")]);
}
for (const [rule, places] of byRule) {
  console.log(`${rule} (${places.length}):`);
  for (const place of [...new Set(places)].sort()) console.log(`  ${place}`);
}
const { errors, warnings } = report.totals;
const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).filter((k) => k !== "parameters").length, 0);
console.log(`OpenAPI lint: ${errors} errors, ${warnings} warnings (${operations} operations, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
process.exit(errors || warnings ? 1 : 0);
