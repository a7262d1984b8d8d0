import { sql, type SQL } from "drizzle-orm";
import type { Db, RawResult } from "../db";
import { followBackfillSql, unfollowClearSql } from "./home-timeline";
import { interactionValues, interactionWritesShape, recordsInteraction, type InteractionEvent } from "./interactions";
import { boundShape, boundShapes, mixedBatch, placeholder, violates, type BoundQuery } from "../db/batch";
import { readUser, userColumnsSql } from "./channel-sql";
import type { UserView } from "./users";
import { int } from "../db/dialect";
import { capturedSeq, reserveCaptured } from "../events/outbox";
import type { EventType } from "../events/publish";

// Follows, mutes and blocks. Each change is one atomic batch that ends with the read of the user
// acted on (as the caller sees them) and of the caller (for the event). Follower/following counts
// move with the follow rows in the same batch: an insert that fails on the primary key (already
// following) rolls its increments back, and decrements are guarded by the row still existing.

/**
 * A user as `viewerId` sees them (decoded by `readUser`), compiled once per viewer kind and bound
 * per request: drizzle's query builder cost more CPU per write than this read.
 */
function userQuery(id: number, viewerId: number | null): BoundQuery {
  return boundShape(
    `graph-user:${viewerId == null ? "anonymous" : "user"}`,
    () => sql`select ${userColumnsSql(viewerId == null ? null : placeholder("viewer"))} from users where users.id = ${placeholder("id")}`,
    { id, viewer: viewerId },
  );
}

const first = (r: RawResult): UserView | undefined => (r.results[0] ? (readUser(r.results[0]) ?? undefined) : undefined);

export interface GraphChange {
  /** Whether a row was actually added or removed (false for a repeated request). */
  changed: boolean;
  /** The user acted on, as the caller sees them now; undefined if there is no such user. */
  target: UserView | undefined;
  /** The caller, as nobody in particular sees them (for the event). */
  actor: UserView | undefined;
  /** The event's outbox sequence, when the batch reserved it (it changed something). */
  seq?: number;
}

/** What the outbox reference of a graph event needs from the request (src/events/outbox.ts). */
export interface GraphEvent {
  origin: string;
  at: number;
}

type Reservation = ReturnType<typeof reserveCaptured>;

/**
 * The reservation of `{user, <key>}` event (follow, mute, block): its reference names both users
 * (route.actorId acts on route.userIds[0]) and is kept only when `when` holds where `capture`
 * stands in the batch (the row is not yet inserted or deleted).
 */
function graphReservation(type: EventType, e: GraphEvent, actorId: number, targetId: number, isDeleted: boolean, when: SQL, slot: number): Reservation {
  return reserveCaptured(type, e.at, sql`case when ${when} then ${graphRef(e, actorId, targetId, isDeleted)} end`, slot);
}

/** The outbox reference of a graph event: both users (route.actorId acts on route.userIds[0]). */
const graphRef = (e: GraphEvent, actorId: number, targetId: number, isDeleted: boolean) =>
  JSON.stringify({ origin: e.origin, isDeleted, route: { actorId, userIds: [targetId] } });

/** Runs `writes` (holding the `reservations`' captures), then the outbox inserts, then the reads. */
async function run(db: Db, actorId: number, targetId: number, writes: SQL[], changed: (results: RawResult[]) => boolean, reservations: Reservation[] = []) {
  const inserts = reservations.map((r) => r.insert);
  const results = await mixedBatch(db, [...writes, ...inserts, userQuery(targetId, actorId), userQuery(actorId, null)]);
  const n = results.length;
  const seqs = reservations.map((r, i) => capturedSeq(results[writes.indexOf(r.capture)] as RawResult, results[writes.length + i] as RawResult));
  const change: GraphChange = {
    changed: changed(results.slice(0, writes.length) as RawResult[]),
    target: first(results[n - 2] as RawResult),
    actor: first(results[n - 1] as RawResult),
    seq: seqs[0],
  };
  return { change, seqs };
}

const blockedEitherWay = (a: number | SQL, b: number | SQL) =>
  sql`exists(select 1 from user_blocks bk where (bk.user_id = ${a} and bk.blocked_id = ${b}) or (bk.user_id = ${b} and bk.blocked_id = ${a}))`;

export type FollowResult = { ok: true; change: GraphChange } | { ok: false; reason: "already" | "blocked" };

/** `followerId` follows `followedId` (an existing user); refused while either blocks the other. */
export async function follow(db: Db, followerId: number, followedId: number, at: number, event?: GraphEvent): Promise<FollowResult> {
  const interaction: InteractionEvent = { userId: followedId, action: "follow", objectId: followedId, actorId: followerId, at };
  const recorded = recordsInteraction(interaction);
  const values = {
    follower: followerId,
    followed: followedId,
    at,
    ...interactionValues(interaction),
    ...(event ? { eventJson: graphRef(event, followerId, followedId, false), eventAt: event.at } : {}),
  };
  // Compiled once per shape (drizzle's compile cost more CPU than the write), bound per request.
  const writes = boundShapes(`follow:${Number(recorded)}${Number(!!event)}`, () => followWrites(recorded, !!event), values);
  try {
    // A second follow or a block fails the insert and rolls everything back: the event holds when the batch commits.
    const results = await mixedBatch(db, [...writes, userQuery(followedId, followerId), userQuery(followerId, null)]);
    const n = results.length;
    const change: GraphChange = {
      changed: true,
      target: first(results[n - 2] as RawResult),
      actor: first(results[n - 1] as RawResult),
      // With an event, the writes end with its capture and insert.
      seq: event ? capturedSeq(results[n - 4] as RawResult, results[n - 3] as RawResult) : undefined,
    };
    return { ok: true, change };
  } catch (err) {
    if (violates(err, "follows")) return { ok: false, reason: "already" };
    if (violates(err, "follows", "followed_id")) return { ok: false, reason: "blocked" };
    throw err;
  }
}

/** A follow's writes, compiled once per shape: the row, the counts, the home timeline, the interaction, the event's capture and insert. */
function followWrites(recorded: boolean, event: boolean): SQL[] {
  const [follower, followed] = [placeholder("follower"), placeholder("followed")];
  const reservation = event ? reserveCaptured("follow", placeholder("eventAt"), sql`case when 1 = 1 then ${placeholder("eventJson")} end`, 0) : null;
  return [
    // Primary key: already following. NOT NULL on followed_id: a block either way.
    sql`insert into follows (follower_id, followed_id, created_at)
      select ${follower}, case when ${blockedEitherWay(follower, followed)} then null else ${int(followed)} end, ${placeholder("at")}`,
    sql`update users set following = following + 1 where id = ${follower}`,
    sql`update users set followers = followers + 1 where id = ${followed}`,
    ...followBackfillSql(follower, followed),
    ...(recorded ? interactionWritesShape("follow") : []),
    ...(reservation ? [reservation.capture, reservation.insert] : []),
  ];
}

/**
 * Removes the follow rows `pairs` names (follower, followed), with their counts and the followed
 * user's posts on the follower's home timeline; UNFOLLOW_DELETE is the place of each pair's
 * `delete … returning` among its UNFOLLOW_WRITES statements.
 */
function unfollowWrites(pairs: [number, number][], event: GraphEvent | undefined, reservations: Reservation[]): SQL[] {
  return pairs.flatMap(([follower, followed]) => {
    const has = sql`exists(select 1 from follows fx where fx.follower_id = ${follower} and fx.followed_id = ${followed})`;
    const reservation = event ? graphReservation("follow", event, follower, followed, true, has, reservations.length) : null;
    if (reservation) reservations.push(reservation);
    return [
      sql`update users set following = following - 1 where id = ${follower} and ${has}`,
      sql`update users set followers = followers - 1 where id = ${followed} and ${has}`,
      unfollowClearSql(follower, followed, has),
      ...(reservation ? [reservation.capture] : []),
      sql`delete from follows where follower_id = ${follower} and followed_id = ${followed} returning follower_id`,
    ];
  });
}
/** Statements per pair of `unfollowWrites`, and the place of its `delete … returning` among them. */
const unfollowShape = (event: GraphEvent | undefined) => (event ? { writes: 5, del: 4 } : { writes: 4, del: 3 });

const returnedRows = (r: RawResult) => r.results.length > 0;

export async function unfollow(db: Db, followerId: number, followedId: number, event?: GraphEvent): Promise<GraphChange> {
  const reservations: Reservation[] = [];
  const writes = unfollowWrites([[followerId, followedId]], event, reservations);
  return (await run(db, followerId, followedId, writes, (r) => returnedRows(r[unfollowShape(event).del]), reservations)).change;
}

const existsUser = (id: number) => sql`exists(select 1 from users ux where ux.id = ${id})`;

const hasMute = (userId: number, mutedId: number) => sql`exists(select 1 from user_mutes hm where hm.user_id = ${userId} and hm.muted_id = ${mutedId})`;
const hasBlock = (userId: number, blockedId: number) => sql`exists(select 1 from user_blocks hb where hb.user_id = ${userId} and hb.blocked_id = ${blockedId})`;

/** One statement `write` that returns a row when it changed something, with its event reserved when `when` holds before it. */
async function single(db: Db, type: EventType, userId: number, targetId: number, write: SQL, isDeleted: boolean, when: SQL, event?: GraphEvent) {
  const reservations = event ? [graphReservation(type, event, userId, targetId, isDeleted, when, 0)] : [];
  const writes = [...reservations.map((r) => r.capture), write];
  return (await run(db, userId, targetId, writes, (r) => returnedRows(r[writes.length - 1]), reservations)).change;
}

export function mute(db: Db, userId: number, mutedId: number, at: number, event?: GraphEvent): Promise<GraphChange> {
  const write = sql`insert into user_mutes (user_id, muted_id, created_at) select ${userId}, ${mutedId}, ${at} where ${existsUser(mutedId)}
    on conflict do nothing returning muted_id`;
  return single(db, "mute", userId, mutedId, write, false, sql`${existsUser(mutedId)} and not ${hasMute(userId, mutedId)}`, event);
}

export function unmute(db: Db, userId: number, mutedId: number, event?: GraphEvent): Promise<GraphChange> {
  const write = sql`delete from user_mutes where user_id = ${userId} and muted_id = ${mutedId} returning muted_id`;
  return single(db, "mute", userId, mutedId, write, true, hasMute(userId, mutedId), event);
}

/**
 * Blocks a user: also ends follows in both directions (with their counts). `unfollowed` tells
 * which of the two follows existed, for their events.
 */
export async function block(db: Db, userId: number, blockedId: number, at: number, event?: GraphEvent) {
  let unfollowed = { byUser: false, byBlocked: false };
  const reservations = event
    ? [graphReservation("block", event, userId, blockedId, false, sql`${existsUser(blockedId)} and not ${hasBlock(userId, blockedId)}`, 0)]
    : [];
  const head = [
    ...reservations.map((r) => r.capture),
    sql`insert into user_blocks (user_id, blocked_id, created_at) select ${userId}, ${blockedId}, ${at} where ${existsUser(blockedId)}
      on conflict do nothing returning blocked_id`,
  ];
  const shape = unfollowShape(event);
  const writes = [
    ...head,
    ...unfollowWrites(
      [
        [userId, blockedId],
        [blockedId, userId],
      ],
      event,
      reservations,
    ),
  ];
  const { change, seqs } = await run(
    db,
    userId,
    blockedId,
    writes,
    (r) => {
      unfollowed = { byUser: returnedRows(r[head.length + shape.del]), byBlocked: returnedRows(r[head.length + shape.writes + shape.del]) };
      return returnedRows(r[head.length - 1]);
    },
    reservations,
  );
  // Sequences of the block event and of the two unfollows (by the caller, by the blocked user).
  return { ...change, unfollowed, unfollowSeqs: { byUser: seqs[1], byBlocked: seqs[2] } };
}

export function unblock(db: Db, userId: number, blockedId: number, event?: GraphEvent): Promise<GraphChange> {
  const write = sql`delete from user_blocks where user_id = ${userId} and blocked_id = ${blockedId} returning blocked_id`;
  return single(db, "block", userId, blockedId, write, true, hasBlock(userId, blockedId), event);
}
