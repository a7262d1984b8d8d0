/** Schema spec: Presence, app and user streams, and the stream outbox. (See ./columns.ts for the column kinds.) */

import { table, id, int8, int, text, json, createdAt, counter, index } from "./columns";

export const presence = table(
  "presence",
  {
    userId: int8().primaryKey(),
    presence: text().notNull(),
    lastSeenAt: int8().notNull(),
    expiresAt: int8().notNull(),
  },
  {
    indexes: [index("presence_expires", ["expiresAt"])],
  },
);

export const channelPresence = table(
  "channel_presence",
  {
    channelId: int8().notNull(),
    userId: int8().notNull(),
    presence: text().notNull(),
    lastSeenAt: int8().notNull(),
    expiresAt: int8().notNull(),
  },
  {
    primaryKey: ["channelId", "userId"],
    indexes: [index("channel_presence_channel_expires", ["channelId", "expiresAt"])],
    doc: "Per-channel presence (PUT /users/me/presence/channels/{id}): like `presence`, one row per user and channel; a status is live while `expires_at` is in the future, `offline` keeps the row with `expires_at = 0` so `last_seen_at` stays known.",
  },
);

export const presenceVersions = table(
  "presence_versions",
  {
    shard: int().primaryKey(),
    version: counter(),
  },
  {
    doc: "Change counters of the presence list, one per shard of users (user id % 16), bumped by database triggers on every write to `presence` and on renames, avatar changes and disabling of users (migration presence_versions). A reader that sees the same sum in the same snapshot as a list it cached knows nothing in that list changed; shards keep concurrent Postgres writers of different users from contending for one row.",
  },
);

export const appStreams = table(
  "app_streams",
  {
    appId: int8().notNull(),
    key: text().notNull(),
    objectTypes: json().notNull().type("string[]"),
    createdAt: createdAt(),
    position: int().notNull().default(0).doc("Creation order among the app's streams (several can share a second)."),
  },
  {
    primaryKey: ["appId", "key"],
  },
);

export const streamSubscriptions = table(
  "stream_subscriptions",
  {
    id: text().primaryKey().doc("The subscription_id clients see."),
    connectionId: text().notNull(),
    userId: int8().notNull(),
    appId: int8().notNull().doc("App of the token that opened the connection (token events go to that app only)."),
    tokenId: int8().doc("The token that opened the connection: delivery checks it still exists (null on rows made before it was recorded)."),
    endpoint: text().notNull().doc("One of STREAM_ENDPOINTS (src/stores/stream-subscriptions.ts)"),
    channelId: int8(),
    targetId: int8().doc("The post of a `/posts/{id}/thread` subscription."),
    flags: int().notNull().default(0).doc("Routing options of the subscription (bits, src/stores/stream-subscriptions.ts: SUBSCRIPTION_FLAGS)."),
    createdAt: createdAt(),
  },
  {
    indexes: [
      index("stream_subscriptions_endpoint_user", ["endpoint", "userId"]),
      index("stream_subscriptions_channel", ["channelId"]),
      index("stream_subscriptions_connection", ["connectionId"]),
    ],
    doc: "Live user-stream subscriptions (decisions §8): the routing index that events are matched against, so delivery never looks at connections that cannot want the event. A row lives as long as its connection; the user's stream Durable Object writes and removes them.",
  },
);

export const streamOutbox = table(
  "stream_outbox",
  {
    id: id(),
    type: text().notNull(),
    ref: text(),
    payload: text(),
    createdAt: createdAt(),
  },
  {
    doc: 'The transactional outbox of stream events (docs/streams.md, "Outbox and relay"): a row is written in the same batch/transaction as the data that causes the event, so a committed write always has its event and a failed one has none. `id` is the event\'s global sequence (commit order: D1 serializes writers; on Postgres the insert takes a transaction-scoped advisory lock). `ref` says what to render (type, object id, is_deleted, route) when no rendered `payload` reached the relay (src/objects/stream-relay.ts), which delivers rows in order and trims them.',
  },
);

export const realtimeTables = [presence, channelPresence, presenceVersions, appStreams, streamSubscriptions, streamOutbox];
