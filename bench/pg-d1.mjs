// Postgres for `BENCH_DB=pg npm run bench`: a throwaway cluster and the local stand-in for Neon's
// proxies (scripts/pg/), a freshly migrated database, the Worker bindings that point at them, and a
// D1-like handle (prepare/bind/first/all/run, batch = one transaction) over node-postgres, so
// bench/seed.mjs writes straight into the database as it does into D1.
import { rmSync } from "node:fs";
import pg from "pg";
import { freePort, migrate, startCluster, startProxy, stopCluster } from "../scripts/pg/cluster.mjs";

const DB = "bench";

// Numbers as D1 gives them: int8 (ids, count(*)) and numeric come back as strings from pg by default.
const types = { getTypeParser: (oid, format) => (oid === 20 || oid === 1700 ? Number : pg.types.getTypeParser(oid, format)) };

// D1's `?` and `?N` placeholders become `$N`; string literals are left alone.
const toPg = (sql) => {
  let n = 0;
  return sql.replace(/'(?:[^']|'')*'|\?(\d*)/g, (m, d) => (m[0] === "'" ? m : `$${d || ++n}`));
};

/** The part of D1's API that bench/seed.mjs and bench/run.mjs use, on one pg client. */
function d1Like(client) {
  const statement = (sql, params = []) => {
    const exec = async () => {
      const r = await client.query(toPg(sql), params);
      return { results: r.rows ?? [], success: true, meta: { changes: r.rowCount ?? 0 } };
    };
    return {
      bind: (...args) => statement(sql, args),
      all: exec,
      run: exec,
      async first(col) {
        const row = (await exec()).results[0] ?? null;
        return col && row ? row[col] : row;
      },
    };
  };
  return {
    prepare: (sql) => statement(sql),
    async batch(statements) {
      await client.query("BEGIN");
      try {
        const out = [];
        for (const s of statements) out.push(await s.all());
        await client.query("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      }
    },
  };
}

/** BENCH_PG_KEEP=1: leave the cluster (seeded, as the run left it) running after the bench, to EXPLAIN its statements. */
const KEEP = process.env.BENCH_PG_KEEP === "1";
const EXPLAIN_MS = process.env.BENCH_PG_EXPLAIN_MS;

/** The statement statistics of the rows-read pass, with planning time (paid on every request over Neon's HTTP endpoint). */
const statsSettings = { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track_planning": "on" };

/**
 * Server settings for logging statements with their parameters and plans as EXPLAIN (ANALYZE,
 * BUFFERS) gives them (auto_explain), to the cluster's server.log; the threshold is set after the
 * seed (`afterSeed`), so only the bench's own requests are logged. Instrumenting costs time
 * itself: for finding plans, not for figures.
 */
const explainSettings = {
  ...statsSettings,
  shared_preload_libraries: "pg_stat_statements,auto_explain",
  log_parameter_max_length: -1,
  "auto_explain.log_analyze": "on",
  "auto_explain.log_buffers": "on",
  "auto_explain.log_nested_statements": "on",
};

const keepHint = (c) =>
  `data dir ${c.dir}, log ${c.dir}/server.log; psql -h ${c.dir} -p ${c.port} -U postgres ${DB}; stop: node scripts/pg/cluster.mjs stop --dir ${c.dir}`;

/**
 * Starts the cluster and the proxy on free ports and migrates a fresh database. Both are stopped by
 * stop(), and also when this process exits any other way (error, SIGINT/SIGTERM): the cluster is a
 * daemon that would otherwise outlive it; the proxy is a child that ends with its IPC channel.
 */
export async function startPostgres() {
  let cluster, proxy, client, admin;
  const stopNow = () => {
    if (cluster && KEEP) console.error(`bench: Postgres kept running (BENCH_PG_KEEP=1): ${keepHint(cluster)}`);
    else if (cluster) stopCluster(cluster.dir), rmSync(cluster.dir, { recursive: true, force: true });
    cluster = undefined;
  };
  process.once("exit", stopNow);
  for (const [sig, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ])
    process.once(sig, () => process.exit(code));

  // pg_stat_statements: the statement statistics of the rows-read pass (bench/mix-run.mjs).
  // BENCH_PG_EXPLAIN_MS: auto_explain too (plans with timings and buffers in server.log).
  const settings = EXPLAIN_MS === undefined ? statsSettings : explainSettings;
  cluster = await startCluster({ port: await freePort(), settings });
  const port = cluster.port;
  await migrate({ db: DB, port });
  proxy = await startProxy({ port: await freePort(), child: true });
  client = new pg.Client({ connectionString: cluster.url(DB), types });
  // The seeding connection idles after seeding; if the server drops it, say so instead of crashing the run.
  client.on("error", (e) => console.error(`bench: the seeding connection to Postgres failed: ${e.message}`));
  await client.connect();
  // The statement statistics need the superuser (the app role may not create or reset them).
  admin = new pg.Client({ host: cluster.dir, port, user: "postgres", database: DB, types });
  admin.on("error", (e) => console.error(`bench: the statistics connection to Postgres failed: ${e.message}`));
  await admin.connect();
  await admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  return {
    name: "Postgres",
    label: `Postgres (Neon driver through the local proxy, cluster 127.0.0.1:${port})`,
    bindings: { DB_BACKEND: "postgres", DATABASE_URL: cluster.url(DB), DB_PROXY: `127.0.0.1:${proxy.port}` },
    db: d1Like(client),
    /**
     * After the seed: identity sequences past the explicit ids it inserted (else the API's inserts
     * collide), then fresh planner statistics.
     */
    async afterSeed() {
      const { rows } = await client.query(
        "SELECT table_name AS t FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'id' AND is_identity = 'YES'",
      );
      for (const { t } of rows) {
        await client.query(`SELECT setval(pg_get_serial_sequence($1, 'id'), max(id)) FROM "${t}" HAVING max(id) IS NOT NULL`, [t]);
      }
      await client.query("VACUUM ANALYZE"); // settled: seeding's counter upserts leave dead rows autovacuum would clean mid-run
      if (EXPLAIN_MS !== undefined) {
        const ms = Number(EXPLAIN_MS);
        for (const name of ["log_min_duration_statement", "auto_explain.log_min_duration"]) await admin.query(`ALTER SYSTEM SET ${name} = ${ms}`);
        await admin.query("SELECT pg_reload_conf()");
      }
    },
    /** Statement statistics since the last call: total rows returned/affected, buffers touched, execution and planning time. */
    async statements() {
      const { rows } = await admin.query(
        `SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(rows), 0) AS rows, coalesce(sum(shared_blks_hit + shared_blks_read), 0) AS blocks,
           coalesce(sum(total_exec_time), 0) AS ms, coalesce(sum(total_plan_time), 0) AS plan_ms FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query !~* 'pg_stat_statements' AND query !~* '^\\s*(discard|reset|begin|commit|rollback|set )'`,
      );
      await admin.query("SELECT pg_stat_statements_reset()");
      return rows[0];
    },
    async stop() {
      await admin?.end().catch(() => {});
      await client?.end().catch(() => {});
      client = undefined;
      await proxy?.stop().catch(() => {});
      proxy = undefined;
      stopNow();
    },
  };
}
