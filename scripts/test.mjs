// `npm test`: runs each test file in its own Vitest process, one after another, then prints
// one summary line. Separate processes because, under the Workers pool, requests get slower as
// they accumulate in one runtime (workers-sdk#15446) and several files sharing one runtime and
// one database were seen to stall workerd. Arguments narrow the run to matching files.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

const filters = process.argv.slice(2);
const walk = (dir) => readdirSync(dir).flatMap((n) => {
  const p = path.join(dir, n);
  return statSync(p).isDirectory() ? walk(p) : p.endsWith(".test.ts") ? [p] : [];
});
const files = walk("test").sort().filter((f) => !filters.length || filters.some((x) => f.includes(x)));
const vitest = path.join("node_modules", "vitest", "vitest.mjs");
const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");

let passed = 0, failed = 0, skipped = 0;
const failedFiles = [];
for (const file of files) {
  const run = spawnSync(process.execPath, [vitest, "run", file], { encoding: "utf8", env: { ...process.env, FORCE_COLOR: "0" }, maxBuffer: 64 * 1024 * 1024 });
  const out = strip(`${run.stdout}${run.stderr}`);
  const line = out.split("\n").find((l) => /^\s*Tests\s+/.test(l)) ?? "";
  const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(line)?.[1] ?? 0);
  passed += count("passed");
  skipped += count("skipped");
  const fileFailed = count("failed") || (run.status !== 0 ? 1 : 0);
  failed += count("failed");
  if (run.status !== 0) {
    failedFiles.push(file);
    if (!count("failed")) failed += 1; // the file failed to run at all
    process.stdout.write(out.split("\n").filter((l) => !/nodedir|vpw:debug|enable_nodejs/.test(l)).join("\n") + "\n");
  }
  console.log(`${fileFailed ? "FAIL" : "ok  "} ${file}  ${line.trim().replace(/^Tests\s+/, "")}`);
  // A file that skips cases for a missing prerequisite says so in a console line: show it.
  for (const note of out.split("\n").filter((l) => /cases skipped: /.test(l))) console.log(`     ${note.trim()}`);
}
if (failedFiles.length) console.log(`\nFailed files:\n  ${failedFiles.join("\n  ")}`);
console.log(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedFiles.length ? 1 : 0);
