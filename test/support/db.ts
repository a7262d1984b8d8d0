import { env } from "cloudflare:test";
import { isPostgres, openDb } from "../../src/db";

/** `?` and `?N` placeholders as Postgres's `$N`. */
const numbered = (q: string) => {
  let n = 0;
  return q.replace(/\?(\d+)?/g, (_, d: string | undefined) => `$${d ?? ++n}`);
};

/**
 * The part of the D1 binding the tests use for direct reads and set-up writes (prepare, bind,
 * first/all/run, batch), over the configured backend: D1 itself, or the same calls on Postgres
 * through the app's own executor, so a test's SQL runs unchanged wherever it is portable.
 */
function postgresAsD1(): D1Database {
  const db = openDb(env);
  const toResult = (native: unknown) => {
    const { results, changes } = db.exec.rows(native);
    return { results, success: true, meta: { changes } };
  };
  class Statement {
    constructor(
      readonly query: string,
      readonly params: unknown[] = [],
    ) {}
    bind(...params: unknown[]) {
      return new Statement(this.query, params);
    }
    async all() {
      const [r] = await db.exec.batch([{ sql: numbered(this.query), params: this.params }]);
      return toResult(r);
    }
    run() {
      return this.all();
    }
    async first(column?: string) {
      const row = (await this.all()).results[0];
      return row === undefined ? null : column ? row[column] : row;
    }
  }
  return {
    prepare: (q: string) => new Statement(q),
    batch: async (stmts: Statement[]) => (await db.exec.batch(stmts.map((s) => ({ sql: numbered(s.query), params: s.params })))).map(toResult),
  } as unknown as D1Database;
}

/** The test suite's direct database handle (D1 API) on the backend under test. */
export const DB: D1Database = isPostgres ? postgresAsD1() : env.DB;
