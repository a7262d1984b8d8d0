// One runtime for the fault tests: the Worker built by `wrangler deploy --dry-run` (in BUILD_DIR),
// run under workerd through Miniflare on PORT, with every store (D1, KV, R2, Durable Objects)
// persisted under PERSIST_DIR, as `npm start --persist-to` keeps them. VARS (JSON) override
// wrangler.toml's vars; MIGRATE=1 applies the D1 migrations (a fresh state only). Prints `ready`
// once serving and then lives until it is killed (test/fault/runtime.mjs kills its process group,
// workerd included). Not wrangler dev itself: its restart costs 20-30 s on a busy 2-core machine.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } from "wrangler";

const { BUILD_DIR, PERSIST_DIR, PORT, VARS, MIGRATE, ROOT } = process.env;
const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(ROOT, "wrangler.toml"));
const mf = new Miniflare({
  ...workerOptions,
  modules: true,
  modulesRoot: BUILD_DIR,
  scriptPath: path.join(BUILD_DIR, "index.js"),
  bindings: { ...workerOptions.bindings, ...JSON.parse(VARS ?? "{}") },
  host: "127.0.0.1",
  port: Number(PORT),
  d1Persist: path.join(PERSIST_DIR, "d1"),
  kvPersist: path.join(PERSIST_DIR, "kv"),
  r2Persist: path.join(PERSIST_DIR, "r2"),
  durableObjectsPersist: path.join(PERSIST_DIR, "do"),
  cf: false,
  log: new Log(LogLevel.INFO), // the Worker's console output, for a failure's diagnosis
});
await mf.ready;
if (MIGRATE === "1") {
  const db = await mf.getD1Database("DB");
  const dir = path.join(ROOT, "schema/migrations");
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    const queries = unstable_splitSqlQuery(readFileSync(path.join(dir, file), "utf8")).filter((q) => q.replace(/--.*$/gm, "").trim());
    if (queries.length) await db.batch(queries.map((sql) => db.prepare(sql)));
  }
}
console.log("ready");
setInterval(() => {}, 1 << 30); // lives until killed
