ALTER TABLE `posts` ADD `is_newcomer` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `posts` ADD `is_conversation` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `posts_newcomer` ON `posts` (`id`) WHERE is_newcomer = 1;--> statement-breakpoint
CREATE INDEX `posts_conversation` ON `posts` (`id`) WHERE is_conversation = 1;--> statement-breakpoint
CREATE INDEX `posts_popular` ON `posts` (`id`) WHERE replies + reposts + bookmarks >= 3;--> statement-breakpoint
CREATE INDEX `posts_unanswered` ON `posts` (`id`) WHERE replies = 0 and reposts = 0 and bookmarks = 0;--> statement-breakpoint
CREATE INDEX `posts_256` ON `posts` (`id`) WHERE length(text) = 256;--> statement-breakpoint
-- Hand-written backfill of the explore flags (issue 27), the rules the writes keep from now on:
-- an original post among the first 50 originals of its author; a thread root with a live reply by someone else.
UPDATE posts SET is_newcomer = 1 WHERE repost_of IS NULL
  AND (SELECT e.id FROM posts e WHERE e.user_id = posts.user_id AND e.id < posts.id AND e.repost_of IS NULL ORDER BY e.id LIMIT 1 OFFSET 49) IS NULL;--> statement-breakpoint
UPDATE posts SET is_conversation = 1 WHERE EXISTS (SELECT 1 FROM posts cr WHERE cr.thread_id = posts.id AND cr.id <> posts.id
  AND cr.user_id <> posts.user_id AND cr.is_deleted = 0);
