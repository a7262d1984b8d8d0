ALTER TABLE "subscriptions" ADD COLUMN "is_unread" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "subscriptions_user_unread" ON "subscriptions" USING btree ("user_id","channel_id") WHERE is_unread = 1;--> statement-breakpoint
-- Hand-written backfill (issue 27): unread while the user's channel marker is below the channel's newest live message
-- (stores/channel-sql unreadFlagSql), as the message and marker writes keep it from now on.
UPDATE subscriptions SET is_unread = 1 WHERE EXISTS (SELECT 1 FROM channels uc WHERE uc.id = subscriptions.channel_id
  AND uc.recent_message_id IS NOT NULL AND uc.recent_message_id >
    coalesce((SELECT uf.position FROM markers uf WHERE uf.user_id = subscriptions.user_id AND uf.name = 'channel:' || uc.id), -1));
