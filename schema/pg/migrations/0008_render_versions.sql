CREATE TABLE "render_versions" (
	"shard" bigint PRIMARY KEY NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
-- Hand-written: triggers that bump the counters of what a write changes in rendered responses
-- (see renderVersions in schema/tables.ts and src/stores/render-versions.ts): `kind * 2^40 + id`
-- per object, and one epoch row (shard < 256, picked at random) per write.
CREATE FUNCTION es_bump_render_versions() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  rec jsonb;
  shards bigint[] := '{}';
  arg text;
  id bigint;
BEGIN
  IF TG_OP = 'DELETE' THEN rec := to_jsonb(OLD); ELSE rec := to_jsonb(NEW); END IF;
  -- Each argument is 'kind:column' (the row's id in that column), 'kind=id' (a fixed row) or
  -- 'kind~base:column' (below).
  FOREACH arg IN ARRAY TG_ARGV LOOP
    IF position('=' IN arg) > 0 THEN
      shards := shards || (split_part(arg, '=', 1)::bigint * 1099511627776 + split_part(arg, '=', 2)::bigint);
    ELSIF position('~' IN arg) > 0 THEN
      -- 'kind~base:column': one of 64 rows from base on, by the column's value (a whole list
      -- spread over rows, so that concurrent writers seldom bump the same one)
      id := (rec ->> split_part(arg, ':', 2))::bigint;
      shards := shards || (split_part(arg, '~', 1)::bigint * 1099511627776 + split_part(split_part(arg, '~', 2), ':', 1)::bigint + id % 64);
    ELSE
      id := (rec ->> split_part(arg, ':', 2))::bigint;
      IF id IS NOT NULL THEN
        shards := shards || (split_part(arg, ':', 1)::bigint * 1099511627776 + id);
      END IF;
    END IF;
  END LOOP;
  -- One epoch row at random, so that concurrent writers of the same objects do not also meet there.
  shards := shards || floor(random() * 256)::bigint;
  -- In shard order, so that concurrent writers take the rows in the same order.
  INSERT INTO render_versions (shard, version) SELECT DISTINCT s, 1 FROM unnest(shards) AS s ORDER BY s
    ON CONFLICT (shard) DO UPDATE SET version = render_versions.version + 1;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER render_versions_posts AFTER INSERT OR UPDATE OR DELETE ON posts FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('1:id', '1:repost_of', '8~64:id');
--> statement-breakpoint
CREATE TRIGGER render_versions_users AFTER UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('2:id');
--> statement-breakpoint
CREATE TRIGGER render_versions_users_visibility AFTER UPDATE OF type, is_disabled ON users FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('8=2');
--> statement-breakpoint
CREATE TRIGGER render_versions_apps AFTER UPDATE OR DELETE ON apps FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('3:id', '8=6');
--> statement-breakpoint
CREATE TRIGGER render_versions_follows AFTER INSERT OR DELETE ON follows FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('4:follower_id', '4:followed_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_user_mutes AFTER INSERT OR DELETE ON user_mutes FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('4:user_id', '4:muted_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_user_blocks AFTER INSERT OR DELETE ON user_blocks FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('4:user_id', '4:blocked_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_bookmarks AFTER INSERT OR UPDATE OR DELETE ON bookmarks FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('4:user_id', '1:post_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_markers AFTER INSERT OR UPDATE OR DELETE ON markers FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('4:user_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_user_badges AFTER INSERT OR UPDATE OR DELETE ON user_badges FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('2:user_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_badges AFTER UPDATE OR DELETE ON badges FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('8=3');
--> statement-breakpoint
CREATE TRIGGER render_versions_interaction_groups AFTER INSERT OR UPDATE OR DELETE ON interaction_groups FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('5:user_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_polls AFTER INSERT OR UPDATE OR DELETE ON polls FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('7:id');
--> statement-breakpoint
CREATE TRIGGER render_versions_poll_options AFTER INSERT OR UPDATE OR DELETE ON poll_options FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('7:poll_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_poll_responses AFTER INSERT OR UPDATE OR DELETE ON poll_responses FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('7:poll_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_channels AFTER INSERT OR UPDATE OR DELETE ON channels FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('6:id', '8=5');
--> statement-breakpoint
CREATE TRIGGER render_versions_messages AFTER INSERT OR UPDATE OR DELETE ON messages FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('6:channel_id', '8~256:id');
--> statement-breakpoint
CREATE TRIGGER render_versions_subscriptions AFTER INSERT OR UPDATE OR DELETE ON subscriptions FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('6:channel_id', '4:user_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_channel_acl AFTER INSERT OR UPDATE OR DELETE ON channel_acl FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('6:channel_id', '4:user_id');
--> statement-breakpoint
CREATE TRIGGER render_versions_channel_mutes AFTER INSERT OR UPDATE OR DELETE ON channel_mutes FOR EACH ROW EXECUTE FUNCTION es_bump_render_versions('6:channel_id', '4:user_id');
