-- File content URLs are signed (HMAC) instead of stored: issuing or renewing one writes nothing.
-- file_url_secret holds the generated signing key when no FILE_URL_SECRET is configured. The
-- per-URL token columns of files and derived_files are no longer used; they stay until a later
-- migration, so a Worker deployed before this one keeps running while it is applied.
CREATE TABLE "file_url_secret" (
	"id" integer PRIMARY KEY NOT NULL,
	"secret" text NOT NULL,
	"created_at" bigint NOT NULL
);
