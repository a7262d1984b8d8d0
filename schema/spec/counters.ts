/**
 * Counters kept by database triggers, one line per counted source (docs/schema.md, "A counted
 * table"): schema/generate/counter-triggers.ts writes both dialects' trigger SQL from this list,
 * `npm run db:generate` prints what no migration defines yet (to append to the new migration),
 * and test/unit/schema-generated.test.ts checks the migrations define exactly what it generates.
 *
 * Counters a request writes itself (users.followers, posts.replies, channels.messages, …) are not
 * here: they are kept in the same batch as the write, by the stores (schema/tables.ts header).
 */

export type TriggerEvent = "insert" | "update" | "delete";

export interface CounterTrigger {
  /** The counter table: one row per shard, `version` bumped by each matching write. */
  counter: string;
  /** The table whose writes bump it. */
  source: string;
  events: TriggerEvent[];
  /** UPDATE only of these columns (`AFTER UPDATE OF …`); all columns when absent. */
  updateOf?: string[];
  /** The source column whose value picks the shard (`<column> % shards`). */
  key: string;
  shards: number;
  /**
   * SQLite trigger name prefix when it is not `<counter>_<source>` (names already in a migration
   * cannot change). SQLite gets one trigger per event (`<name>_<event>` when there are several);
   * Postgres one trigger per source, `<counter>_<source>`, over one function per counter.
   */
  sqliteName?: string;
}

export const counterTriggers: CounterTrigger[] = [
  // The presence list's change counter (presenceVersions in schema/spec/realtime.ts).
  { counter: "presence_versions", source: "presence", events: ["insert", "update", "delete"], key: "user_id", shards: 16, sqliteName: "presence_versions" },
  { counter: "presence_versions", source: "users", events: ["update"], updateOf: ["username", "name", "avatar_url", "is_disabled"], key: "id", shards: 16 },
];

/**
 * Triggers in the migrations that are not counters, written by hand: the SQLite FTS5 search
 * tables' sync (Postgres uses generated tsvector columns instead, no trigger). A new hand-written
 * trigger must be declared above or listed here (the test fails otherwise).
 */
export const handWrittenTriggers = [
  "messages_search_insert",
  "messages_search_delete",
  "posts_search_insert",
  "posts_search_revise",
  "posts_search_delete",
  "posts_search_remove",
  "users_search_insert",
  "users_search_update",
  "users_search_delete",
];
