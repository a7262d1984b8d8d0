import path from "node:path";
import { defineWorkersConfig, readD1Migrations } from "@cloudflare/vitest-pool-workers/config";
import { clientTypes } from "./scripts/client-types.mjs";
import { copyDatabase } from "./scripts/pg/cluster.mjs";

// The backend under test: D1, or Postgres when scripts/test.mjs (`npm run test:pg`) has started a
// cluster and the local Neon proxy and passes their addresses.
const postgres =
  process.env.DB_BACKEND === "postgres" ? { DB_BACKEND: "postgres", DATABASE_URL: process.env.DATABASE_URL ?? "", DB_PROXY: process.env.DB_PROXY ?? "" } : {};
// With a read replica (scripts/test.mjs gives one to the read-replica tests): DATABASE_READ_URL, and
// a service that makes the replica a copy of the primary as it is now (then it lags again).
const replica = process.env.DB_BACKEND === "postgres" && process.env.DATABASE_READ_URL ? process.env.DATABASE_READ_URL : "";
const dbName = (url: string) => new URL(url).pathname.slice(1);
const copyPrimaryToReplica = async () => {
  const port = Number(new URL(replica).port);
  await copyDatabase(dbName(process.env.DATABASE_URL ?? ""), dbName(replica), { port });
  return new Response("copied");
};

export default defineWorkersConfig(async () => {
  const migrations = await readD1Migrations(path.join(__dirname, "schema/migrations"));
  return {
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/setup/apply-migrations.ts"],
      testTimeout: 30_000,
      poolOptions: {
        workers: {
          // `npm test` (scripts/test.mjs) runs each file in its own process; see there why.
          // Tests create their own users and apps; isolated storage is off because it does not
          // get along with open WebSockets and Durable Object alarms.
          singleWorker: true,
          isolatedStorage: false,
          wrangler: { configPath: "./wrangler.toml" },
          miniflare: {
            // Runs in Node, where openapi-typescript works (it does not load in workerd): the
            // typed-client test posts the served OpenAPI document and gets client/api.d.ts's text back.
            serviceBindings: {
              CLIENT_TYPES: async (request: Request) => new Response(await clientTypes(await request.json())),
              ...(replica ? { PG_REPLICA_COPY: copyPrimaryToReplica } : {}),
            },
            bindings: {
              TEST_MIGRATIONS: migrations,
              ADMIN_TOKEN: "test-admin-token",
              ALLOW_TEST_CLOCK: "1",
              // Not from a developer's .dev.vars (which the pool reads too): the limits are under test.
              RATE_LIMITS: "1",
              // Cheap password hashes: the suite creates hundreds of users (production: 100000).
              PASSWORD_ITERATIONS: "1000",
              ...postgres,
              ...(replica ? { DATABASE_READ_URL: replica } : {}),
            },
          },
        },
      },
    },
  };
});
