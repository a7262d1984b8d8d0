-- Hand-written: the triggers of migration 0011_render_versions, which wrote to render_versions on
-- every write; dropped before the table so that no write can reach a trigger without its table.
-- The kept-response cache they fed is gone (issue 27: it answered ~1% of reads in the mixed bench).
DROP TRIGGER IF EXISTS `render_versions_posts_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_posts_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_posts_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_users_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_users_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_users_visibility_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_apps_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_apps_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_follows_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_follows_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_user_mutes_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_user_mutes_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_user_blocks_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_user_blocks_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_bookmarks_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_bookmarks_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_bookmarks_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_markers_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_markers_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_markers_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_user_badges_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_user_badges_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_user_badges_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_badges_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_badges_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_interaction_groups_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_interaction_groups_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_interaction_groups_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_polls_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_polls_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_polls_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_poll_options_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_poll_options_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_poll_options_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_poll_responses_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_poll_responses_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_poll_responses_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_channels_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_channels_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_channels_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_messages_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_messages_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_messages_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_subscriptions_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_subscriptions_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_subscriptions_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_channel_acl_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_channel_acl_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_channel_acl_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_channel_mutes_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_channel_mutes_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `render_versions_channel_mutes_delete`;
--> statement-breakpoint
DROP TABLE `render_versions`;
