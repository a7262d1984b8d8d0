import path from "node:path";
import { defineWorkersConfig, readD1Migrations } from "@cloudflare/vitest-pool-workers/config";

export default defineWorkersConfig(async () => {
  const migrations = await readD1Migrations(path.join(__dirname, "schema/migrations"));
  return {
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/setup/apply-migrations.ts"],
      testTimeout: 20_000,
      poolOptions: {
        workers: {
          singleWorker: true,
          // Tests create their own users/apps, so they can share one database; isolated
          // storage does not get along with open WebSockets and Durable Object alarms.
          isolatedStorage: false,
          wrangler: { configPath: "./wrangler.toml" },
          miniflare: {
            bindings: {
              TEST_MIGRATIONS: migrations,
              ADMIN_TOKEN: "test-admin-token",
              ALLOW_TEST_CLOCK: "1",
            },
          },
        },
      },
    },
  };
});
