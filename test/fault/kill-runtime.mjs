// Fault test (issue 28): kill the runtime hard while writes and stream sockets are live, several
// times, restart it on the same state, and check that every acknowledged write's event reaches
// every socket that should get it and resumes with its last cursor: exactly once, in order, with
// no gap reported. Run by `npm test` (D1) and `npm run test:pg` (Postgres) through scripts/test.mjs,
// or alone: `node test/fault/kill-runtime.mjs [--pg] [--kills 4]`. With --pg it uses DATABASE_URL
// and DB_PROXY when given (a migrated database and the local Neon stand-in), else starts its own.
// Ends with `kill-runtime: N passed, N failed, N skipped`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { ADMIN_TOKEN, ROOT, freePort, runtime } from "./runtime.mjs";
import { resumingSocket } from "./stream-clients.mjs";
import { expectations, verify } from "./verify.mjs";

const { values } = parseArgs({ options: { pg: { type: "boolean" }, kills: { type: "string" }, writers: { type: "string" } } });
const PG = values.pg || process.env.DB_BACKEND === "postgres";
const KILLS = Number(values.kills ?? 4);
const WRITERS = Number(values.writers ?? 6);
/** After the last restart no write pokes the relay: what was left must still arrive within this. */
const QUIET_MS = 15_000;
const label = `kill-runtime (${PG ? "Postgres" : "D1"})`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1)} s]`, ...a);
const t0 = performance.now();

if (process.platform === "win32") {
  // The kill needs a POSIX process group (one signal for npm start, wrangler and workerd).
  console.log(`${label} cases skipped: no process groups on Windows`);
  console.log("kill-runtime: 0 passed, 0 failed, 1 skipped");
  process.exit(0);
}

// 1. Backend: a fresh persist dir (D1, KV, R2, Durable Objects); on Postgres also a fresh database.
const persist = mkdtempSync(path.join(tmpdir(), "fault-kill-"));
let pg;
let stopPg = async () => {};
if (PG) {
  if (process.env.DATABASE_URL && process.env.DB_PROXY) pg = { url: process.env.DATABASE_URL, proxy: process.env.DB_PROXY };
  else {
    const { startCluster, startProxy, migrate } = await import(path.join(ROOT, "scripts/pg/cluster.mjs"));
    const cluster = await startCluster({ port: await freePort() });
    const proxy = await startProxy({ port: await freePort() });
    stopPg = async () => (await proxy.stop().catch(() => {}), await cluster.stop().catch(() => {}));
    await migrate({ db: "fault_kill", port: cluster.port });
    pg = { url: cluster.url("fault_kill"), proxy: `127.0.0.1:${proxy.port}` };
  }
}
// The runtime's own output (Worker errors included), kept for a failure's diagnosis.
const logFile = path.join(tmpdir(), `fault-kill-runtime-${PG ? "pg" : "d1"}.log`);
writeFileSync(logFile, "");
const rt = runtime({ port: await freePort(), persist, pg, logFile });
const sockets = [];
const cleanup = async () => {
  for (const s of sockets) s.close();
  await rt.kill();
  await stopPg();
  if (process.env.FAULT_KEEP_STATE !== "1") rmSync(persist, { recursive: true, force: true });
  else console.log(`state kept in ${persist}`);
};
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => cleanup().finally(() => process.exit(130)));
const hardStop = setTimeout(() => {
  console.error(`${label}: past its 4-minute deadline`);
  cleanup().finally(() => (console.log("kill-runtime: 0 passed, 1 failed, 0 skipped"), process.exit(1)));
}, 240_000);
hardStop.unref();

/** A JSON call; network errors (the runtime is being killed) resolve to status 0. */
async function api(method, p, { token, json, form } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  let body;
  if (json !== undefined) (headers["content-type"] = "application/json"), (body = JSON.stringify(json));
  if (form) body = new URLSearchParams(form);
  try {
    const res = await fetch(`${rt.origin}/v1${p}`, { method, headers, body, signal: AbortSignal.timeout(20_000) });
    // Acknowledged means a whole response: a status whose body the kill cut off is not one.
    return { status: res.status, body: await res.json() };
  } catch {
    return { status: 0, body: null };
  }
}
const must = async (call, what) => {
  const r = await call;
  if (r.status < 200 || r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
};

// 2. Setup: stream users U0..U5 (each follows the next two, opens a user stream subscribed to its
// own timeline and the shared public channel), follow-only users F0, F1 and targets T0..T9 (their
// follows touch no subscribed timeline), and app stream keys listening for every tracked type.
async function setup() {
  const scope = "basic follow messages public_messages stream write_post";
  const app = (await must(api("POST", "/admin/apps", { token: ADMIN_TOKEN, json: { name: "Fault" } }), "app")).data;
  const user = async (username) => {
    const u = (await must(api("POST", "/admin/users", { token: ADMIN_TOKEN, json: { username, password: "fault-password" } }), username)).data;
    const form = {
      grant_type: "password",
      client_id: app.client_id,
      password_grant_secret: app.password_grant_secret,
      username,
      password: "fault-password",
      scope,
    };
    return { id: u.id, token: (await must(api("POST", "/oauth/access_token", { form }), `${username} token`)).access_token };
  };
  const streamUsers = [];
  for (let i = 0; i < WRITERS; i++) streamUsers.push(await user(`fault_u${i}`));
  const followers = [await user("fault_f0"), await user("fault_f1")];
  const targets = [];
  for (let i = 0; i < 10; i++) targets.push(await user(`fault_t${i}`));
  const acl = { read: { public: true }, write: { any_user: true } };
  const channel = (await must(api("POST", "/channels", { token: streamUsers[0].token, json: { type: "com.example.chat", acl } }), "channel")).data;
  for (const [i, u] of streamUsers.entries()) {
    u.follows = [streamUsers[(i + 1) % WRITERS], streamUsers[(i + 2) % WRITERS]].map((o) => o.id);
    for (const id of u.follows) await must(api("PUT", `/users/${id}/follow`, { token: u.token }), "follow");
  }
  const apps = [];
  for (let a = 0; a < 3; a++) {
    const streamApp = (await must(api("POST", "/admin/apps", { token: ADMIN_TOKEN, json: { name: `Fault stream ${a}` } }), "app")).data;
    const form = { grant_type: "client_credentials", client_id: streamApp.client_id, client_secret: streamApp.client_secret };
    const token = (await must(api("POST", "/oauth/access_token", { form }), "app token")).access_token;
    await must(
      api("POST", "/streams", { token, json: { type: "long_poll", object_types: ["post", "message", "bookmark", "follow"], key: "fault" } }),
      "stream",
    );
    apps.push({ token });
  }
  return { streamUsers, followers, targets, channel, apps };
}

// 3. Writes: one loop per stream user, each sequential (so its acknowledged writes have an order
// its events must keep), drawing posts, channel messages, bookmarks and follows.
const writes = []; // { key, loop, acked, author? }
const claimed = new Set(); // bookmark and follow pairs taken (each is written once: its event is unique)
let up = false;
let writing = true;
async function writer(loop, w) {
  const me = w.streamUsers[loop];
  let n = 0;
  while (writing) {
    if (!up) {
      await sleep(100);
      continue;
    }
    const roll = Math.random();
    const posted = writes.filter((x) => x.acked && x.key.startsWith("post:"));
    let op;
    if (roll < 0.4 || !posted.length) {
      op = { call: () => api("POST", "/posts", { token: me.token, json: { text: `fault ${loop}.${n++}` } }), key: (b) => `post:${b?.data?.id}`, author: me.id };
    } else if (roll < 0.75) {
      op = {
        call: () => api("POST", `/channels/${w.channel.id}/messages`, { token: me.token, json: { text: `fault ${loop}.${n++}` } }),
        key: (b) => `message:${b?.data?.id}`,
      };
    } else if (roll < 0.9) {
      const post = posted[Math.floor(Math.random() * posted.length)].key.slice(5);
      const pair = `bookmark:${me.id}:${post}`;
      if (claimed.has(pair)) continue;
      claimed.add(pair);
      op = { call: () => api("PUT", `/posts/${post}/bookmark`, { token: me.token }), key: () => pair };
    } else {
      const f = w.followers[loop % 2];
      const t = w.targets.find((x) => !claimed.has(`follow:${f.id}:${x.id}`));
      if (!t) continue;
      claimed.add(`follow:${f.id}:${t.id}`);
      op = { call: () => api("PUT", `/users/${t.id}/follow`, { token: f.token }), key: () => `follow:${f.id}:${t.id}` };
    }
    const record = { loop, acked: false, author: op.author, key: null };
    // The key of a post or message is known from its response; until then it is unknown (not acked).
    const res = await op.call();
    record.acked = res.status >= 200 && res.status < 300;
    record.key = record.acked || !op.key.length ? op.key(res.body) : null;
    if (!record.acked && res.status !== 0) w.errors.push(`${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    writes.push(record);
  }
}

let failedSetup = null;
let settled; // seconds from the last resume until every socket had every acknowledged event
let result;
try {
  log(`${label}: starting the runtime on ${persist}`);
  await rt.start();
  log("runtime up (built, migrated)");
  up = true;
  const w = { ...(await setup()), errors: [] };
  log(`setup: ${w.streamUsers.length} stream users, ${w.apps.length} app stream keys, channel ${w.channel.id}`);
  // Sockets: two connections on the first key, one on each other; one user stream per stream user.
  for (const [a, app] of w.apps.entries())
    for (let c = 0; c < (a === 0 ? 2 : 1); c++)
      sockets.push(resumingSocket({ name: `app${a}.${c}`, origin: rt.origin, token: app.token, path: "/v1/app?key=fault", kind: "app" }));
  for (const [i, u] of w.streamUsers.entries()) {
    const s = resumingSocket({ name: `user${i}`, origin: rt.origin, token: u.token, path: "/v1/user", kind: "user" });
    s.user = u;
    sockets.push(s);
  }
  await Promise.all(sockets.map((s) => s.ensureOpen()));
  for (const s of sockets.filter((x) => x.user))
    for (const p of ["/posts/streams/me", `/channels/${w.channel.id}/messages`])
      await must(api("GET", `${p}?connection_id=${s.state.connectionId}`, { token: s.user.token }), `subscribe ${p}`);

  const loops = w.streamUsers.map((_, i) => writer(i, w));
  const startups = [];
  for (let k = 1; k <= KILLS; k++) {
    await sleep(2000 + Math.random() * 3000);
    up = false;
    await rt.kill();
    log(`kill ${k}: ${writes.filter((x) => x.acked).length} writes acknowledged so far`);
    if (k === KILLS) (writing = false), await Promise.all(loops);
    const t = performance.now();
    await rt.start();
    startups.push((performance.now() - t) / 1000);
    up = true;
    await Promise.all(sockets.map((s) => s.ensureOpen()));
  }
  // After the last restart nothing is written: only what the runtime does by itself delivers the rest.
  log(`restarted ${KILLS} times (startup ${startups.map((s) => s.toFixed(1)).join(", ")} s); waiting for the streams to settle`);
  const expected = expectations(writes, sockets, w);
  const settleStart = Date.now();
  const until = settleStart + QUIET_MS;
  while (Date.now() < until && !sockets.every((s) => expected.get(s).every((k) => s.state.events.some((e) => e.key === k)))) await sleep(200);
  settled = ((Date.now() - settleStart) / 1000).toFixed(1);
  await sleep(1500); // late duplicates, if any, arrive now
  result = verify(writes, sockets, expected);
  result.errors = w.errors;
  result.kills = KILLS;
} catch (e) {
  failedSetup = e;
} finally {
  await cleanup();
}

if (failedSetup) {
  console.error(`${label} failed to run: ${failedSetup.stack ?? failedSetup}\n${rt.tail.slice(-20).join("\n")}`);
  console.log("kill-runtime: 0 passed, 1 failed, 0 skipped");
  process.exit(1);
}
const secs = ((performance.now() - t0) / 1000).toFixed(1);
log(
  `${label}: ${result.kills} kills, ${result.acked} acknowledged writes (${result.unacked} cut off), ${result.checked} event deliveries checked on ${sockets.length} sockets, ${result.resumes} resumes; settled ${settled} s after the last restart's resumes; in ${secs} s`,
);
for (const p of result.problems.slice(0, 40)) console.log(`  FAIL ${p}`);
if (result.problems.length) console.log(`  (the runtime's output: ${logFile})`);
if (result.problems.length > 40) console.log(`  ... and ${result.problems.length - 40} more`);
if (result.errors.length) console.log(`  (${result.errors.length} writes refused, e.g. ${result.errors[0]})`);
const ok = result.problems.length === 0;
console.log(`kill-runtime: ${ok ? 1 : 0} passed, ${ok ? 0 : 1} failed, 0 skipped`);
process.exit(ok ? 0 : 1);
