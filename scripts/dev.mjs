// `npm start`: everything a fresh clone needs to serve the API locally on an embedded database.
// 1. .dev.vars from the committed example when missing (ADMIN_TOKEN for the admin API);
// 2. the D1 migrations applied to the local database (without an interactive prompt);
// 3. `wrangler dev` on http://localhost:8787 with local D1, KV, R2 and Durable Objects.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";

// No outbound calls: the local runtime needs neither Cloudflare's request metadata nor metrics.
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const wrangler = (args, stdio) => ({ cmd: process.execPath, args: ["node_modules/wrangler/bin/wrangler.js", ...args], stdio });

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("Created .dev.vars from .dev.vars.example (ADMIN_TOKEN=local-admin-token).");
}

const migrate = wrangler(["d1", "migrations", "apply", "DB", "--local"], ["ignore", "inherit", "inherit"]);
const applied = spawnSync(migrate.cmd, migrate.args, { stdio: migrate.stdio, env });
if (applied.status !== 0) process.exit(applied.status ?? 1);

const port = process.env.PORT ?? "8787";
const dev = wrangler(["dev", "--ip", "127.0.0.1", "--port", port, ...process.argv.slice(2)], "inherit");
const child = spawn(dev.cmd, dev.args, { stdio: dev.stdio, env });
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
