CREATE TABLE "presence_versions" (
	"shard" integer PRIMARY KEY NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
-- Hand-written: the shards exist from the start, and triggers bump the shard of the user whose
-- presence or shown profile fields changed (see presenceVersions in schema/tables.ts).
INSERT INTO "presence_versions" ("shard", "version") SELECT s, 0 FROM generate_series(0, 15) AS s;
--> statement-breakpoint
CREATE FUNCTION es_bump_presence_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'users' THEN
    UPDATE presence_versions SET version = version + 1 WHERE shard = NEW.id % 16;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE presence_versions SET version = version + 1 WHERE shard = OLD.user_id % 16;
  ELSE
    UPDATE presence_versions SET version = version + 1 WHERE shard = NEW.user_id % 16;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER presence_versions_presence AFTER INSERT OR UPDATE OR DELETE ON presence FOR EACH ROW EXECUTE FUNCTION es_bump_presence_version();
--> statement-breakpoint
CREATE TRIGGER presence_versions_users AFTER UPDATE OF username, name, avatar_url, is_disabled ON users FOR EACH ROW EXECUTE FUNCTION es_bump_presence_version();
