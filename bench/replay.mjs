// Resumable streams in `npm run bench` (called by bench/run.mjs): how long a reconnecting app
// stream takes to receive 1,000 events it missed, and the fan-out of one write to 1,000 app
// stream sockets while every key buffers for replay and a 1,000-event replay runs at the same time.
import WebSocket from "ws";

const PER_APP = 10; // 5 stream keys x 2 connections

/**
 * Runs both measurements against a running Worker.
 * - `url`: the Worker's origin (`http://127.0.0.1:PORT`), `adminToken`: its ADMIN_TOKEN (apps
 *   for the sockets are made through the admin API), `postToken`: a user token with `write_post`.
 * - `events` (1,000): events missed before the reconnect; `sockets` (1,000) and `writes` (5): the fan-out.
 * Returns `{ replay: {events, ms, events_per_s}, fanout: {sockets, writes, replaying, p50_ms, p99_ms, max_ms} }`.
 */
export async function measureReplay({ url, adminToken, postToken, events = 1000, sockets = 1000, writes = 5, log = () => {} }) {
  const api = apiClient(url);
  const poster = postWriter(api, postToken);

  // 1. One key, two connections: `watch` stays to know when every event is published; `away`
  // leaves, 1,000 posts are written, and it comes back with `since`.
  const replayApp = await newApp(api, adminToken, "bench-replay");
  await createStream(api, replayApp.token, "bench_replay");
  const keyUrl = `${wsBase(url)}/v1/app?access_token=${replayApp.token}&key=bench_replay`;
  const watch = await openSocket(keyUrl);
  const away = await openSocket(keyUrl);
  const since = away.first.meta.cursor;
  away.close();
  log(`Replay: writing ${events} events while a stream is away...`);
  const published = watch.waitForCount(events);
  await poster.writeMany(events, "bench-replay");
  await published;

  const t0 = performance.now();
  const back = await openSocket(`${keyUrl}&since=${since}`);
  if (back.first.meta.replay_gap) throw new Error(`the replay reported a gap: ${back.first.meta.replay_gap}`);
  await back.waitForCount(events);
  const replayMs = performance.now() - t0;
  back.close();
  const replay = { events, ms: +replayMs.toFixed(1), events_per_s: Math.round(events / (replayMs / 1000)) };

  // 2. Fan-out: `sockets` sockets on other keys; during each write, `back` replays the 1,000 events again.
  log(`Replay: opening ${sockets} app stream sockets...`);
  const urls = [];
  for (let a = 0; urls.length < sockets; a++) {
    const app = await newApp(api, adminToken, `bench-fanout-${a}`);
    for (let k = 0; k < PER_APP / 2 && urls.length < sockets; k++) {
      await createStream(api, app.token, `fan_${k}`);
      for (let c = 0; c < 2 && urls.length < sockets; c++) urls.push(`${wsBase(url)}/v1/app?access_token=${app.token}&key=fan_${k}`);
    }
  }
  const fan = [];
  for (let i = 0; i < urls.length; i += 50) fan.push(...(await Promise.all(urls.slice(i, i + 50).map((u) => openSocket(u)))));
  const latencies = [];
  for (let w = 0; w < writes; w++) {
    const marker = `bench-replay-fanout-${w}-${Date.now()}`;
    const arrivals = fan.map((s) => s.waitFor(marker));
    const replaying = openSocket(`${keyUrl}&since=${since}`).then(async (s) => (await s.waitForCount(events), s.close()));
    const t = performance.now();
    await poster.write(marker);
    latencies.push(...(await Promise.all(arrivals)).map((at) => at - t));
    await replaying;
  }
  for (const s of [...fan, watch]) s.close();
  latencies.sort((x, y) => x - y);
  const pct = (p) => +latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(1);
  const fanout = { sockets: fan.length, writes, replaying: events, p50_ms: pct(50), p99_ms: pct(99), max_ms: +latencies.at(-1).toFixed(1) };
  return { replay, fanout };
}

const wsBase = (url) => url.replace(/^http/, "ws");

function apiClient(url) {
  return async (method, path, { token, json, form } = {}) => {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    let body;
    if (json !== undefined) (headers["content-type"] = "application/json"), (body = JSON.stringify(json));
    if (form) body = new URLSearchParams(form);
    const res = await fetch(`${url}/v1${path}`, { method, headers, body });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
}

/** An app made through the admin API, with an app token. */
async function newApp(api, adminToken, name) {
  const app = (await api("POST", "/admin/apps", { token: adminToken, json: { name } })).body.data;
  const form = { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret };
  return { ...app, token: (await api("POST", "/oauth/access_token", { form })).body.access_token };
}

async function createStream(api, token, key) {
  const res = await api("POST", "/streams", { token, json: { type: "long_poll", object_types: ["post"], key } });
  if (res.status !== 200) throw new Error(`POST /streams answered ${res.status}`);
}

/** Posts with distinct texts (the same text twice in a minute is refused), 16 at a time. */
function postWriter(api, token) {
  const write = async (text) => {
    const res = await api("POST", "/posts", { token, json: { text } });
    if (res.status !== 201) throw new Error(`POST /posts answered ${res.status}`);
  };
  const writeMany = async (n, prefix) => {
    let next = 0;
    const stamp = Date.now();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < n) await write(`${prefix} ${stamp} ${next++}`);
      }),
    );
  };
  return { write, writeMany };
}

/** An app stream socket that pings every 20 s; resolves once its first frame has arrived. */
function openSocket(wsUrl) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl);
    const waiters = [];
    let count = 0;
    let first;
    const waiting = (test, done = false) =>
      new Promise((res, rej) => {
        if (done) return res(performance.now());
        // The timer ends with its waiter: a late rejection of a promise already settled or no longer
        // awaited would end the whole run as an unhandled rejection, losing every result.
        const timer = setTimeout(() => rej(new Error(`stream events did not arrive in 60 s (${count} so far)`)), 60_000);
        timer.unref();
        waiters.push({ test, resolve: (t) => (clearTimeout(timer), res(t)) });
      });
    ws.on("message", (data) => {
      const text = data.toString();
      const t = performance.now();
      if (!first) {
        first = JSON.parse(text);
        const pinger = setInterval(() => ws.send("ping"), 20_000);
        resolve({
          ws,
          first,
          close: () => (clearInterval(pinger), ws.close()),
          waitFor: (marker) => waiting((frame) => frame.includes(marker)),
          waitForCount: (n) => waiting(() => count >= n, count >= n),
        });
        return;
      }
      if (text === "pong") return;
      count++;
      for (const w of waiters) if (!w.done && w.test(text)) (w.done = true), w.resolve(t);
    });
    ws.once("error", reject);
  });
}
