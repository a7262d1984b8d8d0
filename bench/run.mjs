// `npm run bench`: builds the Worker, runs it under workerd through Miniflare, seeds a realistic
// data set, and drives it from a separate process (bench/load.mjs, autocannon) at fixed
// concurrency. Every figure is measured in this one run; ratios compare endpoints against the
// two floors measured in the same run, on the same backend. Writes bench/results/latest.json.
// `BENCH_DB=pg npm run bench`: the same on Postgres (a throwaway cluster and the local stand-in
// for Neon's proxies, bench/pg-d1.mjs); writes bench/results/latest-pg.json.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } from "wrangler";
import WebSocket from "ws";
import { measureReplay } from "./replay.mjs";
import { measureStreamLoad, printStreamLoad } from "./streams.mjs";
import { SIZES, deriveStoredState, seedData } from "./seed.mjs";
import { MIX_SIZES, seedMix } from "./mix-seed.mjs";
import { READS, WRITES } from "./mix.mjs";
import { measureMix, meterTypes, printMix, setMixRatios } from "./mix-run.mjs";

// `npm run bench -- soak [--minutes N ...]`: the bounded soak of `npm start` instead (bench/soak.mjs).
if (process.argv[2] === "soak") {
  await import("./soak.mjs");
  process.exit(0);
}
// `npm run bench -- streams`: only the stream load (bench/streams.mjs), on an unseeded database.
const STREAMS_ALONE = process.argv[2] === "streams";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 1000);
const PG = process.env.BENCH_DB === "pg";
// BENCH_PROFILE=1: a CPU profile of the Worker while the mix runs (bench/profile.mjs).
const PROFILE = process.env.BENCH_PROFILE === "1";
// BENCH_ONLY="post lookup,token": measure only the endpoints whose names contain one of these (the
// floors always run; streams, replay and the limiter only when named). For working on one row.
const ONLY = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(",").map((s) => s.trim()) : null;
const wanted = (name) => !ONLY || ONLY.some((o) => name.includes(o));
// The mix (bench/mix.mjs): seeded and measured when it or one of its types is named.
const mixOn = ["mix", "writes", ...Object.keys(READS), ...Object.keys(WRITES)].some(wanted);
// The inspector is on for the profile and for the stream load (its hub CPU is also read from a profile).
const INSPECTOR = PROFILE ? 9329 : STREAMS_ALONE || wanted("streams") ? await (await import("../scripts/pg/cluster.mjs")).freePort() : undefined;
if (!PG && process.env.BENCH_DB && process.env.BENCH_DB !== "d1") throw new Error(`BENCH_DB must be "d1" or "pg", not "${process.env.BENCH_DB}"`);
const ADMIN_TOKEN = "bench-admin-token";
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const log = (...a) => console.log(...a);
const started = Date.now();

// 1. Build the Worker exactly as it would be deployed.
const outdir = path.join(root, "bench/.build");
rmSync(outdir, { recursive: true, force: true });
log("Building the Worker (wrangler deploy --dry-run)...");
execFileSync(process.execPath, [path.join(root, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", outdir], {
  cwd: root,
  env,
  stdio: "ignore",
});

// 2. The database (Postgres: cluster, proxy, migrations), then the Worker under workerd through
// Miniflare with the bindings of wrangler.toml (and those pointing it at Postgres).
const pgBackend = PG ? await (await import("./pg-d1.mjs")).startPostgres() : undefined;
const backend = pgBackend ? { id: "postgres", name: "Postgres", label: pgBackend.label } : { id: "d1", name: "D1", label: "D1 (Miniflare's local SQLite)" };
log(`Backend: ${backend.label}`);
// Pinned: a developer's .dev.vars (read by unstable_getMiniflareWorkerOptions) may point DB_BACKEND elsewhere.
const dbBindings = pgBackend ? pgBackend.bindings : { DB_BACKEND: "d1", DB_PROXY: "" };
const persist = mkdtempSync(path.join(tmpdir(), "bench-"));
const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(root, "wrangler.toml"));
function miniflareOptions(vars) {
  return {
    ...workerOptions,
    modules: true,
    scriptPath: path.join(outdir, "index.js"),
    bindings: { ...workerOptions.bindings, ADMIN_TOKEN, BENCH_FLOORS: "1", ...dbBindings, ...vars },
    host: "127.0.0.1",
    port: 0,
    d1Persist: path.join(persist, "d1"),
    kvPersist: path.join(persist, "kv"),
    r2Persist: path.join(persist, "r2"),
    durableObjectsPersist: path.join(persist, "do"),
    cf: false,
    ...(INSPECTOR ? { inspectorPort: INSPECTOR } : {}),
  };
}
const mf = new Miniflare(miniflareOptions({ RATE_LIMITS: "0" }));
let url = (await mf.ready).href.replace(/\/$/, "");
const db = pgBackend ? pgBackend.db : await mf.getD1Database("DB");

// 3. Migrations, as wrangler applies them (Postgres: already applied by pg-d1.mjs).
for (const file of PG
  ? []
  : readdirSync(path.join(root, "schema/migrations"))
      .filter((f) => f.endsWith(".sql"))
      .sort()) {
  const queries = unstable_splitSqlQuery(readFileSync(path.join(root, "schema/migrations", file), "utf8"));
  await db.batch(queries.map((sql) => db.prepare(sql)));
}

async function api(method, p, { token, json, form } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  let body;
  if (json !== undefined) (headers["content-type"] = "application/json"), (body = JSON.stringify(json));
  if (form) body = new URLSearchParams(form);
  const res = await fetch(url + "/v1" + p, { method, headers, body });
  return { status: res.status, body: await res.json().catch(() => null) };
}

// 4. Actors through the API (they can log in), then the bulk data set straight into the database.
const now = Math.floor(Date.now() / 1000);
const app = (await api("POST", "/admin/apps", { token: ADMIN_TOKEN, json: { name: "Bench" } })).body.data;
const actors = [];
for (let i = 0; i < 4; i++) {
  const username = `actor_${i}`;
  const user = (await api("POST", "/admin/users", { token: ADMIN_TOKEN, json: { username, password: "bench-password" } })).body.data;
  actors.push(user);
}
const appRow = await db.prepare(`SELECT id FROM apps WHERE client_id = '${app.client_id}'`).first();
const scope = "basic email files follow messages public_messages polls presence stream write_post";
// BENCH_STREAM_EVENTS (300 posts per hub CPU phase) and BENCH_STREAM_FANOUT ("1000,10000" followers): smaller for a quick look.
const streamSizes = {
  events: Number(process.env.BENCH_STREAM_EVENTS ?? 300),
  fanout: (process.env.BENCH_STREAM_FANOUT ?? "1000,10000").split(",").map(Number),
  ...(process.env.BENCH_STREAM_PARTS ? { parts: process.env.BENCH_STREAM_PARTS.split(",") } : {}),
};
const streamLoad = () =>
  measureStreamLoad({
    url,
    db,
    adminToken: ADMIN_TOKEN,
    appId: appRow.id,
    scope,
    log,
    inspectorPort: INSPECTOR,
    build: path.join(outdir, "index.js"),
    ...streamSizes,
  }).catch((e) => ({ skipped: `${e.stack ?? e}${e.cause ? ` (cause: ${e.cause.stack ?? e.cause})` : ""}` }));
if (STREAMS_ALONE) {
  const out = { started_at: new Date(started).toISOString(), backend: backend.id, stream_load: await streamLoad() };
  await mf.dispose();
  await pgBackend?.stop();
  rmSync(persist, { recursive: true, force: true });
  out.total_seconds = Math.round((Date.now() - started) / 1000);
  log(`\nBackend: ${backend.label}`);
  printStreamLoad(out.stream_load, log);
  const file = `bench/results/streams-latest${PG ? "-pg" : ""}.json`;
  mkdirSync(path.join(root, "bench/results"), { recursive: true });
  writeFileSync(path.join(root, file), JSON.stringify(out, null, 2) + "\n");
  log(`\nTotal ${out.total_seconds} s; wrote ${file}`);
  process.exit(0);
}
log(`Seeding ${SIZES.users} users, ${SIZES.posts} posts, ${SIZES.messages} messages, ${SIZES.interactions} interactions, ${SIZES.presence} presences...`);
let t0 = performance.now();
const seeded = await seedData(db, { appId: appRow.id, actorIds: actors.map((a) => Number(a.id)), now });
const seeding = { base_seconds: +((performance.now() - t0) / 1000).toFixed(1) };
let mixData;
if (mixOn) {
  log(
    `Seeding the mix: ${Object.entries(MIX_SIZES)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ")}...`,
  );
  const { sizes, seconds, ...data } = await seedMix(db, { appId: appRow.id, now, scope });
  mixData = data;
  seeding.mix_seconds = seconds;
  seeding.mix = sizes;
  log(`  ${JSON.stringify(sizes)} in ${seconds} s`);
}
t0 = performance.now();
await deriveStoredState(db);
seeding.derived_state_seconds = +((performance.now() - t0) / 1000).toFixed(1);
t0 = performance.now();
await pgBackend?.afterSeed();
seeding.after_seed_seconds = +((performance.now() - t0) / 1000).toFixed(1);

// Tokens: one per actor for most endpoints; 200 for the limiter run, so no single token's
// 5000-per-hour bucket is what is measured.
async function passwordToken(username) {
  const r = await api("POST", "/oauth/access_token", {
    form: { grant_type: "password", client_id: app.client_id, password_grant_secret: app.password_grant_secret, username, password: "bench-password", scope },
  });
  return r.body.access_token;
}
const tokens = [];
for (const a of actors) tokens.push(await passwordToken(a.username));
const manyTokens = [];
for (let i = 0; i < 200; i++) manyTokens.push(await passwordToken(actors[i % actors.length].username));

// 5. Load: one child process per measurement.
function load(job) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "bench/load.mjs"), JSON.stringify({ url, duration: DURATION, connections: CONNECTIONS, ...job })], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop())) : reject(new Error(`load exited ${code}`))));
  });
}

const [p0, p1] = seeded.postIds;
const [m0, m1] = seeded.messageIds;
const span = (a, b, n) => Array.from({ length: n }, (_, i) => a + Math.floor(((b - a) * i) / n));
const channelList = seeded.channelIds.slice(0, 20).join(",");
const searchWords = ["latency", "river music", "compiler release", "sunny morning", "chess"];
const endpoints = [
  { name: "post lookup", paths: span(p0, p1, 500).map((id) => `/v1/posts/${id}`) },
  { name: "posts by ids (200)", paths: span(p0, p1, 20).map((id) => `/v1/posts?ids=${span(id, id + 5000, 200).join(",")}`) },
  { name: "global stream page", paths: span(p0 + 1000, p1, 50).map((id) => `/v1/posts/streams/global?before_id=${id}`) },
  {
    name: "message search (relevance)",
    paths: searchWords.map((w) => `/v1/channels/messages/search?q=${encodeURIComponent(w)}&channel_ids=${channelList}&order=relevance`),
  },
  { name: "interactions page", paths: ["/v1/users/me/interactions"], token: true },
  { name: "presence list", paths: ["/v1/presence"], token: true },
  { name: "sys/config", paths: ["/v1/sys/config"] },
  { name: "token", paths: ["/v1/token"], token: true },
];
const floors = [
  { name: "floor: constant envelope", paths: ["/v1/sys/bench/constant"] },
  { name: `floor: one indexed ${backend.name} read`, paths: span(seeded.userIds[0], seeded.userIds[1], 500).map((id) => `/v1/sys/bench/read/${id}`) },
];

// Requests come from a client address, as at the edge (the limiter counts only client requests).
const CLIENT = { "cf-connecting-ip": "203.0.113.7" };

async function measure(e, tokenList) {
  // Check the endpoint answers 200 before loading it, so a missing feature is reported, not timed.
  const probe = await fetch(url + e.paths[0] + (e.bust ? `${e.paths[0].includes("?") ? "&" : "?"}_b=0` : ""), {
    headers: { ...CLIENT, ...(e.token ? { authorization: `Bearer ${tokenList[0]}` } : {}) },
  });
  await probe.arrayBuffer();
  if (probe.status !== 200) return { name: e.name, skipped: `probe answered ${probe.status}` };
  const r = await load({ paths: e.paths, tokens: e.token ? tokenList : [], headers: CLIENT, bust: e.bust });
  // No request finished in the window: say so rather than print zeros that read as figures.
  if (!r.requests_per_s) return { name: e.name, skipped: `no request completed in ${DURATION} s` };
  return { name: e.name, ...r, rate_limited: probe.headers.has("x-ratelimit-limit") };
}

// The presence list answers ~1.9 MB: a third floor serves one read and a body of the same size
// already encoded, the most any endpoint answering that many bytes could do on this machine.
const presenceBytes = (await (await fetch(url + "/v1/presence", { headers: { ...CLIENT, authorization: `Bearer ${tokens[0]}` } })).arrayBuffer()).byteLength;
floors.push({
  name: `floor: one read + ${(presenceBytes / 1e6).toFixed(1)} MB body`,
  paths: [`/v1/sys/bench/bytes/${presenceBytes - 29}`],
  bytesOf: "presence list",
});

// A page of posts answers ~26 kB: a fourth floor runs the read a page of 20 posts is rendered from
// and answers a home page's bytes already encoded, what a list costs before its own work.
const homeBytes = (await (await fetch(url + "/v1/posts/streams/me", { headers: { ...CLIENT, authorization: `Bearer ${tokens[0]}` } })).arrayBuffer())
  .byteLength;
floors.push({ name: `floor: 20 posts' render read + ${(homeBytes / 1e3).toFixed(0)} kB body`, paths: [`/v1/sys/bench/posts/${homeBytes - 29}`] });

const results = {
  started_at: new Date(started).toISOString(),
  backend: backend.id,
  machine: { cores: (await import("node:os")).cpus().length },
  settings: { duration_s: DURATION, connections: CONNECTIONS },
  data_set: SIZES,
  seeding,
  floors: [],
  endpoints: [],
};
log(`\nLoad on ${backend.name}: ${CONNECTIONS} connections, ${DURATION} s per endpoint`);
for (const f of floors) results.floors.push(await measure(f, tokens));
for (const e of endpoints.filter((e) => wanted(e.name))) results.endpoints.push(await measure(e, tokens));
// The same with the cache defeated: a distinct harmless `_b` parameter per request (kept responses are keyed by URL).
for (const e of endpoints.filter((e) => wanted(e.name) && !["sys/config", "token"].includes(e.name)))
  results.endpoints.push(await measure({ ...e, name: `${e.name} (cache defeated)`, bust: true }, tokens));
const [constant, oneRead] = results.floors;
for (const r of results.endpoints) {
  if (r.skipped) continue;
  r.ratio_to_constant = +(r.requests_per_s / constant.requests_per_s).toFixed(3);
  r.ratio_to_one_read = +(r.requests_per_s / oneRead.requests_per_s).toFixed(3);
  const sameBytes = results.floors.find((f, i) => floors[i].bytesOf === r.name && !f.skipped);
  if (sameBytes) r.ratio_to_same_bytes = +(r.requests_per_s / sameBytes.requests_per_s).toFixed(3);
}
for (const [i, f] of results.floors.entries()) if (i > 1 && !f.skipped) f.ratio_to_one_read = +(f.requests_per_s / oneRead.requests_per_s).toFixed(3);

// 5b. The mix: every hot read type and ~15 % writes as 1,000 users, Zipf-skewed (bench/mix.mjs).
if (mixOn) {
  const profile = PROFILE ? await (await import("./profile.mjs")).startProfile(INSPECTOR) : null;
  results.mix = await measureMix({
    root,
    url,
    data: mixData,
    headers: CLIENT,
    connections: CONNECTIONS,
    seconds: DURATION,
    wanted,
    log,
    tmp: persist,
  });
  if (profile) {
    const summary = await profile.stop(path.join(root, "bench/results/mix.cpuprofile"));
    log(`\nCPU profile of the Worker during the mix (bench/results/mix.cpuprofile): busy ${summary.busy_share} of ${summary.samples} samples`);
    for (const r of summary.top) log(`  ${(r.self_share * 100).toFixed(1).padStart(5)} %  ${r.fn}`);
  }
  // The floor again, after the mix: the higher of the two divides its ratios.
  setMixRatios(results.mix, [oneRead.requests_per_s, (await measure(floors[1], tokens)).requests_per_s]);
}

// 6a. Stream load (bench/streams.mjs): hub CPU per event by listening keys, user-stream fan-out to
// 1,000 and 10,000 followers, relay throughput. First: its keys are deleted when done, while the
// rows below leave theirs buffering for the replay window, which would load its baseline.
results.stream_load = !wanted("streams") ? { skipped: "not in BENCH_ONLY" } : await streamLoad();

// 6. Streams: time from one write to its event on every connected app stream socket.
results.streams = !wanted("streams") ? { skipped: "not in BENCH_ONLY" } : await measureStreams().catch((e) => ({ skipped: String(e.message ?? e) }));

async function measureStreams() {
  const probe = await api("GET", "/streams", { token: "x" });
  if (probe.status === 404) throw new Error("no /streams endpoint on this server");
  const perApp = 10; // 5 stream keys x 2 connections each
  const apps = Math.ceil(SOCKETS / perApp);
  const sockets = [];
  const pending = [];
  for (let a = 0; a < apps; a++) {
    const sa = (await api("POST", "/admin/apps", { token: ADMIN_TOKEN, json: { name: `stream-app-${a}` } })).body.data;
    const tok = (
      await api("POST", "/oauth/access_token", { form: { grant_type: "client_credentials", client_id: sa.client_id, client_secret: sa.client_secret } })
    ).body.access_token;
    for (let k = 0; k < 5 && sockets.length < SOCKETS; k++) {
      const created = await api("POST", "/streams", { token: tok, json: { type: "long_poll", object_types: ["post"], key: `bench_${k}` } });
      if (created.status !== 200 && created.status !== 201) throw new Error(`POST /streams answered ${created.status}`);
      for (let c = 0; c < 2 && pending.length < SOCKETS; c++) pending.push(`${url.replace(/^http/, "ws")}/v1/app?access_token=${tok}&key=bench_${k}`);
    }
  }
  // Open the sockets 50 at a time; each pings every 20 s, as clients must (idle ones close after 60 s).
  for (let i = 0; i < pending.length; i += 50) sockets.push(...(await Promise.all(pending.slice(i, i + 50).map(openSocket))));
  const writes = 5;
  const latencies = [];
  for (let w = 0; w < writes; w++) {
    const marker = `bench-stream-${w}-${Date.now()}`;
    const arrivals = sockets.map((s) => s.waitFor(marker));
    const t0 = performance.now();
    const res = await api("POST", "/posts", { token: tokens[0], json: { text: marker } });
    if (res.status !== 201) throw new Error(`POST /posts answered ${res.status}`);
    const times = await Promise.all(arrivals.map((p) => p.then((t) => t - t0)));
    latencies.push(...times);
  }
  for (const s of sockets) clearInterval(s.pinger), s.ws.close();
  latencies.sort((a, b) => a - b);
  const pct = (p) => +latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(1);
  return { sockets: sockets.length, writes, p50_ms: pct(50), p99_ms: pct(99), max_ms: +latencies[latencies.length - 1].toFixed(1) };
}

function openSocket(wsUrl) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl);
    const waiters = [];
    ws.on("message", (data) => {
      const text = data.toString();
      const t = performance.now();
      for (const w of waiters) if (!w.done && text.includes(w.marker)) (w.done = true), w.resolve(t);
    });
    ws.once("open", () =>
      resolve({
        ws,
        pinger: setInterval(() => ws.send("ping"), 20_000),
        waitFor: (marker) =>
          new Promise((res, rej) => {
            waiters.push({ marker, resolve: res });
            setTimeout(() => rej(new Error("event did not arrive in 30 s")), 30_000).unref();
          }),
      }),
    );
    ws.once("error", reject);
  });
}

// 6b. Resumable streams: replay of 1,000 missed events on reconnect, and fan-out while a replay runs.
results.replay = !wanted("replay")
  ? { skipped: "not in BENCH_ONLY" }
  : await measureReplay({ url, adminToken: ADMIN_TOKEN, postToken: tokens[1], sockets: SOCKETS, log }).catch((e) => ({ skipped: String(e.message ?? e) }));

// 6c. What each mix type reads per request, one at a time, with the meter on (and nothing else).
if (mixOn) {
  await mf.setOptions(miniflareOptions({ RATE_LIMITS: "0", BENCH_ROWS_READ: "1" }));
  url = (await mf.ready).href.replace(/\/$/, "");
  results.mix.metered = await meterTypes({ url, data: mixData, headers: CLIENT, pg: pgBackend, wanted });
}

// 7. The rate limiter's cost: the same endpoint with limits on, against limits off above.
try {
  if (!wanted("rate limits")) throw new Error("not in BENCH_ONLY");
  await mf.setOptions(miniflareOptions({ RATE_LIMITS: "1" }));
  url = (await mf.ready).href.replace(/\/$/, "");
  const off = results.endpoints.find((e) => e.name === "token");
  // Warm, as the limits-off run was: each token's limiter object exists and has leased a block.
  for (let i = 0; i < manyTokens.length; i += 20) {
    await Promise.all(
      manyTokens.slice(i, i + 20).map((t) => fetch(`${url}/v1/token`, { headers: { ...CLIENT, authorization: `Bearer ${t}` } }).then((r) => r.arrayBuffer())),
    );
  }
  const on = await measure({ name: "token (rate limits on)", paths: ["/v1/token"], token: true }, manyTokens);
  if (!on.skipped && off && !off.skipped) {
    on.ratio_to_limits_off = +(on.requests_per_s / off.requests_per_s).toFixed(3);
    on.p50_added_ms = +(on.p50_ms - off.p50_ms).toFixed(2);
  }
  results.rate_limiter = on;
} catch (e) {
  results.rate_limiter = { name: "token (rate limits on)", skipped: String(e.message ?? e) };
}

await mf.dispose();
await pgBackend?.stop();
rmSync(persist, { recursive: true, force: true });
results.total_seconds = Math.round((Date.now() - started) / 1000);

// 8. Report.
const rows = [...results.floors, ...results.endpoints, results.rate_limiter].filter(Boolean);
const pad = (s, n) => String(s ?? "").padEnd(n);
const num = (s, n) => String(s ?? "").padStart(n);
const W = Math.max(30, ...rows.map((r) => r.name.length + 2)); // 30 on D1; "one indexed Postgres read" is longer
log(`\nBackend: ${backend.label}`);
log(`${pad("endpoint", W)}${num("req/s", 8)}${num("p50 ms", 8)}${num("p99 ms", 8)}${num("÷const", 8)}${num("÷1read", 8)}  notes`);
for (const r of rows) {
  if (r.skipped) log(`${pad(r.name, W)}${num("-", 8)}${num("-", 8)}${num("-", 8)}${num("", 8)}${num("", 8)}  skipped: ${r.skipped}`);
  else
    log(
      `${pad(r.name, W)}${num(r.requests_per_s, 8)}${num(r.p50_ms, 8)}${num(r.p99_ms, 8)}${num(r.ratio_to_constant ?? "", 8)}${num(r.ratio_to_one_read ?? "", 8)}  ${r.non2xx ? `${r.non2xx} non-2xx ` : ""}${r.ratio_to_limits_off ? `÷limits-off ${r.ratio_to_limits_off}` : ""}${r.ratio_to_same_bytes ? `÷same-bytes floor ${r.ratio_to_same_bytes}` : ""}`,
    );
}
printMix(results.mix, log);
log(
  `\nseeding: base set ${seeding.base_seconds} s${seeding.mix_seconds !== undefined ? `, mix set ${seeding.mix_seconds} s` : ""}, derived timelines and flags ${seeding.derived_state_seconds} s${PG ? `, then VACUUM ANALYZE ${seeding.after_seed_seconds} s` : ""}`,
);
if (results.streams.skipped) log(`\nstreams: skipped: ${results.streams.skipped}`);
else
  log(
    `\nstreams: one write to ${results.streams.sockets} app stream sockets: p50 ${results.streams.p50_ms} ms, p99 ${results.streams.p99_ms} ms (${results.streams.writes} writes)`,
  );
if (results.replay.skipped) log(`replay: skipped: ${results.replay.skipped}`);
else
  log(
    `replay: ${results.replay.replay.events} missed events replayed on reconnect in ${results.replay.replay.ms} ms; one write to ${results.replay.fanout.sockets} sockets with a ${results.replay.fanout.replaying}-event replay running: p50 ${results.replay.fanout.p50_ms} ms, p99 ${results.replay.fanout.p99_ms} ms`,
  );
printStreamLoad(results.stream_load, log);
log(`\nTotal ${results.total_seconds} s`);
mkdirSync(path.join(root, "bench/results"), { recursive: true });
const resultFile = `bench/results/latest${PG ? "-pg" : ""}.json`;
writeFileSync(path.join(root, resultFile), JSON.stringify(results, null, 2) + "\n");
log(`Wrote ${resultFile}`);
