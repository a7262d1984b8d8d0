CREATE TABLE "poll_facets" (
	"poll_id" bigint NOT NULL,
	"facet" text NOT NULL,
	"value" text NOT NULL,
	CONSTRAINT "poll_facets_facet_value_poll_id_pk" PRIMARY KEY("facet","value","poll_id")
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "deleted_by" bigint;--> statement-breakpoint
CREATE INDEX "poll_facets_poll" ON "poll_facets" USING btree ("poll_id");--> statement-breakpoint
CREATE INDEX "messages_sticky" ON "messages" USING btree ("channel_id","is_sticky","id");