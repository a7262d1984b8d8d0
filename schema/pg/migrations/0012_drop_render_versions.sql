-- Hand-written: the triggers and the trigger function of migration 0008_render_versions (the
-- function's body names the table, which Postgres does not track, so CASCADE would not drop
-- them); dropped before the table. The kept-response cache they fed is gone (issue 27).
DROP TRIGGER IF EXISTS render_versions_posts ON posts;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_users ON users;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_users_visibility ON users;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_apps ON apps;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_follows ON follows;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_user_mutes ON user_mutes;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_user_blocks ON user_blocks;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_bookmarks ON bookmarks;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_markers ON markers;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_user_badges ON user_badges;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_badges ON badges;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_interaction_groups ON interaction_groups;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_polls ON polls;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_poll_options ON poll_options;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_poll_responses ON poll_responses;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_channels ON channels;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_messages ON messages;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_subscriptions ON subscriptions;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_channel_acl ON channel_acl;
--> statement-breakpoint
DROP TRIGGER IF EXISTS render_versions_channel_mutes ON channel_mutes;
--> statement-breakpoint
DROP FUNCTION IF EXISTS es_bump_render_versions();
--> statement-breakpoint
DROP TABLE "render_versions" CASCADE;
