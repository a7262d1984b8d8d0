CREATE TABLE `stream_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`connection_id` text NOT NULL,
	`user_id` integer NOT NULL,
	`app_id` integer NOT NULL,
	`endpoint` text NOT NULL,
	`channel_id` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `stream_subscriptions_endpoint_user` ON `stream_subscriptions` (`endpoint`,`user_id`);--> statement-breakpoint
CREATE INDEX `stream_subscriptions_channel` ON `stream_subscriptions` (`channel_id`);--> statement-breakpoint
CREATE INDEX `stream_subscriptions_connection` ON `stream_subscriptions` (`connection_id`);