import { MORE_LIMITS } from "../config";
import { OBJECT_TYPES, type ObjectType } from "./publish";

/**
 * Where stream sockets live, and how the rest of the Worker reaches them:
 * - app stream sockets: APP_STREAM_SHARDS hub objects; a stream key always lands on the same
 *   shard (so its connection limit is counted in one place), and each event goes once to
 *   every shard, which sends it only to the sockets whose stream listens for its type;
 * - user stream sockets: one hub object per user, holding that user's connections and their
 *   subscriptions;
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

export const userHubFor = (env: Env, userId: number) => env.USER_STREAM_HUB.getByName(`user:${userId}`);

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
