CREATE TABLE `home_items` (
	`user_id` integer NOT NULL,
	`post_id` integer NOT NULL,
	PRIMARY KEY(`user_id`, `post_id`)
);
--> statement-breakpoint
CREATE TABLE `merged_authors` (
	`user_id` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
-- Hand-written: the home timelines of the data already there, by the rule writes follow from now on
-- (stores/home-timeline.ts, with config HOME_TIMELINES' thresholds as they were: 5000 and 5000).
INSERT INTO merged_authors (user_id) SELECT id FROM users WHERE followers > 5000 OR posts > 5000;
--> statement-breakpoint
INSERT INTO home_items (user_id, post_id) SELECT user_id, id FROM posts;
--> statement-breakpoint
INSERT INTO home_items (user_id, post_id) SELECT f.follower_id, p.id FROM follows f JOIN posts p ON p.user_id = f.followed_id
  WHERE f.followed_id NOT IN (SELECT user_id FROM merged_authors) ON CONFLICT DO NOTHING;
