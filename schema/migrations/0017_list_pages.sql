-- Hand-written (issue 27), before the unique index: keep each actor's latest event of a group only,
-- as the writes do from now on (a group's newest events are then its newest actors).
DELETE FROM interaction_events WHERE id NOT IN (SELECT max(id) FROM interaction_events GROUP BY group_id, actor_id);--> statement-breakpoint
DROP INDEX `interaction_events_group`;--> statement-breakpoint
CREATE UNIQUE INDEX `interaction_events_actor` ON `interaction_events` (`group_id`,`actor_id`);--> statement-breakpoint
CREATE INDEX `interaction_events_group` ON `interaction_events` (`group_id`,`id`,`actor_id`);--> statement-breakpoint
ALTER TABLE `posts` ADD `is_newcomer` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `posts` ADD `is_conversation` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `posts_newcomer` ON `posts` (`id`) WHERE is_newcomer = 1;--> statement-breakpoint
CREATE INDEX `posts_conversation` ON `posts` (`id`) WHERE is_conversation = 1;--> statement-breakpoint
CREATE INDEX `posts_popular` ON `posts` (`id`) WHERE replies + reposts + bookmarks >= 3;--> statement-breakpoint
CREATE INDEX `posts_unanswered` ON `posts` (`id`) WHERE replies = 0 and reposts = 0 and bookmarks = 0;--> statement-breakpoint
CREATE INDEX `posts_256` ON `posts` (`id`) WHERE length(text) = 256;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `activity` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `subscriptions` ADD `is_unread` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `subscriptions_user_activity` ON `subscriptions` (`user_id`,`activity`,`channel_id`);--> statement-breakpoint
CREATE INDEX `subscriptions_user_unread` ON `subscriptions` (`user_id`,`channel_id`) WHERE is_unread = 1;--> statement-breakpoint
CREATE INDEX `channel_mutes_user` ON `channel_mutes` (`user_id`,`id`,`channel_id`);--> statement-breakpoint
-- Hand-written backfill of the explore flags (issue 27), the rules the writes keep from now on:
-- an original post among the first 50 originals of its author; a thread root with a live reply by someone else.
UPDATE posts SET is_newcomer = 1 WHERE repost_of IS NULL
  AND (SELECT e.id FROM posts e WHERE e.user_id = posts.user_id AND e.id < posts.id AND e.repost_of IS NULL ORDER BY e.id LIMIT 1 OFFSET 49) IS NULL;--> statement-breakpoint
UPDATE posts SET is_conversation = 1 WHERE EXISTS (SELECT 1 FROM posts cr WHERE cr.thread_id = posts.id AND cr.id <> posts.id
  AND cr.user_id <> posts.user_id AND cr.is_deleted = 0);
--> statement-breakpoint
-- Hand-written backfill (issue 27): each subscription keeps its channel's activity key (stores/channel-sql activityKeySql).
UPDATE subscriptions SET activity = coalesce((SELECT coalesce((SELECT am.created_at FROM messages am WHERE am.id = ak.recent_message_id), ak.created_at) * 1048576 + ak.id % 1048576
  FROM channels ak WHERE ak.id = subscriptions.channel_id), 0);
--> statement-breakpoint
-- Hand-written backfill (issue 27): unread while the user's channel marker is below the channel's newest live message
-- (stores/channel-sql unreadFlagSql), as the message and marker writes keep it from now on.
UPDATE subscriptions SET is_unread = 1 WHERE EXISTS (SELECT 1 FROM channels uc WHERE uc.id = subscriptions.channel_id
  AND uc.recent_message_id IS NOT NULL AND uc.recent_message_id >
    coalesce((SELECT uf.position FROM markers uf WHERE uf.user_id = subscriptions.user_id AND uf.name = 'channel:' || uc.id), -1));
