import { defineConfig } from "drizzle-kit";

// Migrations are flat numbered .sql files that wrangler applies (`wrangler d1 migrations apply`)
// and the tests apply with applyD1Migrations.
export default defineConfig({
  dialect: "sqlite",
  schema: "./schema/tables.ts",
  out: "./schema/migrations",
  migrations: { prefix: "index" },
});
