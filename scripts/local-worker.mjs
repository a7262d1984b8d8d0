// The Worker as it would be deployed (`wrangler deploy --dry-run`), run under workerd through
// Miniflare on a free loopback port with local D1, KV, R2 and Durable Objects in a throwaway
// folder, D1 migrated. For tools that need a real server: the OpenAPI lint and the browser tests.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } from "wrangler";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Builds and starts the Worker; `vars` override wrangler.toml's. Resolves to `{ url, stop }`,
 * `url` being the origin (e.g. http://127.0.0.1:41234). `stop()` disposes of it and its state.
 */
export async function startWorker(vars = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "edge-worker-"));
  const outdir = path.join(dir, "build");
  const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
  execFileSync(process.execPath, [path.join(root, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", outdir], {
    cwd: root,
    env,
    stdio: "ignore",
  });
  const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(root, "wrangler.toml"));
  const mf = new Miniflare({
    ...workerOptions,
    modules: true,
    modulesRoot: outdir,
    scriptPath: path.join(outdir, "index.js"),
    bindings: { ...workerOptions.bindings, ...vars },
    host: "127.0.0.1",
    port: 0,
    d1Persist: path.join(dir, "d1"),
    kvPersist: path.join(dir, "kv"),
    r2Persist: path.join(dir, "r2"),
    durableObjectsPersist: path.join(dir, "do"),
    cf: false,
  });
  const stop = async () => {
    await mf.dispose().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = (await mf.ready).origin;
    const db = await mf.getD1Database("DB");
    const migrations = path.join(root, "schema/migrations");
    for (const file of readdirSync(migrations)
      .filter((f) => f.endsWith(".sql"))
      .sort()) {
      // Statements only: a part that is nothing but comments is no statement to D1.
      const queries = unstable_splitSqlQuery(readFileSync(path.join(migrations, file), "utf8")).filter((q) => q.replace(/--.*$/gm, "").trim());
      if (queries.length) await db.batch(queries.map((sql) => db.prepare(sql)));
    }
    return { url, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The OpenAPI document the Worker serves (`/v1/openapi.json`), from a Worker started for it with `vars`. */
export async function servedOpenApi(vars = {}) {
  const worker = await startWorker(vars);
  try {
    const res = await fetch(`${worker.url}/v1/openapi.json`);
    if (res.status !== 200) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
    return await res.json();
  } finally {
    await worker.stop();
  }
}
