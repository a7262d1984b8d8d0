CREATE TABLE `channel_presence` (
	`channel_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`presence` text NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`channel_id`, `user_id`)
);
--> statement-breakpoint
CREATE INDEX `channel_presence_channel_expires` ON `channel_presence` (`channel_id`,`expires_at`);--> statement-breakpoint
ALTER TABLE `stream_subscriptions` ADD `target_id` integer;--> statement-breakpoint
ALTER TABLE `stream_subscriptions` ADD `flags` integer DEFAULT 0 NOT NULL;