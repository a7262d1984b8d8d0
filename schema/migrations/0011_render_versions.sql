CREATE TABLE `render_versions` (
	`shard` integer PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
-- Hand-written: triggers that bump the counters of what a write changes in rendered responses
-- (see renderVersions in schema/tables.ts and src/stores/render-versions.ts): `kind * 2^40 + id`
-- per object, and one epoch row (shard < 256, picked at random) per write.
CREATE TRIGGER `render_versions_posts_insert` AFTER INSERT ON `posts` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 1099511627776 + new.id AS s UNION ALL SELECT 1099511627776 + new.repost_of AS s UNION ALL SELECT 8796093022272 + new.id % 64 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_posts_update` AFTER UPDATE ON `posts` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 1099511627776 + new.id AS s UNION ALL SELECT 1099511627776 + new.repost_of AS s UNION ALL SELECT 8796093022272 + new.id % 64 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_posts_delete` AFTER DELETE ON `posts` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 1099511627776 + old.id AS s UNION ALL SELECT 1099511627776 + old.repost_of AS s UNION ALL SELECT 8796093022272 + old.id % 64 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_users_update` AFTER UPDATE ON `users` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 2199023255552 + new.id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_users_delete` AFTER DELETE ON `users` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 2199023255552 + old.id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_users_visibility_update` AFTER UPDATE OF type, is_disabled ON `users` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 8796093022210 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_apps_update` AFTER UPDATE ON `apps` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 3298534883328 + new.id AS s UNION ALL SELECT 8796093022214 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_apps_delete` AFTER DELETE ON `apps` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 3298534883328 + old.id AS s UNION ALL SELECT 8796093022214 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_follows_insert` AFTER INSERT ON `follows` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + new.follower_id AS s UNION ALL SELECT 4398046511104 + new.followed_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_follows_delete` AFTER DELETE ON `follows` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + old.follower_id AS s UNION ALL SELECT 4398046511104 + old.followed_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_user_mutes_insert` AFTER INSERT ON `user_mutes` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT 4398046511104 + new.muted_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_user_mutes_delete` AFTER DELETE ON `user_mutes` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + old.user_id AS s UNION ALL SELECT 4398046511104 + old.muted_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_user_blocks_insert` AFTER INSERT ON `user_blocks` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT 4398046511104 + new.blocked_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_user_blocks_delete` AFTER DELETE ON `user_blocks` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + old.user_id AS s UNION ALL SELECT 4398046511104 + old.blocked_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_bookmarks_insert` AFTER INSERT ON `bookmarks` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT 1099511627776 + new.post_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_bookmarks_update` AFTER UPDATE ON `bookmarks` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT 1099511627776 + new.post_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_bookmarks_delete` AFTER DELETE ON `bookmarks` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + old.user_id AS s UNION ALL SELECT 1099511627776 + old.post_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_markers_insert` AFTER INSERT ON `markers` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_markers_update` AFTER UPDATE ON `markers` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_markers_delete` AFTER DELETE ON `markers` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 4398046511104 + old.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_user_badges_insert` AFTER INSERT ON `user_badges` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 2199023255552 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_user_badges_update` AFTER UPDATE ON `user_badges` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 2199023255552 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_user_badges_delete` AFTER DELETE ON `user_badges` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 2199023255552 + old.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_badges_update` AFTER UPDATE ON `badges` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 8796093022211 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_badges_delete` AFTER DELETE ON `badges` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 8796093022211 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_interaction_groups_insert` AFTER INSERT ON `interaction_groups` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 5497558138880 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_interaction_groups_update` AFTER UPDATE ON `interaction_groups` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 5497558138880 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_interaction_groups_delete` AFTER DELETE ON `interaction_groups` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 5497558138880 + old.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_polls_insert` AFTER INSERT ON `polls` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 7696581394432 + new.id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_polls_update` AFTER UPDATE ON `polls` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 7696581394432 + new.id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_polls_delete` AFTER DELETE ON `polls` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 7696581394432 + old.id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_poll_options_insert` AFTER INSERT ON `poll_options` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 7696581394432 + new.poll_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_poll_options_update` AFTER UPDATE ON `poll_options` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 7696581394432 + new.poll_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_poll_options_delete` AFTER DELETE ON `poll_options` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 7696581394432 + old.poll_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_poll_responses_insert` AFTER INSERT ON `poll_responses` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 7696581394432 + new.poll_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_poll_responses_update` AFTER UPDATE ON `poll_responses` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 7696581394432 + new.poll_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_poll_responses_delete` AFTER DELETE ON `poll_responses` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 7696581394432 + old.poll_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_channels_insert` AFTER INSERT ON `channels` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.id AS s UNION ALL SELECT 8796093022213 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_channels_update` AFTER UPDATE ON `channels` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.id AS s UNION ALL SELECT 8796093022213 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_channels_delete` AFTER DELETE ON `channels` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + old.id AS s UNION ALL SELECT 8796093022213 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_messages_insert` AFTER INSERT ON `messages` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.channel_id AS s UNION ALL SELECT 8796093022464 + new.id % 64 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_messages_update` AFTER UPDATE ON `messages` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.channel_id AS s UNION ALL SELECT 8796093022464 + new.id % 64 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_messages_delete` AFTER DELETE ON `messages` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + old.channel_id AS s UNION ALL SELECT 8796093022464 + old.id % 64 AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_subscriptions_insert` AFTER INSERT ON `subscriptions` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.channel_id AS s UNION ALL SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_subscriptions_update` AFTER UPDATE ON `subscriptions` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.channel_id AS s UNION ALL SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_subscriptions_delete` AFTER DELETE ON `subscriptions` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + old.channel_id AS s UNION ALL SELECT 4398046511104 + old.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_channel_acl_insert` AFTER INSERT ON `channel_acl` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.channel_id AS s UNION ALL SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_channel_acl_update` AFTER UPDATE ON `channel_acl` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.channel_id AS s UNION ALL SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_channel_acl_delete` AFTER DELETE ON `channel_acl` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + old.channel_id AS s UNION ALL SELECT 4398046511104 + old.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_channel_mutes_insert` AFTER INSERT ON `channel_mutes` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.channel_id AS s UNION ALL SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_channel_mutes_update` AFTER UPDATE ON `channel_mutes` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + new.channel_id AS s UNION ALL SELECT 4398046511104 + new.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `render_versions_channel_mutes_delete` AFTER DELETE ON `channel_mutes` BEGIN
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM (SELECT 6597069766656 + old.channel_id AS s UNION ALL SELECT 4398046511104 + old.user_id AS s UNION ALL SELECT abs(random()) % 256 AS s) WHERE s IS NOT NULL
    ON CONFLICT (shard) DO UPDATE SET version = version + 1;
END;
