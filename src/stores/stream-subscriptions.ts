import { sql, type SQL } from "drizzle-orm";
import { boundShape, placeholder as v, runOne, type BoundQuery } from "../db/batch";
import { existsFlag, inList, jsonArrayAgg } from "../db/dialect";
import { schema, type Db } from "../db";
import { canReadSql } from "./channel-sql";

const { streamSubscriptions } = schema;

/** What a user-stream subscription listens to: one name per subscribable endpoint (the reference's 14). */
export const STREAM_ENDPOINTS = [
  "posts_me",
  "posts_unified",
  "mentions",
  "channel_messages",
  "token",
  "files",
  "presence",
  "user_posts",
  "post_thread",
  "following",
  "followers",
  "channels",
  "channel_subscribers",
  "channel_presence",
] as const;
export type StreamEndpoint = (typeof STREAM_ENDPOINTS)[number];

/**
 * Subscription parameters the routing statements read (bits of `stream_subscriptions.flags`);
 * the others are applied by the user's stream hub.
 */
export const SUBSCRIPTION_FLAGS = {
  /** `include_not_followed=1` on `/presence` and `/channels/{id}/presence`: everyone not blocked. */
  notFollowed: 1,
  /** `include_muted=1` on post streams: keep posts of muted users. */
  muted: 2,
  /** `include_directed_posts=0` on post streams: leave out posts led by mentions of users not followed. */
  noDirected: 4,
} as const;

export type SubscriptionRecord = typeof streamSubscriptions.$inferSelect;

export async function insertSubscription(db: Db, row: SubscriptionRecord): Promise<void> {
  await db.insert(streamSubscriptions).values(row);
}

export async function deleteSubscriptions(db: Db, ids: string[]): Promise<void> {
  if (ids.length) await db.delete(streamSubscriptions).where(sql`${streamSubscriptions.id} in ${inList(ids, "text")}`);
}

export async function deleteConnectionSubscriptions(db: Db, connectionIds: string[]): Promise<void> {
  if (connectionIds.length) await db.delete(streamSubscriptions).where(sql`${streamSubscriptions.connectionId} in ${inList(connectionIds, "text")}`);
}

/** Forgets a user's rows whose connection is gone (a socket lost without a close event). */
export async function pruneUserSubscriptions(db: Db, userId: number, liveConnectionIds: string[]): Promise<void> {
  await runOne(
    db,
    sql`DELETE FROM stream_subscriptions
        WHERE endpoint IN ${inList(STREAM_ENDPOINTS, "text")} AND user_id = ${userId}
          AND connection_id NOT IN ${inList(liveConnectionIds, "text")}`,
  );
}

// Routing: each function below is ONE indexed statement that finds the live subscriptions an
// event concerns (rows: id, connection_id, user_id), for the delivery batch (src/events/routing.ts).
// Each is compiled once per shape and bound per event (drizzle's compile cost more CPU than the
// delivery's reads): values are placeholders (`v`), lists one JSON parameter.
// Access is checked here, at delivery, not only when the subscription was made: a subscriber
// whose token was deleted, whose user was disabled, who lost read access to a channel, or who
// muted or blocked (or was blocked by) an author receives nothing from then on.

/** Token `st` of subscription `s` may still be used: its app `sa` is not deleted, its user `su` not disabled. */
const usableToken = sql`sa.id = st.app_id AND sa.deleted_at IS NULL AND su.id = s.user_id AND su.is_disabled = 0`;

/**
 * The subscriber may still be told anything: the token that opened its connection exists (not
 * revoked, its app not deleted) and its user is not disabled. Rows written before the token was
 * recorded stand for any token of the same user and app. `existsFlag`: Postgres plans an EXISTS
 * in a CASE twice (row by row and hashed), here two three-table joins per branch of a routing
 * statement; it ran row by row (a post's routing planned in 2.4 → 1.8 ms).
 */
const liveSubscriber = sql`(CASE WHEN s.token_id IS NULL
    THEN ${existsFlag(sql`SELECT 1 FROM tokens st, apps sa, users su WHERE st.user_id = s.user_id AND st.app_id = s.app_id AND ${usableToken}`)}
    ELSE ${existsFlag(sql`SELECT 1 FROM tokens st, apps sa, users su WHERE st.id = s.token_id AND ${usableToken}`)} END)`;

/** The subscriber may read the channel `c` of the query (its ACL as it is now). */
const readsChannel = canReadSql("c", sql`s.user_id`);

/** Subscribers hidden from `authorId`: those who muted or blocked them, or whom they blocked. */
const notHiddenFrom = (authorId: SQL) => sql`
  ((s.flags & ${SUBSCRIPTION_FLAGS.muted}) <> 0 OR NOT EXISTS (SELECT 1 FROM user_mutes m WHERE m.user_id = s.user_id AND m.muted_id = ${authorId}))
  AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.user_id = s.user_id AND b.blocked_id = ${authorId})
  AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.user_id = ${authorId} AND b.blocked_id = s.user_id)`;

/** Not blocked either way between the subscriber and `userId`. */
const notBlocking = (userId: SQL) => sql`
  NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.user_id = s.user_id AND b.blocked_id = ${userId})
  AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.user_id = ${userId} AND b.blocked_id = s.user_id)`;

/**
 * `include_directed_posts=0`: the post is left out when one of its leading mentions names a
 * user the subscriber does not follow (their own posts and posts directed at them stay).
 */
const directedAllowed = (authorId: SQL, leadingIds: SQL | null) =>
  leadingIds
    ? sql`((s.flags & ${SUBSCRIPTION_FLAGS.noDirected}) = 0 OR s.user_id = ${authorId} OR s.user_id IN ${inList(leadingIds)}
        OR NOT EXISTS (SELECT 1 FROM users lu WHERE lu.id IN ${inList(leadingIds)} AND lu.id <> s.user_id
          AND NOT EXISTS (SELECT 1 FROM follows lf WHERE lf.follower_id = s.user_id AND lf.followed_id = lu.id)))`
    : sql`1 = 1`;

/** What routing needs to know of a post, read from its rendered object. */
export interface PostRoute {
  authorId: number;
  mentionIds: number[];
  leadingMentionIds: number[];
  threadId: number | null;
}

/** The live subscriptions (of `s`) that `where` selects: every branch of every routing statement. */
const live = (where: SQL, from: SQL = sql`stream_subscriptions s`) =>
  sql`SELECT s.id, s.connection_id, s.user_id FROM ${from} WHERE ${where} AND ${liveSubscriber}`;

/** `s` belongs to a follower of `userId` (a primary-key probe of `follows_pair`). */
const followsUser = (userId: SQL) => sql`EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = s.user_id AND f.followed_id = ${userId})`;

/**
 * The subscriptions to `endpoints` of `authorId`'s followers, read from the smaller side:
 * either the author's followers (index `follows_followed`, probing each one's subscriptions)
 * or the live subscriptions to those endpoints (probing `follows_pair` for each). Both
 * branches are correct; a constant condition runs exactly one of them. It compares the
 * author's follower count `F` (users.followers) with the number `C` of such subscriptions,
 * counted only up to `2F`, so choosing costs at most min(2F, C) index entries, and the read
 * about as much: a post by an author with 100,000 followers of whom 10 are connected reads
 * about 20 entries, not 100,000. The counter only steers the choice, never the result.
 */
function followerSubscriptions(endpoints: readonly StreamEndpoint[], authorId: SQL, where: SQL): SQL[] {
  // Constants, spelled out so both planners use the (endpoint, user_id) index.
  const names = sql.raw(`(${endpoints.map((e) => `'${e}'`).join(", ")})`);
  const inEndpoints = sql`s.endpoint IN ${names}`;
  const followers = sql`coalesce((SELECT followers FROM users WHERE id = ${authorId}), 0)`;
  const connectedUpToTwiceFollowers = sql`(SELECT count(*) FROM (SELECT 1 FROM stream_subscriptions c WHERE c.endpoint IN ${names} LIMIT 2 * ${followers}) capped)`;
  // SQLite checks a constant condition inside the loop, not before it: each branch puts its
  // condition into the key its first index seek uses, so the branch not taken seeks nothing.
  // A follower walked costs about twice a subscription walked (the follow's row, a seek per endpoint).
  const fewer = sql`2 * ${followers} <= ${connectedUpToTwiceFollowers}`;
  const endpointRows = sql.join(
    endpoints.map((e, i) => sql.raw(i ? `SELECT '${e}'` : `SELECT '${e}' AS e`)),
    sql` UNION ALL `,
  );
  return [
    // CROSS JOIN: SQLite keeps the written order, followers outside (Postgres plans by its statistics).
    live(
      sql`f.followed_id = (SELECT CAST(${authorId} AS bigint) WHERE ${fewer}) AND s.user_id = f.follower_id AND ${inEndpoints} AND ${where}`,
      sql`follows f CROSS JOIN stream_subscriptions s`,
    ),
    live(sql`s.endpoint IN (SELECT e FROM (${endpointRows}) v WHERE NOT ${fewer}) AND ${followsUser(authorId)} AND ${where}`),
  ];
}

/**
 * A post: the personal streams (`posts_me`, `posts_unified`) of the author and their
 * followers, the mention streams (`mentions`, `posts_unified`) of the mentioned users, the
 * author's `/users/me/posts`, and the `/posts/{id}/thread` subscriptions of its thread; muted
 * (unless `include_muted=1`) and blocked users left out.
 */
export function postRecipients(p: PostRoute): BoundQuery {
  const directed = p.leadingMentionIds.length > 0;
  const thread = p.threadId !== null;
  const values = { author: p.authorId, mentions: JSON.stringify(p.mentionIds), leading: JSON.stringify(p.leadingMentionIds), thread: p.threadId };
  return boundShape(
    `route-post:${directed}:${thread}`,
    () => {
      const authorId = v("author");
      const personal = sql`${notHiddenFrom(authorId)} AND ${directedAllowed(authorId, directed ? v("leading") : null)}`;
      const branches = [
        // The author's own streams (nobody hides from themself; D1 allows few terms in a compound SELECT).
        live(sql`s.endpoint IN ('posts_me', 'posts_unified', 'user_posts') AND s.user_id = ${authorId}`),
        ...followerSubscriptions(["posts_me", "posts_unified"], authorId, personal),
        live(sql`s.endpoint IN ('mentions', 'posts_unified') AND s.user_id IN ${inList(v("mentions"))} AND ${notHiddenFrom(authorId)}`),
      ];
      if (thread) {
        branches.push(
          live(sql`s.endpoint = 'post_thread' AND s.target_id IN (SELECT id FROM posts WHERE thread_id = ${v("thread")}) AND ${notHiddenFrom(authorId)}`),
        );
      }
      return sql.join(branches, sql` UNION `);
    },
    values,
  );
}

/** A follow or unfollow: `/users/me/following` of the follower, `/users/me/followers` of the followed user. */
export function followRecipients(followerId: number, followedId: number): BoundQuery {
  return boundShape(
    "route-follow",
    () => sql`${live(sql`s.endpoint = 'following' AND s.user_id = ${v("follower")}`)}
        UNION ${live(sql`s.endpoint = 'followers' AND s.user_id = ${v("followed")}`)}`,
    { follower: followerId, followed: followedId },
  );
}

/** Subscriptions joined with the channel they are about (`c`), for the read-access check. */
const withChannel = (channelId: SQL) => sql`stream_subscriptions s JOIN channels c ON c.id = ${channelId}`;

/**
 * A message or channel change: `/channels/{id}/messages` of that channel, and `/channels` of the
 * users subscribed to it (the hub applies their `channel_types`), of subscribers who may read
 * the channel now.
 */
export function channelEventRecipients(channelId: number): BoundQuery {
  const c = v("channel");
  return boundShape(
    "route-channel",
    () => sql`${live(sql`s.channel_id = ${c} AND s.endpoint = 'channel_messages' AND ${readsChannel}`, withChannel(c))}
        UNION ${live(sql`s.endpoint = 'channels' AND s.user_id IN (SELECT user_id FROM subscriptions WHERE channel_id = ${c}) AND ${readsChannel}`, withChannel(c))}`,
    { channel: channelId },
  );
}

/** One channel's `/channels/{id}/subscribers` subscriptions (channel_subscription events), of those who may read it now. */
export function channelSubscriberRecipients(channelId: number): BoundQuery {
  const c = v("channel");
  return boundShape(
    "route-channel-subscribers",
    () => live(sql`s.channel_id = ${c} AND s.endpoint = 'channel_subscribers' AND ${readsChannel}`, withChannel(c)),
    { channel: channelId },
  );
}

/**
 * Presence of `userId` (globally, or in one channel the subscriber may read): by default only
 * subscribers who follow that user (or are that user); with `include_not_followed=1` everyone
 * not blocked either way. The flag is not indexed, so this reads every subscription to the
 * endpoint (or the channel's): following is a probe per subscription, never a read of all
 * of the user's followers.
 */
export function presenceRecipients(userId: number, channelId?: number): BoundQuery {
  const u = v("user");
  const c = v("channel");
  const who = () => sql`(s.user_id = ${u} OR ((s.flags & ${SUBSCRIPTION_FLAGS.notFollowed}) <> 0 AND ${notBlocking(u)})
            OR ${followsUser(u)})`;
  const values = { user: userId, channel: channelId };
  if (channelId === undefined) return boundShape("route-presence", () => live(sql`s.endpoint = 'presence' AND ${who()}`), values);
  return boundShape(
    "route-channel-presence",
    () => live(sql`s.endpoint = 'channel_presence' AND s.channel_id = ${c} AND ${readsChannel} AND ${who()}`, withChannel(c)),
    values,
  );
}

/**
 * One user's subscriptions to `endpoint` (only those made through `appId`'s connections when
 * given). `revokedTokenId`: a token just deleted, whose own connections still hear of it.
 */
export function ownerRecipients(endpoint: StreamEndpoint, userId: number, appId?: number, revokedTokenId?: number): BoundQuery {
  const byApp = appId !== undefined;
  const revoking = revokedTokenId !== undefined;
  return boundShape(
    `route-owner:${byApp}:${revoking}`,
    () => {
      const app = byApp ? sql`AND s.app_id = ${v("app")}` : sql``;
      const revoked = revoking ? sql`s.token_id = ${v("revoked")} OR` : sql``;
      return sql`SELECT s.id, s.connection_id, s.user_id FROM stream_subscriptions s
        WHERE s.endpoint = ${v("endpoint")} AND s.user_id = ${v("user")} ${app} AND (${revoked} ${liveSubscriber})`;
    },
    { endpoint, user: userId, app: appId, revoked: revokedTokenId },
  );
}

/** Channel `c` is readable by any user (canReadSql without a viewer-specific part). */
const ANY_USER_READS = sql`(c.read_public = 1 OR c.read_any_user = 1 OR c.write_any_user = 1)`;

// App stream audiences of private events: one row `{apps}`, a JSON array of app ids, or null
// for "every app" (no row: nobody).

/** The apps that the given users have authorized. */
export function appsAuthorizedBy(userIds: number[]): BoundQuery {
  return boundShape(
    "audience-authorized",
    () => sql`SELECT ${jsonArrayAgg(sql`app_id`, true)} AS apps FROM authorizations
        WHERE user_id IN ${inList(v("users"))}`,
    { users: JSON.stringify(userIds) },
  );
}

/**
 * Who may hear of a channel's events: every app when any user may read the channel, otherwise
 * the apps authorized by its owner and ACL members (its readers now: a subscriber removed from
 * the ACL is no longer one).
 */
export function channelAudience(channelId: number): BoundQuery {
  return boundShape("audience-channel", () => channelAudienceSql(v("channel")), { channel: channelId });
}

function channelAudienceSql(channelId: SQL): SQL {
  return sql`SELECT CASE WHEN ${ANY_USER_READS} THEN NULL ELSE (
          SELECT ${jsonArrayAgg(sql`a.app_id`, true)} FROM authorizations a WHERE a.user_id IN (
            SELECT c.owner_id
            UNION SELECT user_id FROM channel_acl WHERE channel_id = c.id)
        ) END AS apps
        FROM channels c WHERE c.id = ${channelId}`;
}

/**
 * Who may hear that `userId` set a presence in a channel: the apps that user authorized, and of
 * those only the ones that may see the channel (any user may read it, or its owner or one of
 * its ACL members authorized the app).
 */
export function channelPresenceAudience(channelId: number, userId: number): BoundQuery {
  return boundShape("audience-channel-presence", () => channelPresenceAudienceSql(v("channel"), v("user")), { channel: channelId, user: userId });
}

function channelPresenceAudienceSql(channelId: SQL, userId: SQL): SQL {
  return sql`SELECT ${jsonArrayAgg(sql`a.app_id`, true)} AS apps FROM authorizations a, channels c
        WHERE a.user_id = ${userId} AND c.id = ${channelId}
          AND (${ANY_USER_READS} OR a.app_id IN (
            SELECT m.app_id FROM authorizations m WHERE m.user_id IN (
              SELECT c.owner_id
              UNION SELECT user_id FROM channel_acl WHERE channel_id = c.id)))`;
}
