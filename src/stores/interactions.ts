import { sql, type SQL } from "drizzle-orm";

export type InteractionAction = "bookmark" | "reply" | "repost" | "follow" | "poll_response";

/** Events of the same action on the same object merge while within this many seconds of the latest. */
export const MERGE_WINDOW_SECONDS = 24 * 60 * 60;

/**
 * The writes that record one interaction event (decisions §11), to run in the same batch as the
 * action itself: join the newest group for (user, action, object) if its latest event is within
 * 24 hours, else open a new group; then move the group's latest event to this one.
 * `userId` is the user the interaction is shown to; actions on one's own objects are not recorded.
 */
export function interactionWrites(e: { userId: number; action: InteractionAction; objectId: number; actorId: number; at: number }): SQL[] {
  if (e.userId === e.actorId) return [];
  const since = e.at - MERGE_WINDOW_SECONDS;
  const group = sql`(select id from interaction_groups where user_id = ${e.userId} and action = ${e.action} and object_id = ${e.objectId} order by latest_at desc, id desc limit 1)`;
  return [
    sql`insert into interaction_groups (user_id, action, object_id, latest_event_id, latest_at)
        select ${e.userId}, ${e.action}, ${e.objectId}, 0, ${e.at}
        where not exists (select 1 from interaction_groups where user_id = ${e.userId} and action = ${e.action} and object_id = ${e.objectId} and latest_at >= ${since})`,
    sql`insert into interaction_events (group_id, actor_id, created_at) values (${group}, ${e.actorId}, ${e.at})`,
    sql`update interaction_groups set latest_event_id = (select max(id) from interaction_events where group_id = interaction_groups.id), latest_at = ${e.at}
        where id = ${group}`,
  ];
}
