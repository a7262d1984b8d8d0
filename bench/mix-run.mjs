// The mixed benchmark's measurements, for bench/run.mjs: the whole mix, each read type alone with
// the cache defeated, writes alone (each in a child process running bench/mix.mjs), and a
// sequential pass that meters what each type reads (D1: X-Debug-Rows-Read with BENCH_ROWS_READ=1;
// Postgres: pg_stat_statements deltas per type).
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import http from "node:http";
import { READS, WRITES, generator, send } from "./mix.mjs";

const MIX_SECONDS = Number(process.env.BENCH_MIX_SECONDS ?? 60);
const ROWS_SAMPLES = 20;

function child(root, job, jobFile) {
  writeFileSync(jobFile, JSON.stringify(job));
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [path.join(root, "bench/mix.mjs"), jobFile], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    c.stdout.on("data", (d) => (out += d));
    c.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop())) : reject(new Error(`mix driver exited ${code}`))));
  });
}

/**
 * The mix (reads and writes, warm), every read type alone with the cache defeated, and writes
 * alone. Their ratios to the one-read floor are set afterwards (`setMixRatios`).
 */
export async function measureMix({ root, url, data, headers, connections, seconds, wanted, log, tmp }) {
  const jobFile = path.join(tmp, "mix-job.json");
  const base = { url, connections, data, headers };
  const out = { settings: { mix_seconds: MIX_SECONDS, alone_seconds: seconds, connections, weights_percent: { ...READS, ...WRITES } } };
  if (wanted("mix")) {
    log(`Mix: ${MIX_SECONDS} s, ${connections} connections, ${Object.values(WRITES).reduce((a, b) => a + b)} % writes`);
    const m = await child(root, { ...base, duration: MIX_SECONDS, weights: { ...READS, ...WRITES } }, jobFile);
    const answered = m.cache_hits + m.cache_misses;
    m.cache_hit_ratio = answered ? +(m.cache_hits / answered).toFixed(4) : "no cache";
    out.mix = m;
  }
  // One type alone for `seconds`: its rate, latencies and failures; reads with the cache defeated.
  const alone = async (type, read) => {
    const r = await child(root, { ...base, duration: seconds, weights: { [type]: 1 }, bust: read }, jobFile);
    const t = r.types[type] ?? { count: 0 };
    return { requests_per_s: +(t.count / r.seconds).toFixed(1), p50_ms: t.p50_ms, p99_ms: t.p99_ms, non2xx: t.non2xx };
  };
  out.alone = {};
  for (const type of Object.keys(READS)) {
    if (!wanted("mix") && !wanted(type)) continue;
    out.alone[type] = await alone(type, true);
  }
  if (wanted("mix") || wanted("writes")) {
    const w = await child(root, { ...base, duration: seconds * 2, weights: WRITES }, jobFile);
    out.writes_only = {
      requests_per_s: w.writes_per_s,
      p50_ms: w.write_p50_ms,
      p99_ms: w.write_p99_ms,
      non2xx: Object.values(w.types).reduce((s, t) => s + t.non2xx, 0),
      types: w.types,
    };
    // BENCH_WRITES_ALONE=1: each write type alone too (what one kind costs the runtime).
    if (process.env.BENCH_WRITES_ALONE === "1") {
      out.writes_alone = {};
      for (const type of Object.keys(WRITES)) {
        const a = (out.writes_alone[type] = await alone(type, false));
        log(`  ${type} alone: ${a.requests_per_s} req/s, p50 ${a.p50_ms} ms, p99 ${a.p99_ms} ms`);
      }
    }
  }
  return out;
}

/**
 * What each type reads, request by request (one at a time, cache defeated): on D1 the Worker's
 * meter headers (it must run with BENCH_ROWS_READ=1); on Postgres the statement statistics.
 */
export async function meterTypes({ url, data, headers, pg, wanted }) {
  const gen = generator(data, { bust: true });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const out = {};
  for (const type of [...Object.keys(READS), ...Object.keys(WRITES)]) {
    if (!wanted("mix") && !wanted(type)) continue;
    await pg?.statements(); // resets
    let rows = 0,
      sqlMs = 0,
      calls = 0,
      ok = 0,
      maxRows = 0;
    for (let i = 0; i < ROWS_SAMPLES; i++) {
      const req = gen.next(type);
      const res = await send(url, agent, req, headers);
      if (res.status >= 200 && res.status < 300) ok++, gen.saw(req, res.body);
      const r = Number(res.headers["x-debug-rows-read"] ?? 0);
      (rows += r), (maxRows = Math.max(maxRows, r)), (calls += Number(res.headers["x-debug-db-calls"] ?? 0));
      sqlMs += Number(res.headers["x-debug-sql-ms"] ?? 0);
    }
    const n = ROWS_SAMPLES;
    const row = { samples: n, ok, db_calls: +(calls / n).toFixed(1) };
    if (pg) {
      const s = await pg.statements();
      Object.assign(row, {
        rows_returned: Math.round(s.rows / n),
        blocks: Math.round(s.blocks / n),
        sql_ms: +(s.ms / n).toFixed(2),
        plan_ms: +(s.plan_ms / n).toFixed(2),
        statements: +(s.calls / n).toFixed(1),
      });
    } else Object.assign(row, { rows_read: Math.round(rows / n), rows_read_max: maxRows, sql_ms: +(sqlMs / n).toFixed(2) });
    out[type] = row;
  }
  agent.destroy();
  return out;
}

/**
 * The mix's and each read type's ratio to the one-read floor, measured before the mix and again
 * after it (`floors`): the higher divides (this machine's speed drifts within a run; the higher
 * floor gives the lower, safer ratio).
 */
export function setMixRatios(mixResults, floors) {
  mixResults.floors = floors;
  const floor = (mixResults.floor = Math.max(...floors.map((f) => f ?? 0)));
  const ratio = (rate) => +(rate / floor).toFixed(3);
  if (mixResults.mix) mixResults.mix.reads_ratio_to_one_read = ratio(mixResults.mix.reads_per_s);
  for (const row of Object.values(mixResults.alone)) row.ratio_to_one_read = ratio(row.requests_per_s);
}

/** The mix's part of the printed report. */
export function printMix(mixResults, log) {
  if (!mixResults) return;
  const { mix, alone, writes_only: w, metered = {} } = mixResults;
  const pad = (s, n) => String(s ?? "").padEnd(n);
  const num = (s, n) => String(s ?? "-").padStart(n);
  const pg = Object.values(metered).some((m) => "blocks" in m);
  log(
    `\nMix by type (mix: share of requests, p50/p99 in the mix; alone: cache defeated; ${pg ? "rows returned / buffers / SQL execution and planning ms" : "rows read / SQL ms"} per request, one at a time)`,
  );
  log(
    `${pad("type", 24)}${num("count", 7)}${num("p50", 7)}${num("p99", 7)}${num("hit%", 6)}${num("alone/s", 9)}${num("p50", 7)}${num("p99", 7)}${num("÷1read", 8)}${num("calls", 6)}${pg ? num("rows", 7) + num("bufs", 7) + num("sql ms", 8) + num("plan ms", 8) : num("rows", 8) + num("max", 8) + num("sql ms", 8)}`,
  );
  for (const type of [...Object.keys(READS), ...Object.keys(WRITES)]) {
    const t = mix?.types[type],
      a = alone?.[type],
      m = metered[type];
    if (!t && !a && !m) continue;
    const hits = t && t.cache_hits + t.cache_misses ? ((100 * t.cache_hits) / (t.cache_hits + t.cache_misses)).toFixed(1) : "";
    log(
      `${pad(type, 24)}${num(t?.count, 7)}${num(t?.p50_ms, 7)}${num(t?.p99_ms, 7)}${num(hits, 6)}${num(a?.requests_per_s ?? "", 9)}${num(a?.p50_ms ?? "", 7)}${num(a?.p99_ms ?? "", 7)}${num(a?.ratio_to_one_read ?? "", 8)}${num(m?.db_calls, 6)}${pg ? num(m?.rows_returned, 7) + num(m?.blocks, 7) + num(m?.sql_ms, 8) + num(m?.plan_ms, 8) : num(m?.rows_read, 8) + num(m?.rows_read_max, 8) + num(m?.sql_ms, 8)}${t?.non2xx ? `  ${t.non2xx} non-2xx ${JSON.stringify(t.statuses)}` : ""}`,
    );
  }
  if (mix) {
    log(
      `\nwhole mix: ${mix.reads_per_s} reads/s (÷ one-read floor ${mix.reads_ratio_to_one_read}), ${mix.writes_per_s} writes/s; reads p50 ${mix.read_p50_ms} ms p99 ${mix.read_p99_ms} ms; writes p50 ${mix.write_p50_ms} ms p99 ${mix.write_p99_ms} ms`,
    );
    log(
      `X-Cache hit ratio of the mix's reads: ${typeof mix.cache_hit_ratio === "number" ? `${(100 * mix.cache_hit_ratio).toFixed(2)} % (${mix.cache_hits} hits, ${mix.cache_misses} misses)` : mix.cache_hit_ratio}`,
    );
  }
  if (mixResults.floors)
    log(`one-read floor: ${mixResults.floors.map((f) => f ?? "-").join(" req/s before the mix, ")} after; ratios divide by the higher, ${mixResults.floor}`);
  if (w) log(`writes only: ${w.requests_per_s} req/s, p50 ${w.p50_ms} ms, p99 ${w.p99_ms} ms${w.non2xx ? `, ${w.non2xx} non-2xx` : ""}`);
}
