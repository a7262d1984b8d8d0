CREATE TABLE "channel_presence" (
	"channel_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"presence" text NOT NULL,
	"last_seen_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "channel_presence_channel_id_user_id_pk" PRIMARY KEY("channel_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "stream_subscriptions" ADD COLUMN "target_id" bigint;--> statement-breakpoint
ALTER TABLE "stream_subscriptions" ADD COLUMN "flags" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "channel_presence_channel_expires" ON "channel_presence" USING btree ("channel_id","expires_at");