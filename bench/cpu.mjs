// CPU time per request in the Workers runtime, for the deploy guide's plan advice
// (docs/deploy.md, "Which plan"): the free plan allows 10 ms of CPU per request.
//
//   npm run bench:cpu [-- --runs 200] [--iterations 100000,50000,20000] [--hash-only]   (Linux: reads /proc)
//
// Runs the Worker as deployed (`wrangler deploy --dry-run`) under workerd with local D1, KV, R2 and
// Durable Objects (scripts/local-worker.mjs), sends `runs` requests of each kind one after another,
// and divides the CPU time workerd's threads used meanwhile (/proc/<pid>/task/*/schedstat, in ns)
// by the number of requests. That CPU time is an upper bound of what Cloudflare bills and limits:
// it also holds the local D1 (SQLite) and Durable Object work, which run elsewhere when deployed,
// and the HTTP handling. Wall time depends on the machine's load; CPU time hardly does.
// Each PASSWORD_ITERATIONS value starts a new Worker (new users are hashed with it).
import { readdirSync, readFileSync } from "node:fs";
import { Miniflare } from "miniflare";
import { startWorker } from "../scripts/local-worker.mjs";

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const RUNS = Number(opt("runs", 200));
const ITERATIONS = opt("iterations", "100000,50000,20000").split(",").map(Number);
const ADMIN_TOKEN = "bench-admin-token";
const hashOnlyMode = args.includes("--hash-only");

if (process.platform !== "linux") {
  console.error("bench/cpu.mjs reads workerd's CPU time from /proc: run it on Linux.");
  process.exit(2);
}

/** The workerd processes started by this process (Miniflare spawns one). */
function workerdPids() {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return ppid === process.pid && readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd";
      } catch {
        return false;
      }
    });
}

/** CPU ns used so far by every thread of `pids`. */
function cpuNs(pids) {
  let total = 0;
  for (const pid of pids) {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        /* thread gone */
      }
    }
  }
  return total;
}

async function measure(pids, send) {
  for (let i = 0; i < 10; i++) await send(i); // warm-up: compiled code, caches, first D1 pages
  const walls = [];
  const before = cpuNs(pids);
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await send(i);
    walls.push(performance.now() - t0);
  }
  const cpu = (cpuNs(pids) - before) / RUNS / 1e6;
  walls.sort((a, b) => a - b);
  return { cpu, wall: walls[Math.floor(walls.length / 2)] };
}

// One PBKDF2-SHA256 hash exactly as src/auth/crypto.ts computes it, alone in a Worker: the hash's
// own cost, without the rest of a login (lookups, token insert, token event).
const HASH_WORKER = `export default { async fetch(req) {
  const iterations = Number(new URL(req.url).searchParams.get("n"));
  if (!iterations) return new Response("ok");
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode("correct horse battery"), "PBKDF2", false, ["deriveBits"]);
  const salt = crypto.getRandomValues(new Uint8Array(16));
  await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, 256);
  return new Response("hashed");
} }`;

async function hashOnly(iterations) {
  const mf = new Miniflare({ modules: true, script: HASH_WORKER, compatibilityDate: "2025-09-01" });
  try {
    const url = await mf.ready;
    const pids = workerdPids();
    const empty = await measure(pids, () => fetch(url).then((r) => r.text()));
    const hashed = await measure(pids, () => fetch(`${url}?n=${iterations}`).then((r) => r.text()));
    return { cpu: hashed.cpu - empty.cpu, wall: hashed.wall - empty.wall };
  } finally {
    await mf.dispose();
  }
}

async function run(iterations) {
  const worker = await startWorker({ ADMIN_TOKEN, RATE_LIMITS: "0", PASSWORD_ITERATIONS: String(iterations) });
  try {
    const api = async (method, path, { token, json, form } = {}) => {
      const headers = token ? { Authorization: `Bearer ${token}` } : {};
      let body;
      if (json) {
        body = JSON.stringify(json);
        headers["Content-Type"] = "application/json";
      }
      if (form) body = new URLSearchParams(form);
      const res = await fetch(`${worker.url}/v1${path}`, { method, headers, body });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text);
    };
    const app = (await api("POST", "/admin/apps", { token: ADMIN_TOKEN, json: { name: "CPU bench", url: "https://bench.example" } })).data;
    await api("POST", "/admin/users", { token: ADMIN_TOKEN, json: { username: "cpubench", password: "correct horse battery" } });
    const login = {
      grant_type: "password",
      client_id: app.client_id,
      password_grant_secret: app.password_grant_secret,
      username: "cpubench",
      password: "correct horse battery",
    };
    const token = (await api("POST", "/oauth/access_token", { form: { ...login, scope: "write_post stream" } })).access_token;
    for (let i = 0; i < 20; i++) await api("POST", "/posts", { token, json: { text: `post ${i} about #cpu with https://example.com` } });

    const pids = workerdPids();
    if (!pids.length) throw new Error("no workerd process found among this process's children");
    const cases = {
      "GET /v1/health": () => api("GET", "/health"),
      "GET /v1/posts/streams/global (20 posts)": () => api("GET", "/posts/streams/global?count=20"),
      "GET /v1/users/me (token)": () => api("GET", "/users/me", { token }),
      "GET /v1/posts/streams/me (token, 20 posts)": () => api("GET", "/posts/streams/me?count=20", { token }),
      "GET /v1/users/@cpubench/posts (20 posts)": () => api("GET", "/users/@cpubench/posts?count=20"),
      "POST /v1/oauth/access_token client_credentials (no password)": () =>
        api("POST", "/oauth/access_token", { form: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret } }),
      "POST /v1/oauth/access_token password (one password hash)": () => api("POST", "/oauth/access_token", { form: login }),
    };
    const rows = [];
    for (const [name, send] of Object.entries(cases)) rows.push({ name, ...(await measure(pids, send)) });
    return rows;
  } finally {
    await worker.stop();
  }
}

const line = (r) => `  ${r.cpu.toFixed(1).padStart(6)} (${r.wall.toFixed(1).padStart(5)})  ${r.name}`;
console.log(`CPU ms per request in workerd, mean of ${RUNS} (wall median ms, which depends on the machine's load)`);
console.log("\nOne PBKDF2-SHA256 password hash, alone in a Worker (minus an empty request):");
for (const iterations of ITERATIONS) console.log(line({ name: `${iterations} iterations`, ...(await hashOnly(iterations)) }));
if (!hashOnlyMode) {
  for (const iterations of ITERATIONS) {
    console.log(`\nThis API with PASSWORD_ITERATIONS=${iterations}:`);
    for (const r of await run(iterations)) console.log(line(r));
  }
}
