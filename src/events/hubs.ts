import { MORE_LIMITS } from "../config";
import { OBJECT_TYPES, type ObjectType } from "./publish";

/**
 * Where stream sockets live, and how the rest of the Worker reaches them:
 * - app stream sockets: a ring of hub objects named `shard:<i>`, i < the ring's count (README
 *   "Streams: the app hub ring"). Every app event goes to every hub of the ring, which stores it
 *   once and sends it to its sockets that listen for its type; so any hub can replay any key. A
 *   key's sockets live on its owner (jump consistent hash of `<app>:<key>` over the count), where
 *   its connection limit is counted. The relay holds the active ring and grows it;
 * - user stream sockets: USER_STREAM_SHARDS hub objects; a user always lands on the same
 *   shard, which holds all of that user's connections and their subscriptions, so one call to
 *   a shard delivers an event to many users at once (src/events/deliver.ts);
 * - the app stream registry: one object per app, which serializes stream creation.
 */

/** The app hub count of a deployment that never set APP_STREAM_HUBS (and of the first ring). */
export const DEFAULT_APP_STREAM_HUBS = 4;
/** The most app hubs a ring may have (every hub takes every app event: more adds storage, not throughput). */
export const MAX_APP_STREAM_HUBS = 64;

/** The active app hub ring: its size, and a version that grows with every change (newer wins). */
export interface AppRing {
  count: number;
  version: number;
}

/** One hub's place in a ring. */
export interface RingSeat extends AppRing {
  index: number;
}

export const FIRST_RING: AppRing = { count: DEFAULT_APP_STREAM_HUBS, version: 0 };

/** The ring size the deployment asks for (wrangler var APP_STREAM_HUBS), or the default. */
export function configuredAppHubs(env: object): number {
  const v = (env as { APP_STREAM_HUBS?: string }).APP_STREAM_HUBS;
  const n = v && /^\d{1,3}$/.test(v) ? Number(v) : DEFAULT_APP_STREAM_HUBS;
  return Math.min(Math.max(n, 1), MAX_APP_STREAM_HUBS);
}

/** FNV-1a, 64 bits: a stable, well-spread hash of a stream key. */
function keyHash(appId: number, key: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(`${appId}:${key}`)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h;
}

/**
 * Jump consistent hash (Lamping & Veach, 2014): the bucket of `hash` among `buckets`. Growing
 * from n to m buckets moves only the keys that land in the new buckets (about (m-n)/m of them);
 * shrinking moves only the keys of the removed ones.
 */
export function jumpHash(hash: bigint, buckets: number): number {
  let key = hash;
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    key = (key * 2862933555777941757n + 1n) & 0xffffffffffffffffn;
    j = Math.floor((b + 1) * (2 ** 31 / (Number(key >> 33n) + 1)));
  }
  return b;
}

/** The index of the hub that owns an app stream key in a ring of `count` hubs. */
export const appHubIndex = (appId: number, key: string, count: number) => jumpHash(keyHash(appId, key), count);

/** App hub `i` of the ring (names are stable: hubs 0-3 are the shards of earlier versions). */
export const appHubAt = (env: Env, index: number) => env.APP_STREAM_HUB.getByName(`shard:${index}`);

/** Every hub of a ring, with its seat. */
export const appRingHubs = (env: Env, ring: AppRing) =>
  Array.from({ length: ring.count }, (_, index) => ({ hub: appHubAt(env, index), seat: { ...ring, index } satisfies RingSeat }));

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
 * newer socket resumed the same user stream connection; 4004 that the app hub ring changed and
 * the key has a new owner: reconnect at once with `since` (nothing is lost or repeated).
 */
export const CLOSE = {
  idle: { code: 4000, reason: `idle: no client message for ${MORE_LIMITS.streamIdleSeconds} seconds` },
  deleted: { code: 4001, reason: "stream deleted" },
  replaced: { code: 4002, reason: "connection resumed by another socket" },
  revoked: { code: 4003, reason: "access token deleted" },
  moved: { code: 4004, reason: "stream moved: reconnect with since" },
} as const;
