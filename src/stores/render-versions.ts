import { sql } from "drizzle-orm";
import { BoundQuery, compile } from "../db/batch";
import { isPostgres } from "../db";
import { jsonRows } from "../db/dialect";

// The counters behind cached responses (table render_versions). Database triggers (migration
// render_versions, both backends) bump, in the writing transaction itself:
//   post      on every write to the post (a repost also bumps its original), and bookmarks of it
//   user      on every update of the user's row (profile, counts, disabling) and badge awards
//   app       on updates of the client (its name and link show as a post's `source`)
//   viewer    on the user's follows, mutes, blocks, bookmarks, markers, subscriptions, channel
//             mutes, both sides of a follow, mute or block (what that user sees)
//   inbox     on the user's interaction groups (a new event moves its group)
//   channel   on the channel, its messages, subscriptions, ACL and mutes
//   poll      on the poll, its options and responses
//   list      whole lists: 1 any post, 2 any user's type or disabling, 3 any badge, 4 any message,
//             5 any channel, 6 any client; posts and messages are spread over 64 rows each (by
//             id; rows 64–127 and 256–319) so that concurrent Postgres writers seldom bump the
//             same row
// plus one epoch row (shard < 256, at random) per write, so that "nothing was written between two reads"
// costs one small read.

const SPAN = 2 ** 40;

export const Kind = { post: 1, user: 2, app: 3, viewer: 4, inbox: 5, channel: 6, poll: 7, list: 8 } as const;
export type Kind = keyof typeof Kind;

/** The whole-list rows of `Kind.list`. */
export const List = { posts: 1, userVisibility: 2, badges: 3, messages: 4, channels: 5, apps: 6 } as const;

/** The counter row of one object. */
export const shardOf = (kind: Kind, id: number): number => Kind[kind] * SPAN + id;

const SPREAD = 64;
/** The counter rows of a whole list. */
export function listShards(list: (typeof List)[keyof typeof List]): number[] {
  if (list !== List.posts && list !== List.messages) return [shardOf("list", list)];
  return Array.from({ length: SPREAD }, (_, i) => shardOf("list", list * SPREAD + i));
}

const EPOCH_ROWS = 256;

let epoch: ReturnType<typeof compile> | undefined;
/** The sum of the epoch rows: it moves with every write that bumps any counter. */
export function epochQuery(): BoundQuery {
  epoch ??= compile(sql`SELECT coalesce(sum(version), 0) AS v FROM render_versions WHERE shard < ${EPOCH_ROWS}`);
  return new BoundQuery(epoch, true);
}

let sum: ReturnType<typeof compile> | undefined;
/** The sum of the counters of `shards` (rows never written count 0; counters only grow). */
export function versionSumQuery(shards: readonly number[]): BoundQuery {
  // Primary-key probes whatever the planner's statistics say of the table: on Postgres one index
  // scan over the sorted array, on SQLite one probe per item.
  sum ??= compile(
    isPostgres
      ? sql`SELECT coalesce(sum(version), 0) AS v FROM render_versions WHERE shard = ANY(CAST(${sql.placeholder("shards")} AS BIGINT[]))`
      : sql`SELECT coalesce(sum((SELECT rv.version FROM render_versions rv WHERE rv.shard = j.value)), 0) AS v
          FROM ${jsonRows(sql`${sql.placeholder("shards")}`, "j")}`,
  );
  return new BoundQuery({ sql: sum.sql, params: [isPostgres ? `{${shards.join(",")}}` : JSON.stringify(shards)] }, true);
}

/** The number a `epochQuery` / `versionSumQuery` result holds. */
export const versionOf = (r: { results: Record<string, unknown>[] } | undefined): number | undefined =>
  r?.results[0] ? Number(r.results[0].v) : undefined;
