// `npm start`: everything a fresh clone needs to serve the API locally on an embedded database.
// 1. .dev.vars from the committed example when missing (ADMIN_TOKEN, RATE_LIMITS=0 for local use);
// 2. the D1 migrations applied to the local database (without an interactive prompt), summed up in one line;
// 3. `wrangler dev` on http://localhost:8787 with local D1, KV, R2 and Durable Objects.
// With DB_BACKEND=postgres (environment or .dev.vars), Postgres replaces D1: a local cluster in
// .wrangler/pg and the local stand-in for Neon's proxies start here, its migrations are applied,
// and wrangler dev gets DATABASE_URL and DB_PROXY. A DATABASE_URL of your own (a Neon database)
// is used as it is, with no local cluster.
// The port: `npm start -- --port 8788`, else `PORT=8788 npm start`, else 8787. Other arguments go to wrangler dev
// (`--persist-to DIR` also to the migrations). `--devtools` keeps wrangler's DevTools inspector (off by default).
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

// No outbound calls: the local runtime needs neither Cloudflare's request metadata nor metrics.
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const wrangler = (args) => [process.execPath, ["node_modules/wrangler/bin/wrangler.js", ...args]];

/** `--name N` or `--name=N` taken out of the forwarded arguments (wrangler refuses it twice). */
function takeOption(args, name) {
  const rest = [];
  let value;
  const re = new RegExp(`^--${name}(?:=(.*))?$`);
  for (let i = 0; i < args.length; i++) {
    const m = re.exec(args[i]);
    if (!m) rest.push(args[i]);
    else value = m[1] ?? args[++i];
  }
  return { value, rest };
}

/** Resolves whether nothing listens on 127.0.0.1:port (where wrangler dev will listen). */
function portIsFree(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

const { value: argPort, rest: afterPort } = takeOption(process.argv.slice(2), "port");
// `--persist-to DIR` (the soak's throwaway state, bench/soak.mjs) applies to the migrations too.
const { value: persistTo, rest: afterPersist } = takeOption(afterPort, "persist-to");
// `--devtools`: keep wrangler's DevTools inspector (the `d` hotkey); see below why it is off by default.
const devtools = afterPersist.includes("--devtools");
const rest = afterPersist.filter((a) => a !== "--devtools");
const persistArgs = persistTo ? ["--persist-to", persistTo] : [];
const port = argPort ?? process.env.PORT ?? "8787";
if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
  console.error(`Not a port: '${port}'. Use e.g. \`npm start -- --port 8788\` or \`PORT=8788 npm start\`.`);
  process.exit(1);
}
// Checked before anything starts: workerd would otherwise fail with a stack trace and wrangler
// advise a --port that this script already passes.
if (!(await portIsFree(Number(port)))) {
  const other = Number(port) === 65535 ? 8788 : Number(port) + 1;
  console.error(`Port ${port} is in use: stop what is using it, or run \`npm start -- --port ${other}\` / \`PORT=${other} npm start\`.`);
  process.exit(1);
}

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("Created .dev.vars from .dev.vars.example (ADMIN_TOKEN=local-admin-token, RATE_LIMITS=0).");
}

// wrangler prints the migration table again after every migration it applies: keep its output
// for a failure, and say in one line what happened otherwise.
const [cmd, migrateArgs] = wrangler(["d1", "migrations", "apply", "DB", "--local", ...persistArgs]);
const applied = spawnSync(cmd, migrateArgs, { stdio: ["ignore", "pipe", "pipe"], env, encoding: "utf8" });
const output = `${applied.stdout ?? ""}${applied.stderr ?? ""}`;
if (applied.status !== 0) {
  process.stderr.write(output);
  console.error("D1: applying the migrations to the local database failed (output above).");
  process.exit(applied.status ?? 1);
}
const count = /About to apply (\d+) migration/.exec(output)?.[1];
if (count) console.log(`D1: ${count} migration${count === "1" ? "" : "s"} applied to the local database (${persistTo ?? ".wrangler/state"}).`);
else if (/No migrations to apply/.test(output)) console.log("D1: local database up to date.");
else process.stdout.write(output); // a wording this script does not know: show wrangler's own

/** A variable from the environment, else from .dev.vars (KEY=value lines). */
function setting(name) {
  if (process.env[name]) return process.env[name];
  const line = readFileSync(".dev.vars", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}=`));
  return (
    line
      ?.slice(name.length + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1") || undefined
  );
}

const vars = [];
let stopPostgres = async () => {};
if (setting("DB_BACKEND") === "postgres") {
  vars.push("DB_BACKEND:postgres");
  const url = setting("DATABASE_URL");
  if (url) {
    vars.push(`DATABASE_URL:${url}`);
    console.log("Postgres: using DATABASE_URL (its migrations: `DATABASE_URL=… node scripts/pg/cluster.mjs migrate`).");
  } else {
    const { startCluster, startProxy, migrate } = await import("./pg/cluster.mjs");
    const cluster = await startCluster({ dir: ".wrangler/pg", port: Number(process.env.PG_PORT ?? 55432) });
    const proxy = await startProxy({ port: Number(process.env.DB_PROXY_PORT ?? 5481) });
    stopPostgres = async () => {
      await proxy.stop().catch(() => {});
      await cluster.stop().catch(() => {});
    };
    const applied = await migrate({ db: "edge_social", port: cluster.port });
    console.log(
      `Postgres: local cluster in .wrangler/pg on port ${cluster.port}, ${applied.length ? `${applied.length} migration(s) applied` : "up to date"}; Neon proxy on ${proxy.port}.`,
    );
    vars.push(`DATABASE_URL:${cluster.url("edge_social")}`, `DB_PROXY:127.0.0.1:${proxy.port}`);
  }
}

// wrangler dev's DevTools proxy (wrangler < 4.100) turns on the runtime's network tracking with no
// DevTools attached: every subrequest's events (bodies included) pile up in the proxy's memory and are
// each written to wrangler's debug log, ~15 KB a request (workers-sdk#14191, fixed in 4.100, which
// needs Node 22). Off unless `--devtools` is given: wrangler skips that proxy where this variable is
// set (as in an editor's debug terminal); console output and errors are shown either way.
const devEnv = { ...env };
if (!devtools) devEnv.VSCODE_INSPECTOR_OPTIONS ??= "{}";
const [devCmd, devArgs] = wrangler(["dev", "--ip", "127.0.0.1", "--port", port, ...persistArgs, ...vars.flatMap((v) => ["--var", v]), ...rest]);
const child = spawn(devCmd, devArgs, { stdio: "inherit", env: devEnv });
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", async (code) => {
  await stopPostgres();
  process.exit(code ?? 0);
});
