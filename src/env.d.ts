// Secrets are not in wrangler.toml, so `wrangler types` cannot see them.
declare namespace Cloudflare {
  interface Env {
    /** Guards /v1/admin (from .dev.vars locally, a secret in production). */
    ADMIN_TOKEN: string;
    /** Postgres connection string, when DB_BACKEND is "postgres" (a secret in production). */
    DATABASE_URL?: string;
  }
}
