// `BENCH_PROFILE=1 npm run bench`: a CPU profile of the Worker's isolate while the mix runs, through
// workerd's inspector (Chrome DevTools protocol). Writes bench/results/mix.cpuprofile (open it in
// Chrome DevTools' Performance panel) and prints the functions with the most self time, grouped by
// function and file. Only the Worker's JavaScript is seen: the local D1's SQLite and the Durable
// Objects run in other isolates or threads of the same workerd.
import { writeFileSync } from "node:fs";
import WebSocket from "ws";

/** Connects to the inspector of the (first) user Worker on `port` and starts sampling. */
export async function startProfile(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const target = targets.find((t) => t.id.startsWith("core:user:"));
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  let next = 1;
  const pending = new Map();
  ws.on("message", (raw) => {
    const msg = JSON.parse(String(raw));
    if (msg.id && pending.has(msg.id)) pending.get(msg.id)(msg), pending.delete(msg.id);
  });
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call("Profiler.enable");
  await call("Profiler.setSamplingInterval", { interval: 200 });
  await call("Profiler.start");
  return {
    /** Stops sampling and returns the profile (nodes, samples, timeDeltas in µs). */
    async stopRaw() {
      const { result } = await call("Profiler.stop");
      ws.close();
      return result.profile;
    },
    /** Stops sampling, writes the profile to `file` and returns the top self-time rows. */
    async stop(file, top = 40) {
      const { result } = await call("Profiler.stop");
      ws.close();
      writeFileSync(file, JSON.stringify(result.profile));
      return summarize(result.profile, top);
    },
  };
}

function summarize(profile, top) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  let total = 0;
  for (const [id, n] of counts) {
    const f = byId.get(id).callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").slice(-1)[0]}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + n);
    total += n;
  }
  const idle = [...self].filter(([k]) => k.startsWith("(idle)") || k.startsWith("(program)")).reduce((s, [, n]) => s + n, 0);
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, top);
  return { samples: total, busy_share: +((total - idle) / total).toFixed(3), top: rows.map(([k, n]) => ({ fn: k, self_share: +(n / total).toFixed(4) })) };
}
