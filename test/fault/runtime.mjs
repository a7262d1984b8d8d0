// The runtime under test for the fault tests: the Worker under workerd (test/fault/serve.mjs), in a
// process group of its own, so that a kill takes all of it at once, as a crashed host would.
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const ADMIN_TOKEN = "fault-admin-token";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/**
 * The Worker on `port` with its state in `persist` (D1, KV, R2, Durable Objects), or with Postgres
 * at `pg` ({ url, proxy }); built once into `persist`/build. `start()` resolves once the API
 * answers; `kill()` sends SIGKILL to the whole process group (no clean stop: nothing gets to
 * flush or finish). The runtime's output goes to `logFile`.
 */
export function runtime({ port, persist, pg, logFile }) {
  let child = null;
  let exited = null;
  let started = 0;
  const tail = [];
  const build = path.join(persist, "build");
  const vars = { ADMIN_TOKEN, RATE_LIMITS: "0", PASSWORD_ITERATIONS: "1000", DB_BACKEND: pg ? "postgres" : "d1" };
  if (pg) Object.assign(vars, { DATABASE_URL: pg.url, DB_PROXY: pg.proxy });
  const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
  const wrangler = path.join(ROOT, "node_modules/wrangler/bin/wrangler.js");

  async function start() {
    if (!started) execFileSync(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", build], { cwd: ROOT, env, stdio: "ignore" });
    const serveEnv = { ...env, ROOT, BUILD_DIR: build, PERSIST_DIR: persist, PORT: String(port), VARS: JSON.stringify(vars), MIGRATE: started ? "0" : "1" };
    started++;
    child = spawn(process.execPath, [path.join(ROOT, "test/fault/serve.mjs")], { cwd: ROOT, env: serveEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    exited = new Promise((resolve) => child.on("exit", resolve));
    for (const stream of [child.stdout, child.stderr])
      stream.on("data", (d) => {
        if (logFile) appendFileSync(logFile, d);
        for (const line of String(d).split("\n")) if (line.trim()) tail.push(line), tail.length > 60 && tail.shift();
      });
    const until = Date.now() + 120_000;
    let gone = false;
    exited.then(() => (gone = true));
    while (Date.now() < until && !gone) {
      if (tail.includes("ready")) {
        const ok = await fetch(`http://127.0.0.1:${port}/v1/sys/config`, { signal: AbortSignal.timeout(5000) }).then(
          (r) => r.arrayBuffer().then(() => r.ok),
          () => false,
        );
        if (ok) return;
      }
      await sleep(100);
    }
    throw new Error(`the runtime did not start within 2 minutes; its last output:\n${tail.join("\n")}`);
  }

  /** SIGKILL to the runtime's process group (its Node process and workerd). */
  async function kill() {
    if (!child) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {} // already gone
    await exited;
    // The group's other members die with it; wait until none is left holding the port.
    for (let i = 0; i < 50 && groupAlive(child.pid); i++) await sleep(100);
    tail.length = 0;
    child = null;
  }

  return { start, kill, tail, origin: `http://127.0.0.1:${port}` };
}

/** Whether any process of group `pgid` is still alive (signal 0 probes without sending). */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
