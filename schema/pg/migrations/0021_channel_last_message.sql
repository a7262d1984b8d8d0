ALTER TABLE "channels" ADD COLUMN "last_message_id" bigint;--> statement-breakpoint
-- Backfill: the newest message of each channel, deleted or not (one index seek per channel).
UPDATE "channels" SET "last_message_id" = (SELECT max(m."id") FROM "messages" m WHERE m."channel_id" = "channels"."id");
