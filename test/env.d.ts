declare module "cloudflare:test" {
  interface ProvidedEnv extends Env {
    TEST_MIGRATIONS: D1Migration[];
    /** client/api.d.ts's text for a posted OpenAPI document (vitest.config.ts: generated in Node). */
    CLIENT_TYPES: Fetcher;
    /** Postgres read-replica tests only: makes the replica a copy of the primary as it is now. */
    PG_REPLICA_COPY?: Fetcher;
  }
}
declare module "*.yml?raw" {
  const text: string;
  export default text;
}
declare module "*.d.ts?raw" {
  const text: string;
  export default text;
}
