// Local stand-in for Neon's proxies, so `@neondatabase/serverless` can reach a plain local Postgres.
//
//   LOCAL DEVELOPMENT AND CI ONLY. NEVER DEPLOY THIS. It has no auth of its own, no TLS and no limits;
//   it listens on loopback only and only forwards to loopback Postgres servers.
//
// It serves, on one port:
//   * WebSocket -> TCP tunnel (what neondatabase/wsproxy does) for `Client`/`Pool`:
//       upgrade `/v1?address=host:port` (also `/v2` and `/`), then raw Postgres wire bytes both ways.
//   * Neon's SQL-over-HTTP endpoint `POST /sql` for `neon()`, `sql.transaction()` and drizzle `neon-http`,
//     as driver 1.0.2 speaks it (see `execute` and `processQueryResult` in its index.mjs).
//
// Usage: node scripts/pg/neon-local-proxy.mjs [--port 5481]   (or NEON_LOCAL_PROXY_PORT)
// Import: const proxy = await startNeonLocalProxy({ port }); ...; await proxy.close();
import http from "node:http";
import net from "node:net";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { WebSocketServer } from "ws";

export const DEFAULT_PROXY_PORT = 5481;

/** True for 127.0.0.0/8, ::1 (also bracketed or v4-mapped) and `localhost`. */
export function isLoopbackHost(host) {
  const h = String(host ?? "")
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const v4 = h.startsWith("::ffff:") ? h.slice(7) : h;
  return net.isIPv4(v4) && v4.startsWith("127.");
}

// "host:port" / "[::1]:port" -> { host, port }
function parseAddress(address) {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:]+):(\d+)$/.exec(address);
  return m ? { host: m[1], port: Number(m[2]) } : null;
}

// ---------- WebSocket -> TCP tunnel ----------

function handleUpgrade(wss, req, socket, head) {
  const url = new URL(req.url, "http://localhost");
  const target = parseAddress(url.searchParams.get("address") ?? "");
  const refuse = (status, msg) => {
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${msg}\n`);
  };
  if (!["/", "/v1", "/v2"].includes(url.pathname)) return refuse("404 Not Found", "unknown path");
  if (!target) return refuse("400 Bad Request", "missing or bad ?address=host:port");
  if (!isLoopbackHost(target.host)) return refuse("403 Forbidden", `address ${target.host} is not loopback`);
  wss.handleUpgrade(req, socket, head, (ws) => tunnel(ws, target));
}

const HIGH_WATER = 1 << 20;

function tunnel(ws, { host, port }) {
  // Writes before 'connect' are buffered by net.Socket, which matters because the driver
  // pipelines startup + password + first query without waiting (pipelineConnect: "password").
  const tcp = net.connect({ host: host === "localhost" ? "127.0.0.1" : host, port });
  tcp.setNoDelay(true);
  // Backpressure both ways: pause whichever side produces faster than the other can take.
  ws.on("message", (data) => {
    if (!tcp.write(data)) ws.pause();
  });
  tcp.on("drain", () => ws.resume());
  tcp.on("data", (chunk) => {
    ws.send(chunk, { binary: true }, () => {
      if (tcp.isPaused() && ws.bufferedAmount < HIGH_WATER) tcp.resume();
    });
    if (ws.bufferedAmount >= HIGH_WATER) tcp.pause();
  });
  const closeBoth = () => {
    tcp.destroy();
    if (ws.readyState <= 1) ws.close();
  };
  ws.on("close", closeBoth);
  ws.on("error", closeBoth);
  tcp.on("close", closeBoth);
  tcp.on("error", closeBoth);
}

// ---------- SQL over HTTP ----------

// Every value stays the server's text form (what `Neon-Raw-Text-Output: true` asks for);
// the driver parses it with pg-types using `dataTypeID`.
const rawText = { getTypeParser: () => (v) => v };
const ISOLATION = {
  ReadUncommitted: "READ UNCOMMITTED",
  ReadCommitted: "READ COMMITTED",
  RepeatableRead: "REPEATABLE READ",
  Serializable: "SERIALIZABLE",
};
const ERROR_FIELDS = [
  "severity",
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "file",
  "line",
  "routine",
];

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function createPools() {
  const pools = new Map(); // connection string -> pg.Pool
  return {
    get(connectionString) {
      let pool = pools.get(connectionString);
      if (pool) return pool;
      let url;
      try {
        url = new URL(connectionString);
      } catch {
        throw new HttpError(400, "invalid Neon-Connection-String");
      }
      if (!/^postgres(ql)?:$/.test(url.protocol)) throw new HttpError(400, "connection string must be postgres://");
      if (!isLoopbackHost(url.hostname)) throw new HttpError(403, `host ${url.hostname} is not loopback`);
      // Loopback only, so no TLS; drop sslmode & co. rather than fail on them.
      for (const k of ["sslmode", "sslrootcert", "sslcert", "sslkey", "channel_binding"]) url.searchParams.delete(k);
      pool = new pg.Pool({ connectionString: url.toString(), ssl: false, types: rawText, max: 10, idleTimeoutMillis: 5000, allowExitOnIdle: true });
      // An idle connection can die (DROP DATABASE … WITH (FORCE), server stop); the pool drops it.
      pool.on("error", () => {});
      pools.set(connectionString, pool);
      return pool;
    },
    async close() {
      await Promise.all([...pools.values()].map((p) => p.end().catch(() => {})));
      pools.clear();
    },
  };
}

// Respond first, then reset session state (SET, temp tables, advisory locks…) before the connection
// goes back, so every request starts clean. The reset is Neon's own for its HTTP pool (its proxy's
// `reset_session_background`): everything `DISCARD ALL` does but `DISCARD PLANS`, so plans cached
// in the session (a PL/pgSQL function's) outlive the request there and here alike. A reset that
// fails: that connection is destroyed instead.
const RESET_SESSION = `ROLLBACK; CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; DEALLOCATE ALL;
  UNLISTEN *; SELECT pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES;`;
function releaseClean(client) {
  client.query(RESET_SESSION).then(
    () => client.release(),
    (err) => client.release(err),
  );
}

function toResult(res, arrayMode) {
  const fields = res.fields.map((f) => ({
    name: f.name,
    dataTypeID: f.dataTypeID,
    tableID: f.tableID,
    columnID: f.columnID,
    dataTypeSize: f.dataTypeSize,
    dataTypeModifier: f.dataTypeModifier,
    format: "text",
  }));
  const rows = arrayMode ? res.rows : res.rows.map((r) => Object.fromEntries(fields.map((f, i) => [f.name, r[i]])));
  return { fields, rows, command: res.command, rowCount: res.rowCount, rowAsArray: arrayMode };
}

// Extended protocol like Neon (one statement per query; params are text or null).
const run = (client, q) => {
  if (typeof q?.query !== "string") throw new HttpError(400, "each query needs a `query` string");
  return client.query({ text: q.query, values: q.params ?? [], rowMode: "array", queryMode: "extended" });
};

function beginStatement(headers) {
  let sql = "BEGIN";
  const iso = headers["neon-batch-isolation-level"];
  if (iso !== undefined) {
    if (!ISOLATION[iso]) throw new HttpError(400, `bad Neon-Batch-Isolation-Level: ${iso}`);
    sql += ` ISOLATION LEVEL ${ISOLATION[iso]}`;
  }
  const ro = headers["neon-batch-read-only"];
  if (ro !== undefined) sql += ro === "true" ? " READ ONLY" : " READ WRITE";
  const def = headers["neon-batch-deferrable"];
  if (def !== undefined) sql += def === "true" ? " DEFERRABLE" : " NOT DEFERRABLE";
  return sql;
}

async function handleSql(pools, req) {
  const connectionString = req.headers["neon-connection-string"];
  if (!connectionString) throw new HttpError(400, "missing Neon-Connection-String header");
  const arrayMode = req.headers["neon-array-mode"] === "true";
  let body;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    throw new HttpError(400, "body is not JSON");
  }
  const pool = pools.get(connectionString);

  if (!Array.isArray(body?.queries)) {
    const client = await pool.connect();
    try {
      return toResult(await run(client, body), arrayMode);
    } finally {
      releaseClean(client);
    }
  }
  // A batch: one transaction on one connection; any error rolls it all back.
  const begin = beginStatement(req.headers);
  const client = await pool.connect();
  let open = false;
  try {
    await client.query(begin);
    open = true;
    const results = [];
    for (const q of body.queries) results.push(toResult(await run(client, q), arrayMode));
    open = false; // a failed COMMIT (e.g. serialization failure) has already rolled back
    await client.query("COMMIT");
    return { results };
  } catch (err) {
    if (open) await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    releaseClean(client);
  }
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function errorBody(err) {
  const out = { message: err.message };
  for (const k of ERROR_FIELDS) out[k] = err[k];
  // Node errors (ECONNREFUSED…) carry a `code` too; only a SQLSTATE belongs there.
  if (typeof out.code !== "string" || !/^[0-9A-Z]{5}$/.test(out.code)) delete out.code;
  return out;
}

function sendJson(res, status, obj) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

// ---------- server ----------

/** Starts the proxy. Resolves to { port, url, close() } once listening. */
export async function startNeonLocalProxy({ port = DEFAULT_PROXY_PORT, host = "127.0.0.1" } = {}) {
  if (!isLoopbackHost(host)) throw new Error(`neon-local-proxy only listens on loopback, not ${host}`);
  const pools = createPools();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url, "http://localhost").pathname;
    if (req.method === "GET" && path === "/health") return sendJson(res, 200, { ok: true });
    if (req.method !== "POST" || path !== "/sql") return sendJson(res, 404, { message: "not found" });
    try {
      sendJson(res, 200, await handleSql(pools, req));
    } catch (err) {
      sendJson(res, err.status ?? 400, errorBody(err));
    }
  });
  server.keepAliveTimeout = 65_000;
  server.on("upgrade", (req, socket, head) => handleUpgrade(wss, req, socket, head));
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const actualPort = server.address().port;
  return {
    port: actualPort,
    url: `http://${host}:${actualPort}`,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
      await pools.close();
    },
  };
}

// ---------- CLI ----------

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const i = process.argv.indexOf("--port");
  const port = Number(i > 0 ? process.argv[i + 1] : (process.env.NEON_LOCAL_PROXY_PORT ?? DEFAULT_PROXY_PORT));
  const proxy = await startNeonLocalProxy({ port });
  console.log(`neon-local-proxy listening on ${proxy.url} (ws /v1?address=host:port, POST /sql; loopback only, dev/CI only)`);
  const stop = () => proxy.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  // Started by cluster.mjs startProxy({ child: true }): report readiness, and exit with the parent.
  if (process.send) {
    process.send({ port: proxy.port });
    process.on("disconnect", stop);
  }
}
