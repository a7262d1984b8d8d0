import { defineConfig } from "drizzle-kit";

// Postgres (Neon) schema: generated migrations plus hand-written ones (`--custom`, e.g. the
// message search migration), applied in journal order. The D1 schema is drizzle.config.ts.
export default defineConfig({
  dialect: "postgresql",
  schema: "./schema/pg/tables.ts",
  out: "./schema/pg/migrations",
  migrations: { prefix: "index" },
});
