// Resident memory of the processes `npm start` runs, read from /proc (Linux): the process tree under
// one pid, and each process labelled by what it is, so a soak can follow the Worker's runtime and
// wrangler's local proxy separately.
import { readdirSync, readFileSync } from "node:fs";

const read = (file) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return ""; // the process ended between listing and reading
  }
};

/** The command line of a process, arguments space-separated ("" when it is gone). */
export const commandLine = (pid) => read(`/proc/${pid}/cmdline`).split("\0").join(" ").trim();

/** Every live descendant of `root` as `{ pid, ppid, cmd }` (its command line). */
export function descendants(root) {
  const all = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
    const stat = read(`/proc/${name}/stat`);
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    all.push({ pid: Number(name), ppid, cmd: commandLine(name) });
  }
  const found = [];
  let frontier = [root];
  while (frontier.length) {
    const next = all.filter((p) => frontier.includes(p.ppid));
    found.push(...next);
    frontier = next.map((p) => p.pid);
  }
  return found;
}

/**
 * The processes a soak follows under `npm start`'s pid: `worker` (the workerd serving the Worker),
 * `proxyRuntime` (the workerd of wrangler's proxy worker, listening on the public port) and
 * `wrangler` (the node process of `wrangler dev`, host of its proxy controller and Miniflare).
 * A role is missing when no process matches it.
 */
export function npmStartProcesses(root, port) {
  const tree = descendants(root);
  const wrangler = tree.find((p) => p.cmd.includes("wrangler-dist/cli.js"));
  const workerds = tree.filter((p) => /\/workerd\s+serve\b/.test(p.cmd));
  const onPublicPort = (p) => p.cmd.includes(`=127.0.0.1:${port} `);
  const proxyRuntime = workerds.length > 1 ? workerds.find(onPublicPort) : undefined;
  const worker = workerds.find((p) => p !== proxyRuntime);
  return { worker: worker?.pid, proxyRuntime: proxyRuntime?.pid, wrangler: wrangler?.pid };
}

/** VmRSS of a process in MB (one decimal), or undefined when it is gone. */
export function rssMb(pid) {
  const kb = /VmRSS:\s+(\d+) kB/.exec(read(`/proc/${pid}/status`))?.[1];
  return kb === undefined ? undefined : Math.round(Number(kb) / 102.4) / 10;
}
