import path from "node:path";
import { defineWorkersConfig, readD1Migrations } from "@cloudflare/vitest-pool-workers/config";

// Performance checks that seed large data sets: kept out of `npm test`.
// Run: npx vitest run -c vitest.perf.config.ts
export default defineWorkersConfig(async () => {
  const migrations = await readD1Migrations(path.join(__dirname, "schema/migrations"));
  return {
    test: {
      include: ["test/perf/**/*.perf.ts"],
      setupFiles: ["./test/setup/apply-migrations.ts"],
      testTimeout: 300_000,
      hookTimeout: 300_000,
      poolOptions: {
        workers: {
          singleWorker: true,
          isolatedStorage: false,
          wrangler: { configPath: "./wrangler.toml" },
          miniflare: {
            bindings: { TEST_MIGRATIONS: migrations, ADMIN_TOKEN: "test-admin-token", ALLOW_TEST_CLOCK: "1", RATE_LIMITS: "0" },
          },
        },
      },
    },
  };
});
