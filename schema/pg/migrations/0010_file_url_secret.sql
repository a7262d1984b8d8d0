-- File content URLs are signed (HMAC) instead of stored: issuing or renewing one writes nothing.
-- file_url_secret holds the generated signing key when no FILE_URL_SECRET is configured; the
-- per-URL token columns of files and derived_files (and their KV entries) are no longer used.
-- Deploy the Worker that no longer reads them before applying this migration.
CREATE TABLE "file_url_secret" (
	"id" integer PRIMARY KEY NOT NULL,
	"secret" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "derived_files" DROP COLUMN "url_token";--> statement-breakpoint
ALTER TABLE "derived_files" DROP COLUMN "url_expires_at";--> statement-breakpoint
ALTER TABLE "files" DROP COLUMN "url_token";--> statement-breakpoint
ALTER TABLE "files" DROP COLUMN "url_expires_at";