CREATE TABLE `presence_versions` (
	`shard` integer PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
-- Hand-written: the shards exist from the start, and triggers bump the shard of the user whose
-- presence or shown profile fields changed (see presenceVersions in schema/tables.ts).
INSERT INTO `presence_versions` (`shard`, `version`) VALUES (0,0),(1,0),(2,0),(3,0),(4,0),(5,0),(6,0),(7,0),(8,0),(9,0),(10,0),(11,0),(12,0),(13,0),(14,0),(15,0);
--> statement-breakpoint
CREATE TRIGGER `presence_versions_insert` AFTER INSERT ON `presence` BEGIN
  UPDATE presence_versions SET version = version + 1 WHERE shard = new.user_id % 16;
END;
--> statement-breakpoint
CREATE TRIGGER `presence_versions_update` AFTER UPDATE ON `presence` BEGIN
  UPDATE presence_versions SET version = version + 1 WHERE shard = new.user_id % 16;
END;
--> statement-breakpoint
CREATE TRIGGER `presence_versions_delete` AFTER DELETE ON `presence` BEGIN
  UPDATE presence_versions SET version = version + 1 WHERE shard = old.user_id % 16;
END;
--> statement-breakpoint
CREATE TRIGGER `presence_versions_users` AFTER UPDATE OF username, name, avatar_url, is_disabled ON `users` BEGIN
  UPDATE presence_versions SET version = version + 1 WHERE shard = new.id % 16;
END;
