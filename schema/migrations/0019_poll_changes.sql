CREATE TABLE `post_changes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`post_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`thread_id` integer NOT NULL,
	`is_repost` integer DEFAULT false NOT NULL,
	`is_deletion` integer DEFAULT false NOT NULL,
	`mark` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `post_changes_mark` ON `post_changes` (`mark`);--> statement-breakpoint
ALTER TABLE `messages` ADD `deleted_mark` integer;--> statement-breakpoint
CREATE INDEX `messages_deleted` ON `messages` (`channel_id`,`deleted_mark`) WHERE deleted_mark is not null;