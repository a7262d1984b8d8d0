// `npm test` (D1) and `npm run test:pg` (Postgres through the Neon driver): runs each test file
// in its own Vitest process, one after another, then prints one summary line. Separate processes
// because, under the Workers pool, requests get slower as they accumulate in one runtime
// (workers-sdk#15446) and several files sharing one runtime and one database were seen to stall
// workerd. Arguments narrow the run to matching files.
//
// Postgres (`--pg` or DB_BACKEND=postgres): a throwaway cluster and the local stand-in for Neon's
// proxies start once; the migrations go into a template database, and each test file gets its
// own clone of it (CREATE DATABASE … TEMPLATE, tens of milliseconds), dropped afterwards.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const args = process.argv.slice(2);
const pgMode = args.includes("--pg") || process.env.DB_BACKEND === "postgres";
const filters = args.filter((a) => a !== "--pg");
const walk = (dir) =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(".test.ts") ? [p] : [];
  });
const files = walk("test")
  .sort()
  .filter((f) => !filters.length || filters.some((x) => f.includes(x)));
const vitest = path.join("node_modules", "vitest", "vitest.mjs");
const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");

/** Runs one Vitest process; its combined output and exit status. */
const runVitest = (file, env) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [vitest, "run", file], { env: { ...process.env, FORCE_COLOR: "0", ...env } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (status) => resolve({ out: strip(out), status }));
  });

let backend = { name: "D1", env: () => ({}), done: async () => {}, stop: async () => {} };
if (pgMode) {
  const { freePort, startCluster, startProxy, migrate, createDatabase, dropDatabase } = await import("./pg/cluster.mjs");
  const cluster = await startCluster({ port: await freePort() });
  const proxy = await startProxy({ port: await freePort() });
  const stop = async () => {
    await proxy.stop().catch(() => {});
    await cluster.stop().catch(() => {});
  };
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => stop().finally(() => process.exit(130)));
  try {
    await migrate({ db: "es_tpl", port: cluster.port });
  } catch (err) {
    await stop();
    throw err;
  }
  let n = 0;
  let current;
  backend = {
    name: "Postgres",
    env: async (file) => {
      current = `es_f${++n}`;
      await createDatabase(current, { template: "es_tpl", port: cluster.port });
      const env = { DB_BACKEND: "postgres", DATABASE_URL: cluster.url(current), DB_PROXY: `127.0.0.1:${proxy.port}` };
      // The read-replica tests get a second database as the replica: a copy of the primary that
      // nothing updates (a replica lagging forever) until the test copies the primary again.
      if (!file.includes("read-replicas")) return env;
      await createDatabase(`${current}_replica`, { template: "es_tpl", port: cluster.port });
      return { ...env, DATABASE_READ_URL: cluster.url(`${current}_replica`) };
    },
    done: async () => {
      await dropDatabase(`${current}_replica`, { port: cluster.port }).catch(() => {});
      await dropDatabase(current, { port: cluster.port }).catch(() => {});
    },
    stop,
  };
  console.log(`Postgres ${cluster.port}, local Neon proxy ${proxy.port}`);
}

let passed = 0,
  failed = 0,
  skipped = 0;
const failedFiles = [];
const FAULT_TESTS = ["test/fault/kill-runtime.mjs"];

/** Runs a Node script test; its combined output and exit status. */
const runScript = (script, env = {}) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [script], { env: { ...process.env, FORCE_COLOR: "0", ...env } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (status) => resolve({ out: strip(out), status }));
  });

/** Adds a script's `N passed, N failed, N skipped` (its last line) to the totals and prints its line. */
function count(script, run, name) {
  const summary = run.out.trim().split("\n").pop();
  const counts = /(\d+) passed, (\d+) failed, (\d+) skipped/.exec(summary);
  if (counts) (passed += Number(counts[1])), (failed += Number(counts[2])), (skipped += Number(counts[3]));
  else run.status === 0 ? passed++ : failed++;
  if (run.status !== 0) {
    failedFiles.push(script);
    if (counts && !Number(counts[2])) failed++; // it failed to run at all
    process.stdout.write(run.out + "\n");
  }
  console.log(`${run.status ? "FAIL" : "ok  "} ${name}  ${summary}`);
  for (const note of run.out.split("\n").filter((l) => /skipped: |took [\d.]+ s| kills, /.test(l))) console.log(`     ${note.trim()}`);
}
try {
  for (const file of files) {
    const run = await runVitest(file, await backend.env(file));
    await backend.done();
    const line = run.out.split("\n").find((l) => /^\s*Tests\s+/.test(l)) ?? "";
    const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(line)?.[1] ?? 0);
    passed += count("passed");
    skipped += count("skipped");
    const fileFailed = count("failed") || (run.status !== 0 ? 1 : 0);
    failed += count("failed");
    if (run.status !== 0) {
      failedFiles.push(file);
      if (!count("failed")) failed += 1; // the file failed to run at all
      process.stdout.write(
        run.out
          .split("\n")
          .filter((l) => !/nodedir|vpw:debug|enable_nodejs/.test(l))
          .join("\n") + "\n",
      );
    }
    console.log(`${fileFailed ? "FAIL" : "ok  "} ${file}  ${line.trim().replace(/^Tests\s+/, "")}`);
    // A file that skips cases for a missing prerequisite says so in a console line: show it.
    for (const note of run.out.split("\n").filter((l) => /cases skipped: /.test(l))) console.log(`     ${note.trim()}`);
  }
  // Script tests that drive a runtime of their own from Node (test/fault: kill it hard, restart it),
  // on this backend (Postgres: a clone of the template, as a test file gets). Each prints
  // `<name>: N passed, N failed, N skipped` last.
  for (const script of FAULT_TESTS.filter((f) => !filters.length || filters.some((x) => f.includes(x)))) {
    const run = await runScript(script, await backend.env(script));
    await backend.done();
    count(script, run, path.basename(script, ".mjs"));
  }
} finally {
  await backend.stop();
}
// A full D1 run also lints the OpenAPI document and runs the browser tests (each a script of its
// own: `npm run lint:openapi`, `npm run test:browser`; the latter skips, saying so, without Chromium).
if (!pgMode && !filters.length) {
  for (const [name, script] of [
    ["OpenAPI lint", "scripts/lint-openapi.mjs"],
    ["browser tests", "test/browser/run.mjs"],
  ]) {
    // Screenshots go to a scratch folder: docs/ keeps the ones committed (npm run test:browser writes there).
    count(script, await runScript(script, { BROWSER_SCREENSHOTS_DIR: path.join(tmpdir(), "edge-social-screenshots") }), name);
  }
}
if (failedFiles.length) console.log(`\nFailed files:\n  ${failedFiles.join("\n  ")}`);
console.log(`\n${backend.name}: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedFiles.length ? 1 : 0);
