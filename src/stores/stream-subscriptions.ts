import { inArray, sql, type SQL } from "drizzle-orm";
import { runOne } from "../db/batch";
import { inList, jsonArrayAgg } from "../db/dialect";
import { schema, type Db } from "../db";

const { streamSubscriptions } = schema;

/** What a user-stream subscription listens to: one name per subscribable endpoint (decisions §8). */
export const STREAM_ENDPOINTS = ["posts_me", "posts_unified", "mentions", "channel_messages", "token", "files", "presence"] as const;
export type StreamEndpoint = (typeof STREAM_ENDPOINTS)[number];

export type SubscriptionRecord = typeof streamSubscriptions.$inferSelect;

export async function insertSubscription(db: Db, row: SubscriptionRecord): Promise<void> {
  await db.insert(streamSubscriptions).values(row);
}

export async function deleteSubscriptions(db: Db, ids: string[]): Promise<void> {
  if (ids.length) await db.delete(streamSubscriptions).where(inArray(streamSubscriptions.id, ids));
}

export async function deleteConnectionSubscriptions(db: Db, connectionIds: string[]): Promise<void> {
  if (connectionIds.length) await db.delete(streamSubscriptions).where(inArray(streamSubscriptions.connectionId, connectionIds));
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

/** Subscribers hidden from `authorId`: those who muted or blocked them, or whom they blocked. */
const notHiddenFrom = (authorId: number) => sql`
  NOT EXISTS (SELECT 1 FROM user_mutes m WHERE m.user_id = s.user_id AND m.muted_id = ${authorId})
  AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.user_id = s.user_id AND b.blocked_id = ${authorId})
  AND NOT EXISTS (SELECT 1 FROM user_blocks b WHERE b.user_id = ${authorId} AND b.blocked_id = s.user_id)`;

/**
 * A post by `authorId` mentioning `mentionIds`: the personal streams (`posts_me`,
 * `posts_unified`) of the author and their followers, and the mention streams (`mentions`,
 * `posts_unified`) of the mentioned users; muted and blocked users left out.
 */
export function postRecipients(authorId: number, mentionIds: number[]): SQL {
  return sql`SELECT s.id, s.connection_id, s.user_id FROM stream_subscriptions s
        WHERE s.endpoint IN ('posts_me', 'posts_unified')
          AND (s.user_id = ${authorId} OR s.user_id IN (SELECT follower_id FROM follows WHERE followed_id = ${authorId}))
          AND ${notHiddenFrom(authorId)}
        UNION
        SELECT s.id, s.connection_id, s.user_id FROM stream_subscriptions s
        WHERE s.endpoint IN ('mentions', 'posts_unified')
          AND s.user_id IN ${inList(mentionIds)}
          AND ${notHiddenFrom(authorId)}`;
}

/** Subscriptions to one channel's messages. */
export function channelRecipients(channelId: number): SQL {
  return sql`SELECT id, connection_id, user_id FROM stream_subscriptions
        WHERE channel_id = ${channelId} AND endpoint = 'channel_messages'`;
}

/** One user's subscriptions to `endpoint` (only those made through `appId`'s connections when given). */
export function ownerRecipients(endpoint: StreamEndpoint, userId: number, appId?: number): SQL {
  return sql`SELECT id, connection_id, user_id FROM stream_subscriptions
        WHERE endpoint = ${endpoint} AND user_id = ${userId} ${appId === undefined ? sql`` : sql`AND app_id = ${appId}`}`;
}

/** Every subscription to `endpoint` (presence: the online list is everyone's). */
export function endpointRecipients(endpoint: StreamEndpoint): SQL {
  return sql`SELECT id, connection_id, user_id FROM stream_subscriptions WHERE endpoint = ${endpoint}`;
}

// App stream audiences of private events: one row `{apps}`, a JSON array of app ids, or null
// for "every app" (no row: nobody).

/** The apps that the given users have authorized. */
export function appsAuthorizedBy(userIds: number[]): SQL {
  return sql`SELECT ${jsonArrayAgg(sql`app_id`, true)} AS apps FROM authorizations
        WHERE user_id IN ${inList(userIds)}`;
}

/**
 * Who may hear of a channel's events: every app when anyone may read the channel, otherwise
 * the apps authorized by its owner, ACL members and subscribers.
 */
export function channelAudience(channelId: number): SQL {
  return sql`SELECT CASE WHEN c.read_public = 1 OR c.read_any_user = 1 THEN NULL ELSE (
          SELECT ${jsonArrayAgg(sql`a.app_id`, true)} FROM authorizations a WHERE a.user_id IN (
            SELECT c.owner_id
            UNION SELECT user_id FROM channel_acl WHERE channel_id = c.id
            UNION SELECT user_id FROM subscriptions WHERE channel_id = c.id)
        ) END AS apps
        FROM channels c WHERE c.id = ${channelId}`;
}

/**
 * Who may hear that `userId` set a presence in a channel: the apps that user authorized, and of
 * those only the ones that may see the channel (anyone may read it, or one of its owner, ACL
 * members and subscribers authorized the app).
 */
export function channelPresenceAudience(channelId: number, userId: number): SQL {
  return sql`SELECT ${jsonArrayAgg(sql`a.app_id`, true)} AS apps FROM authorizations a, channels c
        WHERE a.user_id = ${userId} AND c.id = ${channelId}
          AND (c.read_public = 1 OR c.read_any_user = 1 OR a.app_id IN (
            SELECT m.app_id FROM authorizations m WHERE m.user_id IN (
              SELECT c.owner_id
              UNION SELECT user_id FROM channel_acl WHERE channel_id = c.id
              UNION SELECT user_id FROM subscriptions WHERE channel_id = c.id)))`;
}
