-- Hand-written (D1 only): tables read mostly by probes that usually find nothing become WITHOUT
-- ROWID tables. D1 counts a primary-key probe of a rowid table as a row read even when no row
-- has the key, and a probe of a WITHOUT ROWID table (a clustered index) only when one does:
-- every user a list renders probes `presence` (most users have none), every step of a home
-- timeline's walk probes `merged_authors` (most authors are not). Same columns, same keys; the
-- drizzle schema does not model the storage (docs/schema.md). No foreign keys name them.
CREATE TABLE `merged_authors_new` (
	`user_id` integer PRIMARY KEY NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `merged_authors_new` (`user_id`) SELECT `user_id` FROM `merged_authors`;
--> statement-breakpoint
DROP TABLE `merged_authors`;
--> statement-breakpoint
ALTER TABLE `merged_authors_new` RENAME TO `merged_authors`;
--> statement-breakpoint
-- Dropping `presence` drops its index and its counter triggers: both are made again below, as
-- schema/migrations/0000_init.sql and 0010_presence_versions.sql made them.
DROP TRIGGER IF EXISTS `presence_versions_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `presence_versions_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `presence_versions_delete`;
--> statement-breakpoint
CREATE TABLE `presence_new` (
	`user_id` integer PRIMARY KEY NOT NULL,
	`presence` text NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `presence_new` (`user_id`, `presence`, `last_seen_at`, `expires_at`) SELECT `user_id`, `presence`, `last_seen_at`, `expires_at` FROM `presence`;
--> statement-breakpoint
DROP TABLE `presence`;
--> statement-breakpoint
ALTER TABLE `presence_new` RENAME TO `presence`;
--> statement-breakpoint
CREATE INDEX `presence_expires` ON `presence` (`expires_at`);
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
