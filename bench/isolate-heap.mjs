// The Worker's live JS heap, read through workerd's inspector (which `wrangler dev` opens on a
// random loopback port): the isolate's heap in use before and after a full garbage collection.
// RSS alone cannot tell a leak from garbage V8 has not collected yet; the heap after a GC can.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import WebSocket from "ws";

/** Loopback TCP ports a process listens on (from /proc/<pid>/fd and /proc/net/tcp). */
function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {} // closed meanwhile
  }
  const ports = [];
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[3] === "0A" && inodes.has(f[9])) ports.push(parseInt(f[1].split(":")[1], 16)); // 0A: LISTEN
  }
  return ports;
}

/** The inspector WebSocket URL of the Worker's isolate in workerd process `pid`, if it has one. */
export async function workerInspector(pid) {
  for (const port of listeningPorts(pid)) {
    const targets = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(2000) })
      .then((r) => (r.ok ? r.json() : []))
      .catch(() => []);
    const user = Array.isArray(targets) && targets.find((t) => /^core:user:/.test(t.id ?? "") && !/proxy/.test(t.id));
    if (user) return `ws://127.0.0.1:${port}/${user.id}`;
  }
  return undefined;
}

/**
 * `{ used_mb, live_mb }`: the isolate's heap in use, then after a full GC; undefined on failure.
 * workerd handles inspector messages only while the isolate runs, so `poke` (a request to the
 * Worker) is called every 250 ms until the answers are in.
 */
export async function liveHeap(url, poke) {
  const ws = new WebSocket(url);
  const poking = setInterval(() => poke().catch(() => {}), 250);
  try {
    await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
    let id = 0;
    const send = (method) =>
      new Promise((resolve, reject) => {
        const mine = ++id;
        const timer = setTimeout(() => reject(new Error(`${method}: no answer`)), 30_000);
        ws.on("message", function onMessage(data) {
          const m = JSON.parse(data);
          if (m.id !== mine) return;
          ws.off("message", onMessage), clearTimeout(timer), resolve(m.result);
        });
        ws.send(JSON.stringify({ id: mine, method }));
      });
    const mb = (b) => Math.round(b / 104857.6) / 10;
    const before = await send("Runtime.getHeapUsage");
    await send("HeapProfiler.collectGarbage");
    const after = await send("Runtime.getHeapUsage");
    return { used_mb: mb(before.usedSize), live_mb: mb(after.usedSize) };
  } catch {
    return undefined;
  } finally {
    clearInterval(poking);
    ws.close();
  }
}
