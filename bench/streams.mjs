// Stream load in `npm run bench` (issue 28; bench/run.mjs calls it, `npm run bench -- streams` runs
// it alone): what the event pipeline — outbox, relay Durable Object, app and user stream hubs —
// costs per event and how far it fans out, measured from outside the Worker.
//
// 1. Hub CPU per event at 10 and 1,000 listening app stream keys. A Worker's clock does not move
//    while it computes, so the cost is read from the workerd process itself (/proc CPU time, all
//    its threads: the Worker, the Durable Objects, the local D1): M posts written one after
//    another with the keys listening (one socket each, all keys taking posts), until every socket
//    has every event, minus the same M posts with no key listening (measured before and after).
//    What remains is the relay-to-hub delivery, the hubs' storage and each socket's frame.
// 2. Fan-out on user streams: N followers (N = 1,000 and 10,000) each with one real WebSocket,
//    subscribed to their home stream; one post by the followed author; the time from the write's
//    response to the LAST follower socket receiving it, over several posts, and deliveries counted.
// 3. Relay throughput: closed-loop posting from 8 writers for a while, one app socket listening:
//    events/s arrived, and the lag from each write's response to its event on the socket.
import { createHash, randomBytes } from "node:crypto";
import { startProfile } from "./profile.mjs";
import { apiClient, cpuMs, hubPublishLine, insideShare, openSocket, openSockets, pct, pool, sleep, until, workerdPid, wsBase } from "./stream-client.mjs";

const q = (s) => `'${String(s).replace(/'/g, "''")}'`;
const MARK = /sbm-(\d+)-(\d+)/; // the marker in a post's text: run stamp, post number

/**
 * Runs the three measurements against a running Worker (`url`), seeding what they need into `db`
 * (D1 or bench/pg-d1.mjs's handle). `appId`: the app user tokens are seeded for; `scope`: their
 * scopes (must hold `stream` and `write_post`). Options: `events` (M, 300), `fanout` ([1000, 10000]),
 * `posts` per fan-out size (5), `relaySeconds` (15).
 */
export async function measureStreamLoad({
  url,
  db,
  adminToken,
  appId,
  scope,
  inspectorPort,
  build,
  log = () => {},
  events = 300,
  fanout = [1000, 10_000],
  posts = 5,
  relaySeconds = 15,
  parts = ["hub", "relay", "fanout"],
}) {
  const api = apiClient(url);
  const pid = workerdPid();
  const stamp = Date.now() % 1e9;
  const maxFollowers = Math.max(...fanout);
  log(`Streams: seeding ${maxFollowers} followers and ${fanout.length + 8} authors with tokens...`);
  const users = await seedUsers(db, { appId, scope, count: maxFollowers + fanout.length + 8, prefix: `sb${stamp}_` });
  const authors = users.slice(0, fanout.length);
  const writers = users.slice(fanout.length, fanout.length + 8);
  const followers = users.slice(fanout.length + 8);
  // Author i is followed by the first fanout[i] followers.
  const follows = fanout.flatMap((n, i) => followers.slice(0, n).map((f) => [f.id, authors[i].id]));
  await insertRows(
    db,
    "follows",
    ["follower_id", "followed_id", "created_at"],
    follows.map(([a, b]) => [a, b, Math.floor(Date.now() / 1000) - 3600]),
  );
  for (const [i, n] of fanout.entries()) await db.prepare(`UPDATE users SET followers = ${n} WHERE id = ${authors[i].id}`).run();

  let seq = 0;
  const post = async (token, tag) => {
    const text = `sbm-${stamp}-${seq++} ${tag}`;
    const res = await api("POST", "/posts", { token, json: { text } });
    if (res.status !== 201) throw new Error(`POST /posts answered ${res.status}: ${JSON.stringify(res.body?.meta)}`);
    return { text, at: performance.now(), n: seq - 1 };
  };

  const skipped = { skipped: "not asked for" };
  const hub_cpu = parts.includes("hub")
    ? await hubCpu({ api, url, adminToken, pid, inspectorPort, build, post, writer: writers[0].token, events, log })
    : skipped;
  const relay = parts.includes("relay") ? await relayThroughput({ api, url, adminToken, post, writers, seconds: relaySeconds, log }) : skipped;
  const fan = parts.includes("fanout") ? await userFanout({ api, url, post, authors, followers, fanout, posts, log }) : skipped;
  return { workerd_pid: pid, hub_cpu, relay, fanout: fan };
}

/** Users with one token each (stored as its SHA-256), straight into the database; ids read back. */
async function seedUsers(db, { appId, scope, count, prefix }) {
  const now = Math.floor(Date.now() / 1000);
  const day = new Date(now * 1000).toISOString().slice(0, 10);
  const list = Array.from({ length: count }, (_, i) => ({ username: `${prefix}${i}`, token: `sb-${i}-${randomBytes(12).toString("hex")}` }));
  await insertRows(
    db,
    "users",
    ["username", "password_hash", "name", "type", "created_at"],
    list.map((u) => [q(u.username), q("pbkdf2$1$00$00"), q(u.username), q("human"), now - 86400]),
  );
  const ids = new Map(
    (await db.prepare(`SELECT id, username FROM users WHERE username LIKE '${prefix}%'`).all()).results.map((r) => [r.username, Number(r.id)]),
  );
  for (const u of list) u.id = ids.get(u.username);
  await insertRows(
    db,
    "tokens",
    ["token_hash", "app_id", "user_id", "scopes", "created_at", "last_seen_day"],
    list.map((u) => [q(createHash("sha256").update(u.token).digest("hex")), appId, u.id, q(scope), now - 3600, q(day)]),
  );
  await insertRows(
    db,
    "authorizations",
    ["user_id", "app_id", "scopes", "created_at"],
    list.map((u) => [u.id, appId, q(scope), now - 3600]),
  );
  return list;
}

async function insertRows(db, table, columns, rows) {
  const PER_STATEMENT = 200,
    PER_BATCH = 20;
  let batch = [];
  for (let i = 0; i < rows.length; i += PER_STATEMENT) {
    batch.push(
      db.prepare(
        `INSERT INTO ${table} (${columns.join(",")}) VALUES ${rows
          .slice(i, i + PER_STATEMENT)
          .map((r) => `(${r.join(",")})`)
          .join(",")}`,
      ),
    );
    if (batch.length === PER_BATCH) await db.batch(batch), (batch = []);
  }
  if (batch.length) await db.batch(batch);
}

/** `count` app stream keys taking posts (5 per app, the most an app may have), each with `perKey` open sockets (at most 2). */
async function listeningKeys({ api, url, adminToken, count, tag, perKey = 1 }) {
  const apps = await pool(
    Array.from({ length: Math.ceil(count / 5) }, (_, i) => i),
    8,
    async (i) => {
      const app = (await api("POST", "/admin/apps", { token: adminToken, json: { name: `${tag}-${i}` } })).body.data;
      const form = { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret };
      const token = (await api("POST", "/oauth/access_token", { form })).body.access_token;
      const keys = Array.from({ length: Math.min(5, count - i * 5) }, (_, k) => `k${k}`);
      for (const key of keys) {
        const res = await api("POST", "/streams", { token, json: { type: "long_poll", object_types: ["post"], key } });
        if (res.status !== 200) throw new Error(`POST /streams answered ${res.status}`);
      }
      return { token, keys };
    },
  );
  const urls = apps.flatMap((a) => a.keys.map((k) => `${wsBase(url)}/v1/app?access_token=${a.token}&key=${k}`));
  const sockets = await openSockets(urls.flatMap((u) => Array(perKey).fill(u)));
  return {
    sockets,
    /** Closes the sockets and deletes the streams: their keys stop buffering now, not after the replay window. */
    async remove() {
      for (const s of sockets) s.close();
      await pool(apps, 8, (a) => api("DELETE", "/streams", { token: a.token }));
    },
  };
}

async function hubCpu({ api, url, adminToken, pid, inspectorPort, build, post, writer, events, log }) {
  const line = inspectorPort && build ? hubPublishLine(build) : null;
  // One phase: `events` posts one after another; done when every socket has them all, then a
  // settle so trailing work (the relay's last step, hub trims) is counted in every phase alike.
  // With the inspector: a CPU profile of the Worker's isolate too, and the share of its busy
  // samples inside the hubs' publish(), which needs no baseline (samples every 200 µs).
  const phase = async (sockets, n = events) => {
    const target = sockets.map((s) => s.events + n);
    const profile = line === null ? null : await startProfile(inspectorPort);
    const cpu0 = cpuMs(pid);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await post(writer, "hub cpu");
    await until(() => sockets.every((s, i) => s.events >= target[i]), 120_000, `${n} events on ${sockets.length} sockets`);
    await sleep(1000);
    const cpu_ms = cpuMs(pid) - cpu0;
    const share = profile ? insideShare(await profile.stopRaw(), line) : null;
    return { events: n, cpu_ms, wall_ms: Math.round(performance.now() - t0 - 1000), ...(share !== null ? { publish_share: +share.toFixed(3) } : {}) };
  };
  // Each keyed phase sits between two unkeyed ones (its keys are deleted after it): its baseline is
  // their mean, so a drift in the machine's load over the run cancels out; their difference is the noise.
  // At 1,000 keys a third of the posts: the signal is large there, and each post is 1,000 frames.
  const keyed = async (count, n, perKey = 1) => {
    const keys = await listeningKeys({ api, url, adminToken, count, perKey, tag: `sb-hub${count}x${perKey}` });
    log(`Streams: hub CPU, ${n} posts with ${count} keys listening (${perKey} socket${perKey > 1 ? "s" : ""} each)...`);
    const p = await phase(keys.sockets, n);
    await keys.remove();
    return p;
  };
  log(`Streams: hub CPU, ${events} posts with no key listening...`);
  const base0 = await phase([]);
  const at10 = await keyed(10, events);
  log(`Streams: hub CPU, ${events} posts with no key listening...`);
  const base1 = await phase([]);
  const at1000 = await keyed(1000, Math.ceil(events / 3));
  log(`Streams: hub CPU, ${events} posts with no key listening...`);
  const base2 = await phase([]);
  // The same 1,000 sockets on half as many keys (2 each): what the keys cost apart from the frames.
  const at500x2 = await keyed(500, Math.ceil(events / 3), 2);
  log(`Streams: hub CPU, ${events} posts with no key listening...`);
  const base3 = await phase([]);
  const us = (p) => (p.cpu_ms * 1000) / p.events;
  const perEvent = (p, a, b) => +(us(p) - (us(a) + us(b)) / 2).toFixed(0);
  const noise = (a, b) => +(Math.abs(us(a) - us(b)) / 2).toFixed(0);
  const us10 = perEvent(at10, base0, base1);
  const us1000 = perEvent(at1000, base1, base2);
  return {
    events,
    baseline_us_per_write: [base0, base1, base2, base3].map((p) => +us(p).toFixed(0)),
    keys_10: { ...at10, us_per_event: us10, noise_us: noise(base0, base1) },
    keys_1000: { ...at1000, us_per_event: us1000, noise_us: noise(base1, base2) },
    // No ratio when the 10-key cost is within its noise: it would divide by noise.
    ratio_1000_to_10: us10 > noise(base0, base1) ? +(us1000 / us10).toFixed(1) : null,
    us_per_key_delivery: +((us1000 - us10) / 990).toFixed(1),
    // Equal sockets (1,000), 500 vs 1,000 keys: the CPU that keys cost beyond their sockets' frames.
    keys_500x2: { ...at500x2, us_per_event: perEvent(at500x2, base2, base3), noise_us: noise(base2, base3) },
    us_per_key_at_equal_sockets: +((us1000 - perEvent(at500x2, base2, base3)) / 500).toFixed(1),
  };
}

async function relayThroughput({ api, url, adminToken, post, writers, seconds, log }) {
  const keys = await listeningKeys({ api, url, adminToken, count: 1, tag: "sb-relay" });
  const arrived = new Map(); // post number -> arrival time
  keys.sockets[0].ws.on("message", (data) => {
    const m = MARK.exec(data.toString());
    if (m) arrived.set(Number(m[2]), performance.now());
  });
  log(`Streams: relay throughput, ${writers.length} writers posting for ${seconds} s...`);
  const acked = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    writers.map(async (w) => {
      while (performance.now() < end) acked.push(await post(w.token, "relay"));
    }),
  );
  const lastAck = performance.now();
  await until(() => acked.every((a) => arrived.has(a.n)), 60_000, `${acked.length} relayed events`).catch(() => {});
  const got = acked.filter((a) => arrived.has(a.n));
  const lastArrival = Math.max(...got.map((a) => arrived.get(a.n)));
  const lags = got.map((a) => arrived.get(a.n) - a.at);
  await keys.remove();
  return {
    writers: writers.length,
    seconds,
    acked: acked.length,
    arrived: got.length,
    writes_per_s: Math.round(acked.length / ((lastAck - t0) / 1000)),
    events_per_s: Math.round(got.length / ((lastArrival - t0) / 1000)),
    drain_after_last_ack_ms: Math.round(lastArrival - lastAck),
    lag_p50_ms: pct(lags, 50),
    lag_p99_ms: pct(lags, 99),
  };
}

async function userFanout({ api, url, post, authors, followers, fanout, posts, log }) {
  // Who got which post: post number -> Set of socket numbers (a second delivery counts as a duplicate).
  const seen = new Map();
  let duplicates = 0;
  const onEvent = (text, at, socket) => {
    const m = MARK.exec(text);
    if (!m) return;
    const n = Number(m[2]);
    const got = seen.get(n) ?? seen.set(n, { sockets: new Set(), last: 0, times: [] }).get(n);
    if (got.sockets.has(socket.no)) duplicates++;
    got.sockets.add(socket.no);
    got.last = Math.max(got.last, at);
    got.times.push(at);
  };
  log(`Streams: opening ${followers.length} user stream sockets and subscribing each to its home stream...`);
  const t0 = performance.now();
  const sockets = await pool(followers, 50, async (f, no) =>
    Object.assign(await openSocket(`${wsBase(url)}/v1/user?access_token=${f.token}`, onEvent), { no }),
  );
  const opened = performance.now();
  await pool(sockets, 50, async (s, no) => {
    const res = await api("GET", `/posts/streams/me?count=1&connection_id=${s.first.meta.connection_id}`, { token: followers[no].token });
    if (res.status !== 200 || !res.body.meta.subscription_id) throw new Error(`subscribing answered ${res.status}`);
  });
  const setup = { open_s: +((opened - t0) / 1000).toFixed(1), subscribe_s: +((performance.now() - opened) / 1000).toFixed(1) };
  log(`  opened in ${setup.open_s} s, subscribed in ${setup.subscribe_s} s (50 at a time)`);
  const out = [];
  for (const [i, n] of fanout.entries()) {
    log(`Streams: ${posts} posts by an author with ${n} connected followers...`);
    const last = [];
    const all = [];
    let delivered = 0;
    for (let p = 0; p < posts; p++) {
      const w = await post(authors[i].token, "fan-out");
      await until(() => (seen.get(w.n)?.sockets.size ?? 0) >= n, 60_000, `post to ${n} followers`).catch(() => {});
      await sleep(200); // late or stray deliveries are counted too
      const got = seen.get(w.n) ?? { sockets: new Set(), last: w.at, times: [] };
      delivered += got.sockets.size;
      last.push(got.last - w.at);
      all.push(...got.times.map((t) => t - w.at));
    }
    out.push({
      followers: n,
      posts,
      deliveries: delivered,
      expected: n * posts,
      last_p50_ms: pct(last, 50),
      last_p99_ms: pct(last, 99),
      each_p50_ms: pct(all, 50),
      each_p99_ms: pct(all, 99),
    });
  }
  for (const s of sockets) s.close();
  return { sockets: sockets.length, kind: "user streams (one WebSocket per follower)", setup, duplicates, sizes: out };
}

/** The lines the bench prints. */
export function printStreamLoad(r, log) {
  if (r.skipped) return log(`\nstream load: skipped: ${r.skipped}`);
  const h = r.hub_cpu;
  log(`\nstream load (workerd pid ${r.workerd_pid}, CPU from /proc):`);
  if (h.skipped) log("  hub CPU: skipped");
  else
    log(
      `  hub CPU per event: ${h.keys_10.us_per_event} ± ${h.keys_10.noise_us} µs at 10 keys, ${h.keys_1000.us_per_event} ± ${h.keys_1000.noise_us} µs at 1,000 keys (${h.ratio_1000_to_10 === null ? "10 keys within noise" : `×${h.ratio_1000_to_10}`}; ${h.us_per_key_delivery} µs per extra key); baseline write ${h.baseline_us_per_write.join("/")} µs; ${h.keys_10.events} and ${h.keys_1000.events} posts`,
    );
  if (h.keys_500x2)
    log(
      `  same 1,000 sockets on 500 keys (2 each): ${h.keys_500x2.us_per_event} ± ${h.keys_500x2.noise_us} µs per event; keys beyond their frames: ${h.us_per_key_at_equal_sockets} µs per key (0 = flat in keys; the rest is one frame per socket)`,
    );
  if (h.keys_10?.publish_share !== undefined)
    log(
      `  share of the isolate's busy samples inside the hubs' publish(): ${(h.keys_10.publish_share * 100).toFixed(1)} % at 10 keys, ${(h.keys_1000.publish_share * 100).toFixed(1)} % at 1,000 keys`,
    );
  for (const f of r.fanout.sizes ?? [])
    log(
      `  fan-out to ${f.followers} user stream sockets: last socket p50 ${f.last_p50_ms} ms, p99 ${f.last_p99_ms} ms; each delivery p50 ${f.each_p50_ms} ms, p99 ${f.each_p99_ms} ms; ${f.deliveries}/${f.expected} delivered`,
    );
  if (!r.fanout.skipped)
    log(
      `  (${r.fanout.sockets} sockets opened in ${r.fanout.setup.open_s} s, subscribed in ${r.fanout.setup.subscribe_s} s; ${r.fanout.duplicates} duplicates)`,
    );
  const x = r.relay;
  if (!x.skipped)
    log(
      `  relay: ${x.events_per_s} events/s sustained (${x.acked} acked writes by ${x.writers} writers in ${x.seconds} s, ${x.arrived} arrived, drained ${x.drain_after_last_ack_ms} ms after the last ack); lag p50 ${x.lag_p50_ms} ms, p99 ${x.lag_p99_ms} ms`,
    );
}
