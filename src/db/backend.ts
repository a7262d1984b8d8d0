import { env } from "cloudflare:workers";

/** The database a deployment runs on: D1 (embedded default) or Postgres through the Neon driver. */
export type Backend = "d1" | "postgres";

/**
 * Chosen once per isolate from configuration (`DB_BACKEND` in wrangler.toml, `.dev.vars` or a
 * secret): a deployment has one database, and the stores pick their tables and SQL fragments
 * at module load, so the choice must be known before any request.
 */
export const BACKEND: Backend = (env as { DB_BACKEND?: string }).DB_BACKEND === "postgres" ? "postgres" : "d1";

export const isPostgres = BACKEND === "postgres";

/**
 * Bound parameters one statement may carry: D1's limit (Postgres allows 65,535). Lists are passed
 * as one JSON parameter (src/db/dialect.ts `inList`, `jsonRows`, `jsonValues`); Postgres checks
 * this limit too (src/db/pg.ts), so a statement that would fail on D1 fails the same on both.
 */
export const MAX_BOUND_PARAMETERS = 100;
