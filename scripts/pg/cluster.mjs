// Throwaway local Postgres cluster for development and tests (no Docker, no system cluster touched).
//
//   import { startCluster, migrate, createDatabase, dropDatabase, startProxy } from "./scripts/pg/cluster.mjs";
//   const cluster = await startCluster();                 // temp dir, port 55432, role app/app
//   await migrate({ db: "es_tpl" });                      // creates es_tpl if missing, applies schema/pg/migrations
//   await createDatabase("es_f1", { template: "es_tpl" });
//   const proxy = await startProxy();                     // neon-local-proxy on 5481 (dev/CI only)
//   ... cluster.url("es_f1") ...
//   await proxy.stop(); await cluster.stop();
//
// CLI:  node scripts/pg/cluster.mjs up [--dir D] [--port P] [--proxy-port N] [--migrate DB]  (foreground; Ctrl-C stops)
//       node scripts/pg/cluster.mjs start --dir D [--port P]   |   stop --dir D   |   status --dir D
//       node scripts/pg/cluster.mjs migrate DB [--migrations schema/pg/migrations] [--port P]
//       DATABASE_URL=postgresql://… node scripts/pg/cluster.mjs migrate     (a deployment's database)
//       node scripts/pg/cluster.mjs create NAME [--template T] [--port P]   |   drop NAME [--port P]
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, mkdirSync, statfsSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { findPostgresBin, installAdvice } from "./find-postgres.mjs";

export const DEFAULT_PG_PORT = 55432;
export const APP_USER = "app";
export const APP_PASSWORD = "app";
const isRoot = process.getuid?.() === 0;
const here = path.dirname(fileURLToPath(import.meta.url));
let currentPort = Number(process.env.PG_PORT ?? DEFAULT_PG_PORT); // last cluster started here, or env

// Throwaway clusters go to tmpfs when there is room: on this disk (ext4, mounted with `discard`)
// CREATE DATABASE from a template took ~300-550 ms vs ~30-50 ms on /dev/shm, migrations ~1 s vs ~0.2 s.
// PG_TMPDIR overrides. (Docker's default 64 MB /dev/shm is too small, hence the free-space check.)
function tempBase() {
  if (process.env.PG_TMPDIR) return process.env.PG_TMPDIR;
  try {
    const st = statfsSync("/dev/shm");
    if (st.bavail * st.bsize >= 1024 ** 3) return "/dev/shm";
  } catch {
    /* no /dev/shm */
  }
  return os.tmpdir();
}
const makeTempDir = () => mkdtempSync(path.join(tempBase(), "pg-cluster-"));

/** A port nothing listens on now (the OS picks it), for clusters and proxies of tests and benches. */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = net.createServer().once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

/** postgresql://app:app@127.0.0.1:PORT/DB — the form the Neon driver and the proxy accept. */
export const databaseUrl = (db, port = currentPort) => `postgresql://${APP_USER}:${APP_PASSWORD}@127.0.0.1:${port}/${db}`;

/** The machine as find-postgres.mjs sees it: this OS, its files, PATH and `pg_config --bindir`. */
const thisMachine = () => ({
  platform: process.platform,
  env: process.env,
  listDir: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
  isFile: (file) => existsSync(file),
  pgConfigBindir: () => {
    try {
      return execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() || null;
    } catch {
      return null;
    }
  },
});

/**
 * The folder of the Postgres server binaries (see find-postgres.mjs for where it looks). When there
 * is none: as root on Debian/Ubuntu, installs postgresql with apt-get (CI); otherwise throws with
 * what to install on this OS.
 */
export function ensurePostgresInstalled() {
  let bin = findPostgresBin(thisMachine());
  if (bin) return bin;
  if (!isRoot || process.platform !== "linux" || !existsSync("/usr/bin/apt-get")) throw new Error(installAdvice(process.platform));
  console.error("[pg] postgresql not installed; installing with apt-get (one time)…");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "postgresql"], { stdio: "inherit", env });
  bin = findPostgresBin(thisMachine());
  if (!bin) throw new Error("apt-get installed postgresql but no initdb and pg_ctl were found");
  return bin;
}

// initdb's locale: C.UTF-8 (code point order, Unicode character classes) where the C library has
// it (Linux). macOS has no C.UTF-8: the same collation (C) with a UTF-8 character classification.
const initdbLocale = () => (process.platform === "darwin" ? ["--locale=C", "--lc-ctype=en_US.UTF-8"] : ["--locale=C.UTF-8"]);

// Postgres refuses to run as root, so server-side tools run as the `postgres` OS user then.
function asPgUser(bin, tool, args, opts = {}) {
  const [cmd, argv] = isRoot ? ["runuser", ["-u", "postgres", "--", `${bin}/${tool}`, ...args]] : [`${bin}/${tool}`, args];
  return execFileSync(cmd, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...opts });
}

function runningPort(dir) {
  // postmaster.pid line 4 is the port; the file only means "running" if pg_ctl status agrees.
  const pidFile = path.join(dir, "postmaster.pid");
  if (!existsSync(pidFile)) return null;
  try {
    asPgUser(ensurePostgresInstalled(), "pg_ctl", ["-D", dir, "status"]);
  } catch {
    return null;
  }
  return Number(readFileSync(pidFile, "utf8").split("\n")[3]);
}

/**
 * Starts (initialising if needed) a cluster in `dir` (default: a new dir on tmpfs if possible, removed by stop()).
 * Idempotent: an already running cluster in `dir` is reused, on the port it runs on.
 * `settings`: extra server settings for a start (e.g. the benchmark's pg_stat_statements preload).
 * @returns {Promise<{port:number, dir:string, bin:string, alreadyRunning:boolean, url:(db:string)=>string, stop:()=>Promise<void>}>}
 */
export async function startCluster({ dir, port = DEFAULT_PG_PORT, settings = {} } = {}) {
  const bin = ensurePostgresInstalled();
  const temporary = !dir;
  dir = path.resolve(dir ?? makeTempDir());
  mkdirSync(dir, { recursive: true });
  if (isRoot) chownRecursive(dir);

  let alreadyRunning = false;
  const running = runningPort(dir);
  if (running) {
    port = running;
    alreadyRunning = true;
  } else {
    if (!existsSync(path.join(dir, "PG_VERSION"))) {
      asPgUser(bin, "initdb", ["-D", dir, "-U", "postgres", "--auth-local=trust", "--auth-host=password", "-E", "UTF8", ...initdbLocale(), "-N"]);
    }
    // -o is handed to a shell by pg_ctl, hence the quoting of the socket dir.
    const opts =
      `-p ${port} -k '${dir}' -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off ` +
      "-c full_page_writes=off" +
      Object.entries(settings)
        .map(([k, v]) => ` -c ${k}=${v}`)
        .join("");
    try {
      asPgUser(bin, "pg_ctl", ["-D", dir, "-w", "-t", "30", "-l", path.join(dir, "server.log"), "-o", opts, "start"]);
    } catch (err) {
      const logFile = path.join(dir, "server.log");
      const log = existsSync(logFile) ? readFileSync(logFile, "utf8").slice(-2000) : "";
      if (temporary) rmSync(dir, { recursive: true, force: true });
      throw new Error(`pg_ctl start failed on port ${port}: ${err.stderr || err.message}\n${log}`);
    }
  }
  currentPort = port;
  // Superuser work over the unix socket (trust); `app` then does everything else over TCP (password).
  const admin = new pg.Client({ host: dir, port, user: "postgres", database: "postgres" });
  try {
    await admin.connect();
    await admin.query(`DO $$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${APP_USER}') THEN
        CREATE ROLE ${APP_USER} LOGIN CREATEDB PASSWORD '${APP_PASSWORD}';
      END IF; END $$`);
  } catch (err) {
    if (!alreadyRunning) stopCluster(dir);
    if (temporary) rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    await admin.end().catch(() => {});
  }
  return {
    port,
    dir,
    bin,
    alreadyRunning,
    url: (db) => databaseUrl(db, port),
    async stop() {
      stopCluster(dir);
      if (temporary) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Stops the cluster whose data dir is `dir` (fast shutdown); a no-op if it is not running. */
export function stopCluster(dir) {
  if (!existsSync(path.join(path.resolve(dir), "postmaster.pid"))) return;
  try {
    asPgUser(ensurePostgresInstalled(), "pg_ctl", ["-D", path.resolve(dir), "-m", "fast", "-w", "stop"]);
  } catch {
    /* gone */
  }
}

function chownRecursive(dir) {
  execFileSync("chown", ["-R", "postgres:postgres", dir]);
  // The server must also be able to reach the dir through its parents.
  try {
    execFileSync("runuser", ["-u", "postgres", "--", "test", "-w", dir]);
  } catch {
    throw new Error(`OS user postgres cannot write ${dir}; pick a dir whose parents are world-traversable`);
  }
}

// A short-lived client as `app` (never pooled: CREATE DATABASE … TEMPLATE needs the template idle).
async function withClient(db, port, fn, url = databaseUrl(db, port)) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const ident = (name) => `"${String(name).replace(/"/g, '""')}"`;

/** CREATE DATABASE name [TEMPLATE template] OWNER app. The template must have no open connections. */
export async function createDatabase(name, { template, port = currentPort, ifNotExists = false } = {}) {
  await withClient("postgres", port, async (c) => {
    if (ifNotExists && (await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount) return;
    // FILE_COPY (PG 15+) clones a small template a bit faster than the default WAL_LOG.
    const pg15 = Number((await c.query("SELECT current_setting('server_version_num') AS v")).rows[0].v) >= 150000;
    const from = template ? ` TEMPLATE ${ident(template)}${pg15 ? " STRATEGY FILE_COPY" : ""}` : "";
    await c.query(`CREATE DATABASE ${ident(name)}${from} OWNER ${APP_USER}`);
  });
}

/**
 * Replaces database `to` with a copy of `from` as it is now (the read-replica tests' stale replica).
 * A template must be idle: `from`'s connections (the proxy's pooled ones, which it drops and
 * reopens) are ended first; a connection opened meanwhile makes CREATE fail, so it is retried.
 */
export async function copyDatabase(from, to, { port = currentPort } = {}) {
  await dropDatabase(to, { port });
  for (let attempt = 0; ; attempt++) {
    await withClient("postgres", port, (c) =>
      c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [from]),
    );
    try {
      return await createDatabase(to, { template: from, port });
    } catch (err) {
      if (attempt >= 20 || !/being accessed by other users/.test(String(err?.message))) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** DROP DATABASE IF EXISTS name WITH (FORCE): also ends connections (e.g. idle ones in the proxy's pool). */
export async function dropDatabase(name, { port = currentPort } = {}) {
  await withClient("postgres", port, (c) => c.query(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`));
}

/**
 * Applies `dir/*.sql` in name order to `db` (created if missing), each file in one transaction, and
 * records it in `__migrations` so re-runs only apply new files. drizzle-kit separates statements with
 * `--> statement-breakpoint`. Returns the names of the files applied now. With `url` (e.g. a Neon
 * database's DATABASE_URL), that database is migrated instead of `db` of the local cluster.
 */
export async function migrate({ db, url, dir = "schema/pg/migrations", port = currentPort } = {}) {
  if (!db && !url) throw new Error("migrate: `db` or `url` is required");
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".sql"))
        .sort()
    : [];
  if (!files.length) throw new Error(`migrate: no *.sql files in ${path.resolve(dir)}`);
  if (!url) await createDatabase(db, { port, ifNotExists: true });
  return withClient(
    db,
    port,
    async (c) => {
      await c.query("CREATE TABLE IF NOT EXISTS __migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
      const done = new Set((await c.query("SELECT name FROM __migrations")).rows.map((r) => r.name));
      const applied = [];
      for (const file of files.filter((f) => !done.has(f))) {
        const statements = readFileSync(path.join(dir, file), "utf8")
          .split(/^\s*-->\s*statement-breakpoint\s*$/m)
          .map((s) => s.trim())
          .filter(Boolean);
        await c.query("BEGIN");
        try {
          for (const s of statements) await c.query(s);
          await c.query("INSERT INTO __migrations (name) VALUES ($1)", [file]);
          await c.query("COMMIT");
        } catch (err) {
          await c.query("ROLLBACK").catch(() => {});
          throw new Error(`migration ${file} failed: ${err.message}`, { cause: err });
        }
        applied.push(file);
      }
      return applied;
    },
    url,
  );
}

/**
 * Runs neon-local-proxy (dev/CI only) in this process, or as a child with { child: true }.
 * @returns {Promise<{port:number, url:string, stop:()=>Promise<void>}>}
 */
export async function startProxy({ port = 5481, child = false } = {}) {
  const script = path.join(here, "neon-local-proxy.mjs");
  if (!child) {
    const { startNeonLocalProxy } = await import(pathToFileURL(script).href);
    const proxy = await startNeonLocalProxy({ port });
    return { port: proxy.port, url: proxy.url, stop: () => proxy.close() };
  }
  // The IPC channel carries the "listening" message and ends the child if this process dies.
  const proc = spawn(process.execPath, [script, "--port", String(port)], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  await new Promise((resolve, reject) => {
    proc.once("message", resolve);
    proc.once("exit", (code) => reject(new Error(`neon-local-proxy exited with ${code}`)));
  });
  proc.unref(); // don't keep this process alive for the child or its channel
  proc.channel?.unref();
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      proc.ref();
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

// ---------- CLI ----------

async function main([cmd, ...args]) {
  const opt = (name, def) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : def;
  };
  const positional = args.find((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--"));
  const port = Number(opt("port", process.env.PG_PORT ?? DEFAULT_PG_PORT));
  currentPort = port;
  switch (cmd) {
    case "up": {
      // The dir is known before anything starts, so Ctrl-C or a failure at any point can clean up.
      const dir = opt("dir") ?? makeTempDir();
      let proxy;
      const stop = async () => {
        await proxy?.stop();
        stopCluster(dir);
        if (!opt("dir")) rmSync(dir, { recursive: true, force: true });
      };
      const onSignal = () => stop().finally(() => process.exit(0));
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
      try {
        const t0 = performance.now();
        const cluster = await startCluster({ dir, port });
        const migrated = opt("migrate");
        if (migrated) await migrate({ db: migrated, dir: opt("migrations", "schema/pg/migrations") });
        proxy = await startProxy({ port: Number(opt("proxy-port", process.env.NEON_LOCAL_PROXY_PORT ?? 5481)) });
        console.log(
          `postgres on 127.0.0.1:${cluster.port} (dir ${dir}), proxy on ${proxy.url}, ready in ` +
            `${Math.round(performance.now() - t0)} ms. URL: ${cluster.url(migrated ?? "postgres")}  (Ctrl-C stops)`,
        );
      } catch (err) {
        await stop();
        throw err;
      }
      return;
    }
    case "start": {
      if (!opt("dir")) throw new Error("start needs --dir (use `up` for a throwaway cluster)");
      const c = await startCluster({ dir: opt("dir"), port });
      return console.log(`postgres ${c.alreadyRunning ? "already running" : "started"} on 127.0.0.1:${c.port} (dir ${c.dir})`);
    }
    case "stop":
    case "status": {
      if (!opt("dir")) throw new Error(`${cmd} needs --dir`);
      const running = runningPort(path.resolve(opt("dir")));
      if (cmd === "stop") stopCluster(opt("dir"));
      return console.log(running ? `${cmd === "stop" ? "stopped" : "running"} (port ${running})` : "not running");
    }
    case "migrate": {
      // No database name: the one DATABASE_URL names (a deployment's Neon database).
      const url = positional ? undefined : process.env.DATABASE_URL;
      const applied = await migrate({ db: positional, url, dir: opt("migrations", "schema/pg/migrations") });
      return console.log(applied.length ? `applied: ${applied.join(", ")}` : "up to date");
    }
    case "create":
      await createDatabase(positional, { template: opt("template") });
      return console.log(`created ${positional}`);
    case "drop":
      await dropDatabase(positional);
      return console.log(`dropped ${positional}`);
    default:
      console.error("usage: cluster.mjs up|start|stop|status|migrate|create|drop (see header comment)");
      process.exit(2);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`[pg] ${err.message}`);
    process.exit(1);
  });
}
