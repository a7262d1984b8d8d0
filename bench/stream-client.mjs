// Client side of the stream load benchmark (bench/streams.mjs): an API caller, a bounded pool, stream
// sockets that report every event frame, CPU time of a process from /proc, and percentiles.
import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { descendants } from "./proc-memory.mjs";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const wsBase = (url) => url.replace(/^http/, "ws");

export function apiClient(url) {
  return async (method, path, { token, json, form } = {}) => {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    let body;
    if (json !== undefined) (headers["content-type"] = "application/json"), (body = JSON.stringify(json));
    if (form) body = new URLSearchParams(form);
    // A GET is tried once more if the connection dropped before an answer: workerd may close a
    // kept-alive connection just as a request goes out on it (other writes are not repeated).
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${url}/v1${path}`, { method, headers, body });
        return { status: res.status, body: await res.json().catch(() => null) };
      } catch (e) {
        if (method !== "GET" || attempt > 0) throw e;
      }
    }
  };
}

/** Runs `fn` over `items` with at most `n` in flight; results in order. */
export async function pool(items, n, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/**
 * A stream socket; resolves with its first frame. `onEvent(text, at, socket)` gets every event frame
 * (not the first frame, not pongs) with its arrival time; `socket.events` counts them. Pings every
 * 20 s, as clients must (a socket with no client message for 60 s is closed).
 */
export function openSocket(wsUrl, onEvent = () => {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl);
    let socket;
    ws.on("message", (data) => {
      const at = performance.now();
      const text = data.toString();
      if (!socket) {
        const pinger = setInterval(() => ws.send("ping"), 20_000);
        socket = { ws, first: JSON.parse(text), events: 0, close: () => (clearInterval(pinger), ws.close()) };
        return resolve(socket);
      }
      if (text === "pong") return;
      socket.events++;
      onEvent(text, at, socket);
    });
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
  });
}

/** Opens sockets `at` a time (upgrades are requests too: a burst of 10,000 would time out). */
export async function openSockets(urls, onEvent, at = 50) {
  return pool(urls, at, (u) => openSocket(u, onEvent));
}

/** Resolves once `test()` holds, checked every 20 ms; rejects after `ms`. */
export async function until(test, ms, what) {
  const deadline = performance.now() + ms;
  while (!test()) {
    if (performance.now() > deadline) throw new Error(`${what} did not happen in ${ms / 1000} s`);
    await sleep(20);
  }
}

/** The workerd process Miniflare started under this node process (it runs the Worker, its Durable Objects and the local D1). */
export function workerdPid() {
  const found = descendants(process.pid).filter((p) => /\/workerd\s+serve\b/.test(p.cmd));
  if (found.length !== 1) throw new Error(`expected one workerd under this process, found ${found.length}`);
  return found[0].pid;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux
/** CPU time a process has used so far (user + system, all threads), in ms, from /proc/<pid>/stat. */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * TICK_MS; // fields 14 and 15 of stat, counted from after "(comm) "
}

/** p-th percentile of an unsorted list (nearest rank), one decimal. */
export function pct(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))].toFixed(1);
}

/**
 * Of a profile's samples that were not idle, the share inside calls of one function (its whole
 * subtree: callees, SQLite, frames sent), the function named by its 0-based line in the built
 * script. A share, not a time: the sampler runs on wall-clock time, so on a busy machine a time
 * read from it counts the moments the process waited for a core.
 */
export function insideShare(profile, line) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inside = new Map();
  const isIn = (id) => {
    if (inside.has(id)) return inside.get(id);
    const f = byId.get(id).callFrame;
    const v = (f.lineNumber === line && f.url.endsWith("index.js")) || (parent.has(id) && isIn(parent.get(id)));
    inside.set(id, v);
    return v;
  };
  let busy = 0;
  let hits = 0;
  for (const id of profile.samples) {
    if (byId.get(id).callFrame.functionName === "(idle)") continue;
    busy++;
    if (isIn(id)) hits++;
  }
  return busy ? hits / busy : 0;
}

/** The 0-based line of AppStreamHub's `publish` in the built Worker (what the profile names). */
export function hubPublishLine(build) {
  const lines = readFileSync(build, "utf8").split("\n");
  const cls = lines.findIndex((l) => /^var AppStreamHub = class\b/.test(l));
  const at = lines.findIndex((l, i) => i > cls && /^ {2}async publish\(/.test(l));
  if (cls < 0 || at < 0) throw new Error("AppStreamHub.publish not found in the built Worker");
  return at;
}
