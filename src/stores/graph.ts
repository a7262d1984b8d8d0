import { eq, sql, type SQL } from "drizzle-orm";
import { schema, type Db, type RawResult } from "../db";
import { followBackfillSql, unfollowClearSql } from "./home-timeline";
import { interactionWrites } from "./interactions";
import { aliasedFields, mixedBatch, violates } from "../db/batch";
import { userViewColumns, type UserView } from "./users";
import { int } from "../db/dialect";

const { users } = schema;

// Follows, mutes and blocks. Each change is one atomic batch that ends with the read of the user
// acted on (as the caller sees them) and of the caller (for the event). Follower/following counts
// move with the follow rows in the same batch: an insert that fails on the primary key (already
// following) rolls its increments back, and decrements are guarded by the row still existing.

/** A user as `viewerId` sees them, batch-safe (aliased columns). */
function userQuery(db: Db, id: number, viewerId: number | null) {
  return db.select(aliasedFields(userViewColumns(viewerId), "u_")).from(users).where(eq(users.id, id));
}

type UserRows = Awaited<ReturnType<typeof userQuery>>;
const first = (rows: UserRows): UserView | undefined => rows[0] as unknown as UserView | undefined;

export interface GraphChange {
  /** Whether a row was actually added or removed (false for a repeated request). */
  changed: boolean;
  /** The user acted on, as the caller sees them now; undefined if there is no such user. */
  target: UserView | undefined;
  /** The caller, as nobody in particular sees them (for the event). */
  actor: UserView | undefined;
}

async function run(db: Db, actorId: number, targetId: number, writes: SQL[], changed: (results: RawResult[]) => boolean): Promise<GraphChange> {
  const results = await mixedBatch(db, [...writes, userQuery(db, targetId, actorId), userQuery(db, actorId, null)]);
  const n = results.length;
  return {
    changed: changed(results.slice(0, n - 2) as RawResult[]),
    target: first(results[n - 2] as UserRows),
    actor: first(results[n - 1] as UserRows),
  };
}

const blockedEitherWay = (a: number, b: number) =>
  sql`exists(select 1 from user_blocks bk where (bk.user_id = ${a} and bk.blocked_id = ${b}) or (bk.user_id = ${b} and bk.blocked_id = ${a}))`;

export type FollowResult = { ok: true; change: GraphChange } | { ok: false; reason: "already" | "blocked" };

/** `followerId` follows `followedId` (an existing user); refused while either blocks the other. */
export async function follow(db: Db, followerId: number, followedId: number, at: number): Promise<FollowResult> {
  try {
    const change = await run(
      db,
      followerId,
      followedId,
      [
        // Primary key: already following. NOT NULL on followed_id: a block either way.
        sql`insert into follows (follower_id, followed_id, created_at)
          select ${followerId}, case when ${blockedEitherWay(followerId, followedId)} then null else ${int(followedId)} end, ${at}`,
        sql`update users set following = following + 1 where id = ${followerId}`,
        sql`update users set followers = followers + 1 where id = ${followedId}`,
        ...followBackfillSql(followerId, followedId),
        ...interactionWrites({ userId: followedId, action: "follow", objectId: followedId, actorId: followerId, at }),
      ],
      () => true,
    );
    return { ok: true, change };
  } catch (err) {
    if (violates(err, "follows")) return { ok: false, reason: "already" };
    if (violates(err, "follows", "followed_id")) return { ok: false, reason: "blocked" };
    throw err;
  }
}

/**
 * Removes the follow rows `pairs` names (follower, followed), with their counts and the followed
 * user's posts on the follower's home timeline; UNFOLLOW_DELETE is the place of each pair's
 * `delete … returning` among its UNFOLLOW_WRITES statements.
 */
function unfollowWrites(pairs: [number, number][]): SQL[] {
  return pairs.flatMap(([follower, followed]) => {
    const has = sql`exists(select 1 from follows fx where fx.follower_id = ${follower} and fx.followed_id = ${followed})`;
    return [
      sql`update users set following = following - 1 where id = ${follower} and ${has}`,
      sql`update users set followers = followers - 1 where id = ${followed} and ${has}`,
      unfollowClearSql(follower, followed, has),
      sql`delete from follows where follower_id = ${follower} and followed_id = ${followed} returning follower_id`,
    ];
  });
}
const UNFOLLOW_WRITES = 4;
const UNFOLLOW_DELETE = 3;

const returnedRows = (r: RawResult) => r.results.length > 0;

export function unfollow(db: Db, followerId: number, followedId: number): Promise<GraphChange> {
  return run(db, followerId, followedId, unfollowWrites([[followerId, followedId]]), (r) => returnedRows(r[UNFOLLOW_DELETE]));
}

const existsUser = (id: number) => sql`exists(select 1 from users ux where ux.id = ${id})`;

export function mute(db: Db, userId: number, mutedId: number, at: number): Promise<GraphChange> {
  return run(
    db,
    userId,
    mutedId,
    [
      sql`insert into user_mutes (user_id, muted_id, created_at) select ${userId}, ${mutedId}, ${at} where ${existsUser(mutedId)}
        on conflict do nothing returning muted_id`,
    ],
    (r) => returnedRows(r[0]),
  );
}

export function unmute(db: Db, userId: number, mutedId: number): Promise<GraphChange> {
  return run(db, userId, mutedId, [sql`delete from user_mutes where user_id = ${userId} and muted_id = ${mutedId} returning muted_id`], (r) =>
    returnedRows(r[0]),
  );
}

/**
 * Blocks a user: also ends follows in both directions (with their counts). `unfollowed` tells
 * which of the two follows existed, for their events.
 */
export async function block(db: Db, userId: number, blockedId: number, at: number) {
  let unfollowed = { byUser: false, byBlocked: false };
  const change = await run(
    db,
    userId,
    blockedId,
    [
      sql`insert into user_blocks (user_id, blocked_id, created_at) select ${userId}, ${blockedId}, ${at} where ${existsUser(blockedId)}
        on conflict do nothing returning blocked_id`,
      ...unfollowWrites([
        [userId, blockedId],
        [blockedId, userId],
      ]),
    ],
    (r) => {
      unfollowed = { byUser: returnedRows(r[1 + UNFOLLOW_DELETE]), byBlocked: returnedRows(r[1 + UNFOLLOW_WRITES + UNFOLLOW_DELETE]) };
      return returnedRows(r[0]);
    },
  );
  return { ...change, unfollowed };
}

export function unblock(db: Db, userId: number, blockedId: number): Promise<GraphChange> {
  return run(db, userId, blockedId, [sql`delete from user_blocks where user_id = ${userId} and blocked_id = ${blockedId} returning blocked_id`], (r) =>
    returnedRows(r[0]),
  );
}
