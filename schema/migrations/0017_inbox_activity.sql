ALTER TABLE `subscriptions` ADD `activity` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `subscriptions_user_activity` ON `subscriptions` (`user_id`,`activity`,`channel_id`);--> statement-breakpoint
CREATE INDEX `channel_mutes_user` ON `channel_mutes` (`user_id`,`id`,`channel_id`);--> statement-breakpoint
-- Hand-written backfill (issue 27): each subscription keeps its channel's activity key (stores/channel-sql activityKeySql).
UPDATE subscriptions SET activity = coalesce((SELECT coalesce((SELECT am.created_at FROM messages am WHERE am.id = ak.recent_message_id), ak.created_at) * 1048576 + ak.id % 1048576
  FROM channels ak WHERE ak.id = subscriptions.channel_id), 0);
