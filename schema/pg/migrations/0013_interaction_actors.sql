-- Hand-written (issue 27), before the unique index: keep each actor's latest event of a group only,
-- as the writes do from now on (a group's newest events are then its newest actors).
DELETE FROM interaction_events WHERE id NOT IN (SELECT max(id) FROM interaction_events GROUP BY group_id, actor_id);--> statement-breakpoint
DROP INDEX "interaction_events_group";--> statement-breakpoint
CREATE UNIQUE INDEX "interaction_events_actor" ON "interaction_events" USING btree ("group_id","actor_id");--> statement-breakpoint
CREATE INDEX "interaction_events_group" ON "interaction_events" USING btree ("group_id","id","actor_id");