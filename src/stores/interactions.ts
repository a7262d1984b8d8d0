import { sql, type SQL } from "drizzle-orm";
import type { Page } from "../http/pagination";
import { bool, json, pageBoundsSql, pageBoundValues, pageBoundsShape, readUser, userColumnsSql, type Row } from "./channel-sql";
import type { Db, RawResult } from "../db";
import { boundShapes, mixedBatch, placeholder, type BoundQuery } from "../db/batch";
import { postsQuery, toPostSet, type PostSet } from "./posts";
import { sharedViewer, viewerSql, type UserView, type Viewer, type ViewerSlot } from "./users";
import { inList, int, jsonArray, jsonArrayAgg } from "../db/dialect";

export type InteractionAction = "bookmark" | "reply" | "repost" | "follow" | "poll_response";

/** Every action, in the order the API lists them. */
export const INTERACTION_ACTIONS: readonly InteractionAction[] = ["bookmark", "repost", "reply", "follow", "poll_response"];

/** Events of the same action on the same object merge while within this many seconds of the latest. */
export const MERGE_WINDOW_SECONDS = 24 * 60 * 60;

/** One interaction event to record (decisions §11). */
export interface InteractionEvent {
  /** The user the interaction is shown to; actions on one's own objects are not recorded. */
  userId: number;
  action: InteractionAction;
  objectId: number;
  actorId: number;
  at: number;
  /** Records nothing unless this holds when the batch runs (e.g. the poll is still open). */
  when?: SQL;
}

/** Whether the event is recorded at all: not when the user acted on their own object. */
export const recordsInteraction = (e: InteractionEvent) => e.userId !== e.actorId;

/**
 * The writes that record one interaction event, to run in the same batch as the action itself:
 * join the newest group for (user, action, object) if its latest event is within 24 hours, else
 * open a new group; then move the group's latest event to this one. None for an action on one's
 * own object.
 */
export function interactionWrites(e: InteractionEvent): SQL[] {
  if (!recordsInteraction(e)) return [];
  return interactionStatements(e.action, { user: e.userId, object: e.objectId, actor: e.actorId, at: e.at, since: e.at - MERGE_WINDOW_SECONDS }, e.when);
}

/**
 * `interactionWrites` for statements compiled once per shape (`boundShapes`): the event's values
 * are the placeholders `interactionValues` fills. Only for an event that `recordsInteraction`.
 */
export function interactionWritesShape(action: InteractionAction): SQL[] {
  const [user, object, actor, at, since] = ["ixUser", "ixObject", "ixActor", "ixAt", "ixSince"].map(placeholder);
  return interactionStatements(action, { user, object, actor, at, since });
}

/** The values of `interactionWritesShape`'s placeholders (unused by a shape that records nothing). */
export const interactionValues = (e: InteractionEvent) => ({
  ixUser: e.userId,
  ixObject: e.objectId,
  ixActor: e.actorId,
  ixAt: e.at,
  ixSince: e.at - MERGE_WINDOW_SECONDS,
});

type Value = number | SQL;

function interactionStatements(action: InteractionAction, e: { user: Value; object: Value; actor: Value; at: Value; since: Value }, condition?: SQL): SQL[] {
  const when = condition ? sql` and ${condition}` : sql``;
  const group = sql`(select id from interaction_groups where user_id = ${e.user} and action = ${action} and object_id = ${e.object} order by latest_at desc, id desc limit 1)`;
  return [
    sql`insert into interaction_groups (user_id, action, object_id, latest_event_id, latest_at)
        select ${int(e.user)}, ${action}, ${int(e.object)}, 0, ${int(e.at)}
        where not exists (select 1 from interaction_groups where user_id = ${e.user} and action = ${action} and object_id = ${e.object} and latest_at >= ${e.since})${when}`,
    // One event per actor and group: an actor acting again (bookmark, unbookmark, bookmark) moves to the front.
    sql`delete from interaction_events where group_id = ${group} and actor_id = ${e.actor}${when}`,
    sql`insert into interaction_events (group_id, actor_id, created_at) select ${group}, ${int(e.actor)}, ${int(e.at)} where true${when}`,
    sql`update interaction_groups set latest_event_id = (select max(id) from interaction_events where group_id = interaction_groups.id), latest_at = ${int(e.at)}
        where id = ${group}${when}`,
  ];
}

// ---------------------------------------------------------------------------------------------
// The feed (GET /users/me/interactions). A page is a range scan of the user's groups by
// `latest_event_id` (index interaction_groups_page; with `filters`/`exclude`, one bounded scan per
// action on interaction_groups_action_page, merged); everything the items embed is read in the
// same batch from the page's group ids, so the cost depends on the page, not on the history.

/** Most users listed per item: the most recent distinct actors. */
export const USERS_PER_INTERACTION = 50;

const POST_ACTIONS: readonly InteractionAction[] = ["bookmark", "repost", "reply"];

export interface InteractionGroup {
  id: number;
  action: InteractionAction;
  objectId: number;
  latestEventId: number;
  latestAt: number;
}

export interface AbbreviatedPollRow {
  id: number;
  prompt: string;
  closedAt: number;
  userId: number;
  pollToken: string;
  isAnonymous: boolean;
  isDeleted: boolean;
  options: { position: number; text: string }[];
}

export interface InteractionPage {
  /** The groups of the page (limit + 1 rows, in the page's direction). */
  groups: InteractionGroup[];
  /** Actors per group, newest first (none for anonymous polls). */
  actors: Map<number, UserView[]>;
  /** Posts acted on (bookmark, repost, reply), deleted ones too, with what they embed. */
  posts: PostSet;
  /** Users acted on (follow). */
  users: Map<number, UserView>;
  /** Polls acted on (poll_response). */
  polls: Map<number, AbbreviatedPollRow>;
}

/** `SELECT` of the page's groups: one index range scan, or one per action merged when only some actions are wanted. */
function groupsPageSql(userId: ViewerSlot | SQL, actions: readonly InteractionAction[], page: Page, bounds: SQL): SQL {
  const dir = sql.raw(page.newestFirst ? "DESC" : "ASC");
  const limit = sql.placeholder("limit");
  const scan = (action?: InteractionAction) =>
    sql`SELECT g.id, g.action, g.object_id, g.latest_event_id, g.latest_at FROM interaction_groups g
      WHERE g.user_id = ${viewerSql(userId)} ${action ? sql`AND g.action = ${sql.raw(`'${action}'`)}` : sql``} AND ${bounds}
      ORDER BY g.latest_event_id ${dir} LIMIT ${limit}`;
  if (actions.length === INTERACTION_ACTIONS.length) return scan();
  if (actions.length === 1) return scan(actions[0]);
  const parts = actions.map((a, i) => sql`SELECT * FROM (${scan(a)}) AS ${sql.raw(`s${i}`)}`);
  return sql`SELECT * FROM (${sql.join(parts, sql` UNION ALL `)}) AS merged ORDER BY latest_event_id ${dir} LIMIT ${limit}`;
}

/**
 * The actors of the groups a page selects (`pg`: a query of interaction group rows), for one batch:
 * the newest USERS_PER_INTERACTION events of each group (index interaction_events_group), each
 * event one actor (the writes keep one event per actor and group, its latest). Anonymous polls
 * name no one: their events are not even read. Rows come in no order (`readActors` sorts them).
 */
function groupActorsSql(pg: SQL, viewerId: ViewerSlot | SQL | null, presence = true, viewerCte: SQL | null = null): SQL {
  // The oldest event shown is found once per group (in `pf`), not once per event joined: D1
  // counts the rows of every run of that walk.
  return sql`WITH ${viewerCte ? sql`${viewerCte}, ` : sql``}pg AS (${pg}), pf AS (SELECT pg.id, coalesce((SELECT e2.id FROM interaction_events e2 WHERE e2.group_id = pg.id
        ORDER BY e2.id DESC LIMIT 1 OFFSET ${USERS_PER_INTERACTION - 1}), 0) AS first_event
      FROM pg WHERE pg.action <> 'poll_response' OR coalesce((SELECT ap.is_anonymous FROM polls ap WHERE ap.id = pg.object_id), 1) = 0)
    SELECT pf.id AS ix_group_id, e.id AS ix_event_id, ${userColumnsSql(viewerId, presence)}
    FROM pf JOIN interaction_events e ON e.group_id = pf.id AND e.id >= pf.first_event JOIN users ON users.id = e.actor_id`;
}

const readGroups = (r: RawResult) =>
  r.results.map(
    (row): InteractionGroup => ({
      id: Number(row.id),
      action: row.action as InteractionAction,
      objectId: Number(row.object_id),
      latestEventId: Number(row.latest_event_id),
      latestAt: Number(row.latest_at),
    }),
  );

/** Actors per group, newest event first. */
function readActors(r: RawResult): Map<number, UserView[]> {
  const actors = new Map<number, UserView[]>();
  const rows = [...r.results].sort((a, b) => Number(b.ix_event_id) - Number(a.ix_event_id));
  for (const row of rows) {
    const list = actors.get(Number(row.ix_group_id)) ?? [];
    list.push(readUser(row)!);
    actors.set(Number(row.ix_group_id), list);
  }
  return actors;
}

/**
 * The statements of one page, for one batch: the page's groups, their actors, the posts, users
 * and polls acted on. Each statement recomputes the page (a bounded index range scan) as a
 * subquery, so all of it is one round trip. `actions` must not be empty.
 */
export function interactionPageQueries(userId: Viewer, actions: readonly InteractionAction[], page: Page, presence = true): BoundQuery[] {
  // Compiled once per shape (building and compiling five statements through drizzle cost more
  // CPU than reading them), bound per request by name.
  const byId = typeof userId === "number";
  const bounds = pageBoundsShape("g.latest_event_id", page);
  const key = `interactions:${byId ? "user" : "token"}:${actions.join(",")}:${bounds.key}:${page.newestFirst ? "desc" : "asc"}:${presence}`;
  const values = { viewer: byId ? userId : undefined, hash: byId ? undefined : userId.tokenHash, limit: page.limit + 1, ...pageBoundValues(page) };
  const slot: ViewerSlot = byId ? sql.placeholder("viewer") : { tokenHash: sql.placeholder("hash") as unknown as string };
  return boundShapes(key, () => pageStatements(slot, actions, page, bounds.sql, presence), values);
}

function pageStatements(userId: ViewerSlot, actions: readonly InteractionAction[], page: Page, bounds: SQL, presence: boolean): (SQL | BoundQuery)[] {
  const pg = groupsPageSql(userId, actions, page, bounds);
  const objectsOf = (list: readonly InteractionAction[], groups = pg) =>
    sql`SELECT pg.object_id AS id FROM (${groups}) pg WHERE pg.action IN ${inList(list, "text")}`;
  // The statements naming the viewer many times (the actors' and users' flags) read a token once.
  const shared = sharedViewer(userId);
  const sharedPg = groupsPageSql(shared.viewer, actions, page, bounds);
  const actors = groupActorsSql(sharedPg, shared.viewer, presence, shared.cte);
  const wants = (list: readonly InteractionAction[]) => actions.some((a) => list.includes(a));
  const none = sql`SELECT 1 WHERE false`;
  return [
    pg,
    actors,
    postsQuery(userId, wants(POST_ACTIONS) ? objectsOf(POST_ACTIONS) : sql`SELECT 0 AS id WHERE false`, { presence }),
    wants(["follow"])
      ? sql`${shared.cte ? sql`WITH ${shared.cte} ` : sql``}SELECT ${userColumnsSql(shared.viewer, presence)} FROM users WHERE users.id IN (${objectsOf(["follow"], sharedPg)})`
      : none,
    wants(["poll_response"])
      ? sql`SELECT p.id, p.prompt, p.closed_at, p.user_id, p.poll_token, p.is_anonymous, p.is_deleted,
          (SELECT ${jsonArrayAgg(jsonArray(sql`o.position`, sql`o.text`))} FROM poll_options o WHERE o.poll_id = p.id) AS options
        FROM polls p WHERE p.id IN (${objectsOf(["poll_response"])})`
      : none,
  ];
}

/** One page of the user's interactions and everything its items embed, in one round trip. */
export async function readInteractions(db: Db, userId: number, actions: readonly InteractionAction[], page: Page, presence = true): Promise<InteractionPage> {
  return decodeInteractionPage(await mixedBatch(db, interactionPageQueries(userId, actions, page, presence)));
}

/** The results of `interactionPageQueries` (in order) as a page. */
export function decodeInteractionPage([groupsRes, actorsRes, postRows, usersRes, pollsRes]: readonly RawResult[]): InteractionPage {
  const rows = (r: RawResult) => r.results;
  const groups = readGroups(groupsRes);
  const actorMap = readActors(actorsRes);
  const users = new Map(rows(usersRes).map((r) => [Number(r.u__id), readUser(r)!]));
  const polls = new Map(
    rows(pollsRes).map((r): [number, AbbreviatedPollRow] => [
      Number(r.id),
      {
        id: Number(r.id),
        prompt: String(r.prompt),
        closedAt: Number(r.closed_at),
        userId: Number(r.user_id),
        pollToken: String(r.poll_token),
        isAnonymous: bool(r.is_anonymous),
        isDeleted: bool(r.is_deleted),
        options: ((json(r.options) as [number, string][] | null) ?? [])
          .map(([position, text]) => ({ position: Number(position), text: String(text) }))
          .sort((a, b) => a.position - b.position),
      },
    ]),
  );
  return { groups, actors: actorMap, posts: toPostSet(postRows), users, polls };
}

/** Actions on a post that its interactions list (GET /posts/{id}/interactions). */
export const POST_INTERACTION_ACTIONS: readonly InteractionAction[] = ["bookmark", "repost", "reply"];

/**
 * One page of the interactions with a post (the original, for a repost): its author's interaction
 * groups of that post, with their actors, in one round trip. `found` is false for no such post.
 */
export async function readPostInteractions(
  db: Db,
  postId: number,
  actions: readonly InteractionAction[],
  page: Page,
  viewerId: number | null,
  presence = true,
) {
  const post = sql`coalesce((SELECT ip.repost_of FROM posts ip WHERE ip.id = ${postId}), ${postId})`;
  const dir = sql.raw(page.newestFirst ? "DESC" : "ASC");
  const pg = sql`SELECT g.id, g.action, g.object_id, g.latest_event_id, g.latest_at FROM interaction_groups g
    WHERE g.user_id = (SELECT au.user_id FROM posts au WHERE au.id = ${post}) AND g.action IN ${inList(actions, "text")}
      AND g.object_id = ${post} AND ${pageBoundsSql("g.latest_event_id", page)}
    ORDER BY g.latest_event_id ${dir} LIMIT ${page.limit + 1}`;
  const [exists, groups, actors] = await mixedBatch(db, [sql`SELECT 1 AS found FROM posts WHERE id = ${postId}`, pg, groupActorsSql(pg, viewerId, presence)]);
  return { found: exists.results.length > 0, groups: readGroups(groups), actors: readActors(actors) };
}
