CREATE TABLE `app_streams` (
	`app_id` integer NOT NULL,
	`key` text NOT NULL,
	`object_types` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `key`)
);
--> statement-breakpoint
CREATE TABLE `apps` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`client_id` text NOT NULL,
	`name` text NOT NULL,
	`url` text DEFAULT '' NOT NULL,
	`client_secret_hash` text NOT NULL,
	`password_grant_secret_hash` text NOT NULL,
	`owner_id` integer,
	`is_public` integer DEFAULT true NOT NULL,
	`logo_url` text,
	`description` text,
	`posts` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`deleted_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_client_id` ON `apps` (`client_id`);--> statement-breakpoint
CREATE INDEX `apps_owner` ON `apps` (`owner_id`);--> statement-breakpoint
CREATE TABLE `authorizations` (
	`user_id` integer NOT NULL,
	`app_id` integer NOT NULL,
	`scopes` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `app_id`)
);
--> statement-breakpoint
CREATE TABLE `bookmarks` (
	`user_id` integer NOT NULL,
	`post_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `post_id`)
);
--> statement-breakpoint
CREATE INDEX `bookmarks_post` ON `bookmarks` (`post_id`);--> statement-breakpoint
CREATE TABLE `channel_acl` (
	`channel_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`level` text NOT NULL,
	PRIMARY KEY(`channel_id`, `level`, `user_id`)
);
--> statement-breakpoint
CREATE INDEX `channel_acl_user` ON `channel_acl` (`user_id`,`channel_id`);--> statement-breakpoint
CREATE TABLE `channel_mutes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`channel_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `channel_mutes_user_channel` ON `channel_mutes` (`user_id`,`channel_id`);--> statement-breakpoint
CREATE TABLE `channels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` text NOT NULL,
	`owner_id` integer NOT NULL,
	`app_id` integer NOT NULL,
	`pm_key` text,
	`read_public` integer DEFAULT false NOT NULL,
	`read_any_user` integer DEFAULT false NOT NULL,
	`write_any_user` integer DEFAULT false NOT NULL,
	`read_immutable` integer DEFAULT false NOT NULL,
	`write_immutable` integer DEFAULT false NOT NULL,
	`full_immutable` integer DEFAULT false NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`raw` text,
	`created_at` integer NOT NULL,
	`messages` integer DEFAULT 0 NOT NULL,
	`subscribers` integer DEFAULT 0 NOT NULL,
	`recent_message_id` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `channels_pm_key` ON `channels` (`pm_key`);--> statement-breakpoint
CREATE INDEX `channels_owner` ON `channels` (`owner_id`);--> statement-breakpoint
CREATE INDEX `channels_type` ON `channels` (`type`);--> statement-breakpoint
CREATE TABLE `derived_files` (
	`file_id` integer NOT NULL,
	`key` text NOT NULL,
	`name` text NOT NULL,
	`mime_type` text,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`storage_key` text NOT NULL,
	`image_info` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`file_id`, `key`)
);
--> statement-breakpoint
CREATE TABLE `files` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`app_id` integer NOT NULL,
	`kind` text DEFAULT 'other' NOT NULL,
	`type` text NOT NULL,
	`name` text NOT NULL,
	`mime_type` text,
	`size` integer DEFAULT 0 NOT NULL,
	`sha256` text,
	`is_complete` integer DEFAULT false NOT NULL,
	`is_public` integer DEFAULT false NOT NULL,
	`is_deleted` integer DEFAULT false NOT NULL,
	`storage_key` text,
	`file_token` text NOT NULL,
	`file_token_read` text NOT NULL,
	`media_info` text,
	`raw` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `files_user` ON `files` (`user_id`,`id`);--> statement-breakpoint
CREATE TABLE `follows` (
	`follower_id` integer NOT NULL,
	`followed_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`follower_id`, `followed_id`)
);
--> statement-breakpoint
CREATE INDEX `follows_followed` ON `follows` (`followed_id`);--> statement-breakpoint
CREATE TABLE `interaction_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`group_id` integer NOT NULL,
	`actor_id` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `interaction_events_group` ON `interaction_events` (`group_id`,`id`);--> statement-breakpoint
CREATE TABLE `interaction_groups` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`action` text NOT NULL,
	`object_id` integer NOT NULL,
	`latest_event_id` integer NOT NULL,
	`latest_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `interaction_groups_page` ON `interaction_groups` (`user_id`,`latest_event_id`);--> statement-breakpoint
CREATE INDEX `interaction_groups_object` ON `interaction_groups` (`user_id`,`action`,`object_id`,`latest_at`);--> statement-breakpoint
CREATE TABLE `markers` (
	`user_id` integer NOT NULL,
	`name` text NOT NULL,
	`position` integer NOT NULL,
	`last_read_id` integer NOT NULL,
	`percentage` integer DEFAULT 0 NOT NULL,
	`version` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `name`)
);
--> statement-breakpoint
CREATE TABLE `message_facets` (
	`message_id` integer NOT NULL,
	`facet` text NOT NULL,
	`value` text NOT NULL,
	PRIMARY KEY(`facet`, `value`, `message_id`)
);
--> statement-breakpoint
CREATE INDEX `message_facets_message` ON `message_facets` (`message_id`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`channel_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`app_id` integer NOT NULL,
	`thread_id` integer NOT NULL,
	`reply_to` integer,
	`text` text,
	`html` text,
	`entities` text,
	`is_nsfw` integer DEFAULT false NOT NULL,
	`is_sticky` integer DEFAULT false NOT NULL,
	`is_deleted` integer DEFAULT false NOT NULL,
	`poll_id` integer,
	`raw` text,
	`created_at` integer NOT NULL,
	`replies` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `messages_channel` ON `messages` (`channel_id`,`id`);--> statement-breakpoint
CREATE INDEX `messages_thread` ON `messages` (`thread_id`,`id`);--> statement-breakpoint
CREATE INDEX `messages_user` ON `messages` (`user_id`,`id`);--> statement-breakpoint
CREATE INDEX `messages_reply_to` ON `messages` (`reply_to`);--> statement-breakpoint
CREATE TABLE `oauth_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`app_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`scopes` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `operations` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`status` text NOT NULL,
	`user_id` integer,
	`detail` text,
	`created_at` integer NOT NULL,
	`ended_at` integer
);
--> statement-breakpoint
CREATE TABLE `poll_options` (
	`poll_id` integer NOT NULL,
	`position` integer NOT NULL,
	`text` text NOT NULL,
	`respondents` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`poll_id`, `position`)
);
--> statement-breakpoint
CREATE TABLE `poll_responses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`poll_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`positions` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `poll_responses_poll_user` ON `poll_responses` (`poll_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `poll_responses_user` ON `poll_responses` (`user_id`,`id`);--> statement-breakpoint
CREATE TABLE `polls` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`app_id` integer NOT NULL,
	`type` text NOT NULL,
	`prompt` text NOT NULL,
	`content` text,
	`is_anonymous` integer DEFAULT false NOT NULL,
	`is_public` integer DEFAULT false NOT NULL,
	`max_options` integer DEFAULT 1 NOT NULL,
	`poll_token` text NOT NULL,
	`is_deleted` integer DEFAULT false NOT NULL,
	`raw` text,
	`created_at` integer NOT NULL,
	`closed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `polls_user` ON `polls` (`user_id`,`id`);--> statement-breakpoint
CREATE TABLE `post_mentions` (
	`post_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	PRIMARY KEY(`user_id`, `post_id`)
);
--> statement-breakpoint
CREATE TABLE `post_revisions` (
	`post_id` integer NOT NULL,
	`revision` integer NOT NULL,
	`text` text,
	`html` text,
	`entities` text,
	`is_nsfw` integer DEFAULT false NOT NULL,
	`raw` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`post_id`, `revision`)
);
--> statement-breakpoint
CREATE TABLE `posts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`app_id` integer NOT NULL,
	`thread_id` integer NOT NULL,
	`reply_to` integer,
	`repost_of` integer,
	`text` text,
	`html` text,
	`entities` text,
	`is_nsfw` integer DEFAULT false NOT NULL,
	`is_deleted` integer DEFAULT false NOT NULL,
	`is_revised` integer DEFAULT false NOT NULL,
	`raw` text,
	`created_at` integer NOT NULL,
	`revised_at` integer,
	`bookmarks` integer DEFAULT 0 NOT NULL,
	`replies` integer DEFAULT 0 NOT NULL,
	`reposts` integer DEFAULT 0 NOT NULL,
	`threads` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `posts_user` ON `posts` (`user_id`,`id`);--> statement-breakpoint
CREATE INDEX `posts_thread` ON `posts` (`thread_id`,`id`);--> statement-breakpoint
CREATE INDEX `posts_reply_to` ON `posts` (`reply_to`);--> statement-breakpoint
CREATE INDEX `posts_repost_of` ON `posts` (`repost_of`,`user_id`);--> statement-breakpoint
CREATE INDEX `posts_user_text` ON `posts` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `presence` (
	`user_id` integer PRIMARY KEY NOT NULL,
	`presence` text NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `presence_expires` ON `presence` (`expires_at`);--> statement-breakpoint
CREATE TABLE `reports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`channel_id` integer NOT NULL,
	`message_id` integer NOT NULL,
	`reporter_id` integer NOT NULL,
	`reason` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `reports_message` ON `reports` (`message_id`);--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`channel_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `subscriptions_user_channel` ON `subscriptions` (`user_id`,`channel_id`);--> statement-breakpoint
CREATE INDEX `subscriptions_channel` ON `subscriptions` (`channel_id`);--> statement-breakpoint
CREATE TABLE `tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`token_hash` text NOT NULL,
	`app_id` integer NOT NULL,
	`user_id` integer,
	`scopes` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_day` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tokens_hash` ON `tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `tokens_user` ON `tokens` (`user_id`);--> statement-breakpoint
CREATE INDEX `tokens_app` ON `tokens` (`app_id`);--> statement-breakpoint
CREATE TABLE `user_activity` (
	`day` text NOT NULL,
	`user_id` integer NOT NULL,
	PRIMARY KEY(`day`, `user_id`)
);
--> statement-breakpoint
CREATE TABLE `user_blocks` (
	`user_id` integer NOT NULL,
	`blocked_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `blocked_id`)
);
--> statement-breakpoint
CREATE INDEX `user_blocks_blocked` ON `user_blocks` (`blocked_id`);--> statement-breakpoint
CREATE TABLE `user_mutes` (
	`user_id` integer NOT NULL,
	`muted_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `muted_id`)
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`password_hash` text NOT NULL,
	`name` text,
	`email` text,
	`type` text DEFAULT 'human' NOT NULL,
	`locale` text DEFAULT 'en_US' NOT NULL,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`description` text,
	`description_markdown` text,
	`avatar_url` text,
	`cover_url` text,
	`is_disabled` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`followers` integer DEFAULT 0 NOT NULL,
	`following` integer DEFAULT 0 NOT NULL,
	`posts` integer DEFAULT 0 NOT NULL,
	`bookmarks` integer DEFAULT 0 NOT NULL,
	`clients` integer DEFAULT 0 NOT NULL,
	`storage_used` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username` ON `users` (`username`);