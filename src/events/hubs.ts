import { MORE_LIMITS } from "../config";
import { OBJECT_TYPES, type ObjectType } from "./publish";

/**
 * Where stream sockets live, and how the rest of the Worker reaches them:
 * - app stream sockets: APP_STREAM_SHARDS hub objects; a stream key always lands on the same
 *   shard (so its connection limit is counted in one place), and each event goes once to
 *   every shard, which sends it only to the sockets whose stream listens for its type;
 * - user stream sockets: USER_STREAM_SHARDS hub objects; a user always lands on the same
 *   shard, which holds all of that user's connections and their subscriptions, so one call to
 *   a shard delivers an event to many users at once (src/events/deliver.ts);
 * - the app stream registry: one object per app, which serializes stream creation.
 */
export const APP_STREAM_SHARDS = 4;

/** FNV-1a: a stable, well-spread shard number for a stream key. */
function shardOf(appId: number, key: string): number {
  let h = 0x811c9dc5;
  for (const ch of `${appId}:${key}`) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % APP_STREAM_SHARDS;
}

const appHubShard = (env: Env, shard: number) => env.APP_STREAM_HUB.getByName(`shard:${shard}`);

/** The hub shard that holds the sockets of one app stream. */
export const appHubFor = (env: Env, appId: number, key: string) => appHubShard(env, shardOf(appId, key));

/** The hub shards holding the given stream keys of an app, each with its keys (for closing deleted streams). */
export function appHubsFor(env: Env, appId: number, keys: string[]) {
  const byShard = new Map<number, string[]>();
  for (const key of keys) {
    const shard = shardOf(appId, key);
    byShard.set(shard, [...(byShard.get(shard) ?? []), key]);
  }
  return [...byShard].map(([shard, shardKeys]) => ({ hub: appHubShard(env, shard), keys: shardKeys }));
}

export const allAppHubs = (env: Env) => Array.from({ length: APP_STREAM_SHARDS }, (_, i) => appHubShard(env, i));

/**
 * User stream hub shards. Fixed: a user's resumable connections and replay buffers live on
 * their shard, so changing the count drops every open user stream (clients reconnect and get
 * "names no user stream" for an old `connection_id`). 32 shards keep a post to any number of
 * followers within 32 × ⌈recipients per shard / USER_FANOUT_BATCH⌉ calls.
 */
export const USER_STREAM_SHARDS = 32;

/** At most this many connections are named in one call to a user stream hub (deliveries are batched). */
export const USER_FANOUT_BATCH = 500;

/** A user's shard: Knuth's multiplicative hash, so consecutive ids spread over the shards. */
export const userShardOf = (userId: number) => (Math.imul(userId, 0x9e3779b1) >>> 0) % USER_STREAM_SHARDS;

export const userHubShard = (env: Env, shard: number) => env.USER_STREAM_HUB.getByName(`users:${shard}`);

/** The hub shard holding a user's stream connections. */
export const userHubFor = (env: Env, userId: number) => userHubShard(env, userShardOf(userId));

export const appStreamRegistryFor = (env: Env, appId: number) => env.APP_STREAM_REGISTRY.getByName(`app:${appId}`);

/** Object types as a bit mask (14 types): how a hub matches an event against a stream's types. */
export function typeMask(types: readonly string[]): number {
  let mask = 0;
  for (const t of types) {
    const i = OBJECT_TYPES.indexOf(t as ObjectType);
    if (i >= 0) mask |= 1 << i;
  }
  return mask;
}

/** A fresh opaque id for a connection or subscription (128 random bits, hex). */
export const randomId = () => crypto.randomUUID().replaceAll("-", "");

/**
 * Close codes sent to stream sockets. Clients reconnect after 4000 (and send a message, e.g.
 * `ping`, at least every 60 s); 4001 and 4003 mean the stream or its token is gone; 4002 that a
 * newer socket resumed the same user stream connection.
 */
export const CLOSE = {
  idle: { code: 4000, reason: `idle: no client message for ${MORE_LIMITS.streamIdleSeconds} seconds` },
  deleted: { code: 4001, reason: "stream deleted" },
  replaced: { code: 4002, reason: "connection resumed by another socket" },
  revoked: { code: 4003, reason: "access token deleted" },
} as const;
