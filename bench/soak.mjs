// `npm run bench -- soak [--minutes 10] [...]` (or `node bench/soak.mjs ...`): a bounded soak of
// `npm start` on loopback. Starts `scripts/dev.mjs` (wrangler dev, local D1) on a free port with
// throwaway state, seeds users through the API, drives a steady open-loop mix of writes and reads
// from all of them, and every few seconds samples the resident memory (/proc VmRSS) of the Worker's
// workerd, of wrangler's proxy workerd and of wrangler's node process. Prints a row per window
// (requests, p50/p99, non-2xx, RSS), then per process the RSS at warm-up end and at the end, the
// slope over the last third, and a verdict. A measurement: the verdict never sets the exit code
// (only a server that does not start does). Stops by itself, whatever happens.
// Options: --minutes (10), --writes (23/s), --reads (12/s), --users (40), --sample (5 s),
// --concurrency (at most 32 requests in flight), --window (30 s), --flat (MB/min over the last third
// counted as flat, 2: about 1 KB a request at this rate), --port (a free one), --devtools
// (`npm start -- --devtools`: wrangler's DevTools proxy on, to see what it costs).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { liveHeap, workerInspector } from "./isolate-heap.mjs";
import { commandLine, descendants, npmStartProcesses, rssMb } from "./proc-memory.mjs";
import { client, draw, mix, seedUsers } from "./soak-mix.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== "soak"),
  options: {
    ...Object.fromEntries(["minutes", "writes", "reads", "users", "concurrency", "sample", "window", "flat", "port"].map((k) => [k, { type: "string" }])),
    devtools: { type: "boolean" },
  },
});
const opt = (k, d) => (values[k] === undefined ? d : Number(values[k]));
const MINUTES = opt("minutes", 10);
const WRITES = opt("writes", 23);
const READS = opt("reads", 12);
const USERS = opt("users", 40);
const SAMPLE_S = opt("sample", 5);
const WINDOW_S = opt("window", 30);
const FLAT = opt("flat", 2);
// Open loop, but with at most this many requests in flight (as a client's connection pool): an
// overloaded server (a busy machine) must not pile up requests until it times out connections.
const MAX_IN_FLIGHT = opt("concurrency", 32);
const ADMIN_TOKEN = "soak-admin-token";
// Live heap growth counted as flat: per-isolate caches (compiled statements by shape, token
// hashes, bans, the presence list) fill as the mix runs, so a few MB move between warm-up and end.
const FLAT_HEAP_MB = 8;
const ROLES = { worker: "worker (workerd)", proxyRuntime: "proxy (workerd)", wrangler: "wrangler dev (node)" };
const log = (...a) => console.log(...a);

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// 1. `npm start`, on its own port and state; its output is drained (kept: the last lines, for a failure).
const port = values.port ? Number(values.port) : await freePort();
const origin = `http://127.0.0.1:${port}`;
const persist = mkdtempSync(path.join(tmpdir(), "soak-"));
const vars = [`ADMIN_TOKEN:${ADMIN_TOKEN}`, "RATE_LIMITS:0", "DB_BACKEND:d1"].flatMap((v) => ["--var", v]);
const devArgs = ["--port", String(port), "--persist-to", persist, ...vars, ...(values.devtools ? ["--devtools"] : [])];
const server = spawn(process.execPath, ["scripts/dev.mjs", ...devArgs], {
  cwd: root,
  env: { ...process.env, DB_BACKEND: "d1" },
  stdio: ["ignore", "pipe", "pipe"],
});
const tail = [];
const serverErrors = [];
for (const stream of [server.stdout, server.stderr]) {
  let partial = "";
  stream.on("data", (d) => {
    const lines = (partial + d).split("\n");
    partial = lines.pop();
    for (const line of lines) {
      tail.push(line), tail.length > 40 && tail.shift();
      if (/ERROR|restarted mid-request/.test(line) && serverErrors.length < 20) serverErrors.push(line.slice(0, 300));
    }
  });
}
let serverExited = false;
server.on("exit", () => (serverExited = true));
const started = new Map(); // pid → command line of every process `npm start` ran, as last seen
const remember = () => {
  if (!serverExited) started.set(server.pid, commandLine(server.pid));
  for (const p of descendants(server.pid)) started.set(p.pid, p.cmd);
};

/**
 * Stops `npm start` (SIGTERM, as Ctrl-C would), then kills what is left of the processes it
 * started: by pid, and only while that pid still runs the same command (not a reused pid).
 */
async function stopServer() {
  remember();
  if (!serverExited) server.kill("SIGTERM");
  for (let i = 0; i < 50 && !serverExited; i++) await sleep(200);
  for (const [pid, cmd] of started) {
    if (commandLine(pid) !== cmd) continue; // gone, or another process now
    try {
      process.kill(pid, "SIGKILL");
    } catch {} // ended meanwhile
  }
  rmSync(persist, { recursive: true, force: true });
}
// An unexpected failure (seeding, say) must not leave `npm start` running.
for (const event of ["uncaughtException", "unhandledRejection"]) {
  process.on(event, (err) => {
    console.error("Soak failed:", err);
    stopServer().then(() => process.exit(1));
  });
}
// Whatever happens (a hung server, a stuck request), the soak ends: the run plus 5 minutes for setup.
const deadline = setTimeout(
  async () => {
    console.error("Soak: past its deadline; stopping.");
    await stopServer();
    process.exit(0);
  },
  (MINUTES * 60 + 300) * 1000,
);
deadline.unref();
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => stopServer().then(() => process.exit(130)));

async function ready() {
  const until = Date.now() + 180_000;
  while (Date.now() < until && !serverExited) {
    const ok = await fetch(`${origin}/v1/sys/config`).then(
      (r) => r.arrayBuffer().then(() => r.ok),
      () => false,
    );
    if (ok) return true;
    await sleep(500);
  }
  return false;
}

log(`Soak: starting npm start (wrangler dev, local D1) on ${origin}...`);
if (!(await ready())) {
  console.error(`Soak: the server did not answer within 3 minutes. Its last output:\n${tail.join("\n")}`);
  await stopServer();
  process.exit(1);
}
const api = client(origin);
const users = await seedUsers(api, ADMIN_TOKEN, USERS);
const procs = npmStartProcesses(server.pid, port);
remember();
const roles = Object.keys(ROLES).filter((r) => procs[r]);
// Not with --devtools: workerd's inspector takes one client per isolate, and the probe would
// disconnect wrangler's DevTools proxy, the very thing such a run measures.
const probeHeap = !values.devtools;
let inspector = probeHeap && procs.worker ? await workerInspector(procs.worker) : undefined;
const poke = () => fetch(`${origin}/v1/health`).then((r) => r.arrayBuffer());
log(`Seeded ${users.length} users. Processes: ${roles.map((r) => `${ROLES[r]} pid ${procs[r]}`).join(", ")}.`);
log(`Load: ${WRITES} writes/s + ${READS} reads/s for ${MINUTES} min; RSS every ${SAMPLE_S} s; a row every ${WINDOW_S} s.\n`);

// 2. Load (open loop: requests leave on schedule whether or not earlier ones answered) and sampling.
const { writes, reads } = mix();
const statuses = {};
const examples = {}; // the first answer of each non-2xx status, to tell the API's errors from the proxy's
let inFlight = 0;
let dropped = 0;
let total = 0;
let windowLatencies = [];
let windowNon2xx = 0;
async function fire(op) {
  if (inFlight >= MAX_IN_FLIGHT) return void dropped++;
  inFlight++;
  const t0 = performance.now();
  let status = "network error";
  try {
    const r = await op(api, users);
    status = r.status;
    if (!(status >= 200 && status < 300)) examples[status] ??= JSON.stringify(r.body).slice(0, 200);
  } catch (e) {
    examples[status] ??= String(e.cause ?? e).slice(0, 200);
  }
  inFlight--;
  total++;
  statuses[status] = (statuses[status] ?? 0) + 1;
  if (!(status >= 200 && status < 300)) windowNon2xx++;
  windowLatencies.push(performance.now() - t0);
}
const TICK_MS = 50;
let writeDebt = 0;
let readDebt = 0;
const loadTimer = setInterval(() => {
  writeDebt += (WRITES * TICK_MS) / 1000;
  readDebt += (READS * TICK_MS) / 1000;
  for (; writeDebt >= 1; writeDebt--) fire(draw(writes));
  for (; readDebt >= 1; readDebt--) fire(draw(reads));
}, TICK_MS);

const start = Date.now();
const samples = [];
// A process that is gone was replaced (wrangler restarts workerd when a watched file changes):
// follow the new one and count it, as its memory starts over.
const restarts = {};
const sample = () => {
  const s = { t: (Date.now() - start) / 1000, requests: total };
  for (const r of roles) {
    s[r] = rssMb(procs[r]);
    if (s[r] !== undefined) continue;
    const now = npmStartProcesses(server.pid, port);
    if (now[r] && now[r] !== procs[r]) (procs[r] = now[r]), (restarts[r] = (restarts[r] ?? 0) + 1), (s[r] = rssMb(now[r])), remember();
    if (r === "worker") inspector = undefined;
  }
  samples.push(s);
  return s;
};
const windows = [];
const pct = (sorted, p) => (sorted.length ? +sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(1) : null);
const pad = (s, n) => String(s ?? "-").padStart(n);
log(`${"time".padEnd(6)}${pad("req", 6)}${pad("p50 ms", 8)}${pad("p99 ms", 8)}${pad("non2xx", 8)}${roles.map((r) => pad(`${r} MB`, 16)).join("")}`);
sample();
const endAt = start + MINUTES * 60_000;
let nextWindow = start + WINDOW_S * 1000;
// The Worker's live heap (after a full GC) once at warm-up end and once at the end: RSS includes
// garbage V8 collects lazily, the live heap is what our code keeps.
const warmS = (MINUTES * 60) / 3;
const heap = {};
while (Date.now() < endAt && !serverExited) {
  await sleep(Math.min(SAMPLE_S * 1000, endAt - Date.now()));
  const s = sample();
  if (probeHeap && !inspector && procs.worker) inspector = await workerInspector(procs.worker);
  if (inspector && !heap.warmup && s.t >= warmS) heap.warmup = await liveHeap(inspector, poke);
  if (Date.now() >= nextWindow || Date.now() >= endAt) {
    nextWindow += WINDOW_S * 1000;
    const sorted = windowLatencies.sort((a, b) => a - b);
    const w = {
      t: s.t,
      requests: sorted.length,
      p50_ms: pct(sorted, 50),
      p99_ms: pct(sorted, 99),
      non2xx: windowNon2xx,
      rss_mb: Object.fromEntries(roles.map((r) => [r, s[r]])),
    };
    windows.push(w);
    windowLatencies = [];
    windowNon2xx = 0;
    const mmss = `${Math.floor(s.t / 60)}:${String(Math.round(s.t % 60)).padStart(2, "0")}`;
    log(`${mmss.padEnd(6)}${pad(w.requests, 6)}${pad(w.p50_ms, 8)}${pad(w.p99_ms, 8)}${pad(w.non2xx, 8)}${roles.map((r) => pad(s[r], 16)).join("")}`);
  }
}
clearInterval(loadTimer);
for (let i = 0; i < 100 && inFlight > 0; i++) await sleep(100);
if (inspector && !serverExited) heap.end = await liveHeap(inspector, poke);
if (serverExited) console.error(`\nSoak: the server exited during the run. Its last output:\n${tail.join("\n")}`);
await stopServer();
clearTimeout(deadline);

// 3. Summary: per process, RSS at warm-up end (a third of the run) and at the end, and the slope of a
// least-squares line through the last third's samples; flat when that slope is at most --flat MB/min.
function slopeMbPerMin(points) {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return sxx ? (sxy / sxx) * 60 : 0;
}
const runS = samples[samples.length - 1].t;
const warm = samples.find((s) => s.t >= runS / 3) ?? samples[0];
const lastThird = samples.filter((s) => s.t >= (2 * runS) / 3);
const end = samples[samples.length - 1];
const reqPerMin =
  lastThird.length > 1 ? ((lastThird[lastThird.length - 1].requests - lastThird[0].requests) / (lastThird[lastThird.length - 1].t - lastThird[0].t)) * 60 : 0;
const summary = {};
log(
  `\n${total} requests in ${(runS / 60).toFixed(1)} min (${(total / runS).toFixed(1)}/s); statuses ${JSON.stringify(statuses)}${dropped ? `; ${dropped} not sent (${MAX_IN_FLIGHT} in flight)` : ""}`,
);
log(`${"process".padEnd(22)}${pad("start MB", 10)}${pad("warm-up MB", 12)}${pad("end MB", 10)}${pad("last third MB/min", 19)}${pad("KB/req", 8)}  verdict`);
for (const r of roles) {
  const slope = slopeMbPerMin(lastThird.filter((s) => s[r] !== undefined).map((s) => ({ x: s.t, y: s[r] })));
  const kbPerReq = reqPerMin ? (slope * 1024) / reqPerMin : 0;
  const verdict = slope <= FLAT ? "flat after warm-up" : `growing ${slope.toFixed(1)} MB/min`;
  summary[r] = {
    start_mb: samples[0][r],
    warmup_end_mb: warm[r],
    end_mb: end[r],
    last_third_mb_per_min: +slope.toFixed(2),
    kb_per_request: +kbPerReq.toFixed(1),
    verdict,
  };
  log(
    `${ROLES[r].padEnd(22)}${pad(samples[0][r], 10)}${pad(warm[r], 12)}${pad(end[r], 10)}${pad(slope.toFixed(2), 19)}${pad(kbPerReq.toFixed(1), 8)}  ${verdict}`,
  );
}
if (heap.warmup && heap.end) {
  const grew = heap.end.live_mb - heap.warmup.live_mb;
  summary.worker_heap = { ...heap, verdict: grew <= FLAT_HEAP_MB ? "flat after warm-up" : `grew ${grew.toFixed(1)} MB` };
  log(
    `Worker's JS heap after a full GC: ${heap.warmup.live_mb} MB at warm-up end, ${heap.end.live_mb} MB at the end (in use before the GC: ${heap.warmup.used_mb}, ${heap.end.used_mb} MB): ${summary.worker_heap.verdict}`,
  );
} else
  log(`Worker's JS heap: not measured (${!probeHeap ? "not with --devtools" : inspector ? "its inspector did not answer" : "its inspector was not found"})`);
for (const [r, n] of Object.entries(restarts)) log(`${ROLES[r]} was replaced ${n} time(s) during the run (a reload: its memory started over)`);
const afterWarm = windows.filter((w) => w.t > warm.t && w.p99_ms !== null);
if (afterWarm.length > 1)
  log(
    `p99 after warm-up: first window ${afterWarm[0].p99_ms} ms, last ${afterWarm[afterWarm.length - 1].p99_ms} ms (latency is indicative only on a shared machine)`,
  );
for (const [status, body] of Object.entries(examples)) log(`First ${status} answer: ${body}`);
if (serverErrors.length) log(`Server errors logged (${serverErrors.length}):\n  ${serverErrors.join("\n  ")}`);
const result = {
  started_at: new Date(start).toISOString(),
  settings: { minutes: MINUTES, writes_per_s: WRITES, reads_per_s: READS, users: USERS, sample_s: SAMPLE_S, flat_mb_per_min: FLAT },
  total,
  statuses,
  examples,
  dropped,
  restarts,
  summary,
  windows,
  samples,
  server_errors: serverErrors,
};
mkdirSync(path.join(root, "bench/results"), { recursive: true });
writeFileSync(path.join(root, "bench/results/soak-latest.json"), JSON.stringify(result, null, 2) + "\n");
log("Wrote bench/results/soak-latest.json");
process.exit(0);
