// Secrets are not in wrangler.toml, so `wrangler types` cannot see them.
declare namespace Cloudflare {
  interface Env {
    /** Guards /v1/admin (from .dev.vars locally, a secret in production). */
    ADMIN_TOKEN: string;
    /** Postgres connection string, when DB_BACKEND is "postgres" (a secret in production). */
    DATABASE_URL?: string;
    /**
     * Optional Postgres read replica (e.g. a Neon read-replica compute): GET requests' read-only
     * work goes there under the read-your-writes rule of src/db/pg-replica.ts (a secret in production).
     */
    DATABASE_READ_URL?: string;
  }
}
