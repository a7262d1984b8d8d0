// Secrets are not in wrangler.toml, so `wrangler types` cannot see them.
declare namespace Cloudflare {
  interface Env {
    /** Guards /v1/admin (from .dev.vars locally, a secret in production). */
    ADMIN_TOKEN: string;
  }
}
