// Contract check: does `@neondatabase/serverless` (and drizzle neon-http) work against our local
// Postgres + neon-local-proxy the way it works against Neon? Run it after bumping the driver.
//
//   node scripts/pg/probe.mjs                 # starts a throwaway cluster + proxy, probes, stops both
//   DATABASE_URL=postgresql://app:app@127.0.0.1:55432/db DB_PROXY=127.0.0.1:5481 node scripts/pg/probe.mjs
//
// Prints PASS/FAIL per check and a few latencies; exits non-zero if any check fails.
import { neon, neonConfig, Client, Pool } from "@neondatabase/serverless";
import { drizzle } from "drizzle-orm/neon-http";
import { pgTable, text, bigint } from "drizzle-orm/pg-core";
import { count } from "drizzle-orm";
import ws from "ws";
import { startCluster, startProxy, createDatabase, dropDatabase } from "./cluster.mjs";

// Local-use settings (the ones the app sets only when DB_PROXY is set).
function configureNeon(proxy) {
  neonConfig.webSocketConstructor = ws; // Node 20 has no global WebSocket
  neonConfig.wsProxy = (host, port) => `${proxy}/v1?address=${host}:${port}`;
  neonConfig.useSecureWebSocket = false;
  neonConfig.fetchEndpoint = () => `http://${proxy}/sql`;
  neonConfig.forceDisablePgSSL = true; // default; pipelineConnect stays "password" (default)
}

let failures = 0;
async function check(name, fn) {
  try {
    const note = await fn();
    console.log(`PASS ${name}${note ? `  (${note})` : ""}`);
  } catch (err) {
    failures++;
    console.log(`FAIL ${name}: ${err?.message ?? err}${err?.code ? ` [${err.code}]` : ""}`);
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}
const eq = (a, b, what) => assert(JSON.stringify(a) === JSON.stringify(b), `${what}: got ${JSON.stringify(a)}, want ${JSON.stringify(b)}`);
const caught = (p) =>
  p.then(
    () => {
      throw new Error("expected an error");
    },
    (e) => e,
  );
async function timed(n, fn) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t0) / n).toFixed(2);
}

async function probe(url, proxy) {
  configureNeon(proxy);
  const sql = neon(url);
  const full = neon(url, { fullResults: true, arrayMode: true });
  await sql`create table t (id bigint generated always as identity primary key, k text not null unique)`;
  await sql`create table g (k text not null)`;

  await check("neon() simple query with params", async () => {
    const rows = await sql`select ${41}::int + 1 as n, ${"a"} || 'b' as s, ${null}::text as z`;
    eq(rows, [{ n: 42, s: "ab", z: null }], "rows");
  });
  await check("neon(url, {fullResults, arrayMode})", async () => {
    const r = await full`select 1 as a, 'x' as b union all select 2, 'y'`;
    eq(
      r.rows,
      [
        [1, "x"],
        [2, "y"],
      ],
      "rows",
    );
    eq(
      r.fields.map((f) => [f.name, f.dataTypeID]),
      [
        ["a", 23],
        ["b", 25],
      ],
      "fields",
    );
    eq([r.command, r.rowCount, r.rowAsArray], ["SELECT", 2, true], "command/rowCount/rowAsArray");
  });
  await check("types: json, bool, array, bytea, timestamptz params and results", async () => {
    const [r] = await sql`select ${JSON.stringify({ a: 1 })}::jsonb as j, ${true}::bool as b, ${[1, 2]}::int[] as arr,
      ${Buffer.from("hi")}::bytea as by, ${new Date(0)}::timestamptz as ts`;
    eq([r.j, r.b, r.arr, Buffer.from(r.by).toString(), r.ts.getTime()], [{ a: 1 }, true, [1, 2], "hi", 0], "values");
  });
  await check("transaction commit (Serializable)", async () => {
    const [ins, cnt] = await sql.transaction([sql`insert into t (k) values ('a'), ('b') returning k`, sql`select count(*)::int as c from t`], {
      isolationLevel: "Serializable",
    });
    eq([ins.map((r) => r.k), cnt[0].c], [["a", "b"], 2], "results");
  });
  await check("transaction rollback on unique violation", async () => {
    const err = await caught(sql.transaction([sql`insert into t (k) values ('c')`, sql`insert into t (k) values ('a')`], { isolationLevel: "Serializable" }));
    eq([err.code, err.constraint, err.table], ["23505", "t_k_key", "t"], "error fields");
    const [{ c }] = await sql`select count(*)::int as c from t where k = 'c'`;
    eq(c, 0, "row 'c' rolled back");
    return err.message;
  });
  await check("error fields on a single query (position, routine)", async () => {
    const err = await caught(sql`select nosuchcol from t`);
    assert(err.code === "42703" && err.position === "8" && err.severity === "ERROR" && err.routine, JSON.stringify(err));
  });
  await check("read-only batch refuses writes", async () => {
    const err = await caught(sql.transaction([sql`insert into t (k) values ('ro')`], { readOnly: true }));
    eq(err.code, "25006", "code");
  });
  const race = async (opts) => {
    await sql`delete from g`;
    const guarded = () =>
      sql.transaction([sql`insert into g (k) select 'x' where not exists (select 1 from g where k = 'x')`, sql`select pg_sleep(0.2)`], opts);
    const out = await Promise.allSettled([guarded(), guarded()]);
    const [{ c }] = await sql`select count(*)::int as c from g`;
    return { outcomes: out.map((o) => (o.status === "fulfilled" ? "ok" : o.reason.code)).sort(), rows: c };
  };
  await check("concurrent Serializable batches: one wins, other gets 40001", async () => {
    const r = await race({ isolationLevel: "Serializable" });
    eq(r, { outcomes: ["40001", "ok"], rows: 1 }, "race");
  });
  await check("isolation header honoured (default READ COMMITTED lets both in)", async () => {
    eq(await race(undefined), { outcomes: ["ok", "ok"], rows: 2 }, "race");
  });
  await check("each HTTP request gets a clean session", async () => {
    await sql`select set_config('probe.x', 'dirty', false)`;
    await sql`begin`; // a lone BEGIN must not leak an open transaction either
    for (let i = 0; i < 5; i++) {
      const [{ v }] = await sql`select current_setting('probe.x', true) as v`;
      assert(!v, `leaked setting: ${v}`);
      const err = await caught(sql`savepoint s`); // only legal inside an (leaked) open transaction
      eq(err.code, "25P01", "savepoint outside a transaction block");
    }
  });
  await check("int8 comes back as string by default (HTTP)", async () => {
    const [r] = await full`select 9007199254740993::int8 as big, count(*) as c from t`.then((x) => x.rows);
    eq(r, ["9007199254740993", "2"], "row");
  });
  await check("Client over WebSocket tunnel: connect + query + int8", async () => {
    const client = new Client(url);
    const t0 = performance.now();
    await client.connect();
    const ms = (performance.now() - t0).toFixed(1);
    try {
      const r = await client.query("select $1::text as s, 9007199254740993::int8 as big, count(*) from t", ["hi"]);
      eq(r.rows, [{ s: "hi", big: "9007199254740993", count: "2" }], "rows");
      return `connect ${ms} ms, query ${await timed(50, () => client.query("select 1"))} ms`;
    } finally {
      await client.end();
    }
  });
  await check("Pool interactive transaction with rollback", async () => {
    const pool = new Pool({ connectionString: url });
    const c = await pool.connect();
    try {
      await c.query("begin");
      await c.query("insert into t (k) values ('p')");
      await c.query("rollback");
      eq((await c.query("select count(*)::int as c from t where k = 'p'")).rows[0].c, 0, "rolled back");
    } finally {
      c.release();
      await pool.end();
    }
  });
  const T = pgTable("t", { id: bigint("id", { mode: "number" }).generatedAlwaysAsIdentity(), k: text("k").notNull() });
  await check("drizzle neon-http db.batch commit and rollback", async () => {
    const db = drizzle({ client: sql });
    const [ins, [{ c }]] = await db.batch([db.insert(T).values({ k: "z" }).returning({ k: T.k }), db.select({ c: count() }).from(T)]);
    eq([ins, c], [[{ k: "z" }], 3], "batch result");
    const err = await caught(db.batch([db.insert(T).values({ k: "y" }), db.insert(T).values({ k: "z" })]));
    const code = err.code ?? err.cause?.code;
    eq(code, "23505", "code");
    eq((await db.select({ c: count() }).from(T))[0].c, 3, "rolled back");
  });
  await check("proxy refuses non-loopback targets", async () => {
    const r = await fetch(`http://${proxy}/sql`, {
      method: "POST",
      body: '{"query":"select 1"}',
      headers: { "Neon-Connection-String": "postgresql://app:app@10.1.2.3:5432/x" },
    });
    eq(r.status, 403, "HTTP status");
    const sock = new ws(`ws://${proxy}/v1?address=example.com:5432`);
    const status = await new Promise((res) => {
      sock.on("unexpected-response", (_q, resp) => res(resp.statusCode));
      sock.on("open", () => res("open"));
      sock.on("error", () => res("error"));
    });
    eq(status, 403, "WS upgrade status");
  });
  console.log(
    `timing: HTTP query ${await timed(200, () => sql`select 1`)} ms, ` +
      `HTTP query+params ${await timed(200, () => sql`select * from t where k = ${"a"}`)} ms, ` +
      `batch of 3 ${await timed(100, () => sql.transaction([sql`select 1`, sql`select 2`, sql`select 3`]))} ms, ` +
      `Serializable write batch ${await timed(100, () =>
        sql.transaction([sql`insert into g (k) values ('b')`, sql`select count(*) from g`], { isolationLevel: "Serializable" }),
      )} ms (mean of sequential runs)`,
  );
}

let url = process.env.DATABASE_URL,
  proxyAddr = process.env.DB_PROXY;
const cleanup = [];
try {
  if (!url || !proxyAddr) {
    // Self-contained run: throwaway cluster + in-process proxy + a scratch database.
    const cluster = await startCluster({ port: Number(process.env.PG_PORT ?? 55432) });
    cleanup.push(() => cluster.stop());
    const proxy = await startProxy({ port: Number(process.env.NEON_LOCAL_PROXY_PORT ?? 5481) });
    cleanup.push(() => proxy.stop());
    await createDatabase("neon_probe");
    url = cluster.url("neon_probe");
    proxyAddr = `127.0.0.1:${proxy.port}`;
  } else {
    // Use a scratch database next to the given one, so the probe never touches real data.
    const u = new URL(url);
    const port = Number(u.port || 5432);
    await dropDatabase("neon_probe", { port });
    await createDatabase("neon_probe", { port });
    cleanup.push(() => dropDatabase("neon_probe", { port }));
    u.pathname = "/neon_probe";
    url = u.toString();
  }
  await probe(url, proxyAddr);
} catch (err) {
  failures++;
  console.log(`FAIL probe aborted: ${err.stack ?? err}`);
} finally {
  for (const fn of cleanup.reverse()) await fn().catch((e) => console.error(`cleanup: ${e.message}`));
}
console.log(failures ? `${failures} check(s) FAILED` : "all checks passed");
process.exit(failures ? 1 : 0);
