import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db";
import { batchRows, canReadSql, refreshUnreadSql, type Row } from "./channel-sql";
import { allRows, boundShape, type BoundQuery } from "../db/batch";
import { reserveEvent, seqsBefore, type OutboxRef } from "../events/outbox";
import { violates } from "../db/batch";
import { greatest, inList, int } from "../db/dialect";

// Stream markers (api.md "Stream markers", decisions §6): a saved position per (user, stream).
// `position` is the marker's `id`; `last_read_id` only moves forward unless reset.

/** A marker as stored. */
export interface MarkerRecord {
  name: string;
  position: number;
  lastReadId: number;
  percentage: number;
  version: string;
  updatedAt: number;
}

/** Marker names: the three post streams and `channel:{id}` (decisions §6). */
export const MARKER_NAME = /^(?:global|personal|mentions|channel:(\d{1,18}))$/;

/** The channel id a `channel:{id}` marker names, else null. */
export function markerChannelId(name: string): number | null {
  const m = MARKER_NAME.exec(name);
  return m?.[1] ? Number(m[1]) : null;
}

/** A new opaque version string (changes on every update). */
export const newVersion = () => {
  const bytes = crypto.getRandomValues(new Uint8Array(10));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
};

const COLUMNS = sql`name, position, last_read_id, percentage, version, updated_at`;

/** The read of one marker (a primary-key lookup), to run in the batch of a stream's page. */
export function markerSql(userId: number, name: string): BoundQuery {
  return boundShape("marker", () => sql`SELECT ${COLUMNS} FROM markers WHERE user_id = ${sql.placeholder("user")} AND name = ${sql.placeholder("name")}`, {
    user: userId,
    name,
  });
}

export function readMarker(r: Row | undefined): MarkerRecord | null {
  if (!r) return null;
  return {
    name: String(r.name),
    position: Number(r.position),
    lastReadId: Number(r.last_read_id),
    percentage: Number(r.percentage),
    version: String(r.version),
    updatedAt: Number(r.updated_at),
  };
}

/** One marker by name, or null when the user never set it. */
export async function getMarker(db: Db, userId: number, name: string): Promise<MarkerRecord | null> {
  const [row] = await allRows(db, markerSql(userId, name));
  return readMarker(row);
}

/** The user's markers (only those named, when `names` is given), by name. */
export async function listMarkers(db: Db, userId: number, names?: string[]): Promise<MarkerRecord[]> {
  const only = names ? sql`AND name IN ${inList(names, "text")}` : sql``;
  const rows = await allRows(db, sql`SELECT ${COLUMNS} FROM markers WHERE user_id = ${userId} ${only}`);
  // Sorted here: the two backends' collations could order names differently.
  return rows.map((r) => readMarker(r)!).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export interface MarkerWrite {
  /** The owner; SQL when it is computed (a NULL makes the statement, and its batch, fail). */
  userId: number | SQL;
  /** The marker name; SQL when it is computed in the batch (a new private-message channel). */
  name: string | SQL;
  /** The new `id`; SQL when it is the id a batch just created. */
  position: number | SQL;
  percentage: number;
  /** `reset_read_id`: `last_read_id` takes `position` even when that moves it backwards. */
  reset: boolean;
  version: string;
  at: number;
}

/**
 * The upsert of one marker. `last_read_id` is max(old, new) computed in SQL (unless reset), so
 * concurrent updates never lose a forward move.
 */
export function markerWriteSql(m: MarkerWrite): SQL {
  const lastRead = m.reset ? sql`excluded.last_read_id` : greatest(sql`markers.last_read_id`, sql`excluded.last_read_id`);
  return sql`INSERT INTO markers (user_id, name, position, last_read_id, percentage, version, updated_at)
    VALUES (${m.userId}, ${m.name}, ${m.position}, ${m.position}, ${m.percentage}, ${m.version}, ${m.at})
    ON CONFLICT (user_id, name) DO UPDATE SET position = excluded.position, last_read_id = ${lastRead},
      percentage = excluded.percentage, version = excluded.version, updated_at = excluded.updated_at`;
}

export interface MarkerInput {
  name: string;
  position: number;
  percentage: number;
}

/** `seqs`: the sequences of the `marker` events reserved in the batch, by name (src/events/outbox.ts). */
export type SetMarkersResult = { ok: true; markers: MarkerRecord[]; seqs: Map<string, number | undefined> } | { ok: false; reason: "unreadable_channel" };

/**
 * Writes the markers of one POST /markers in one atomic batch and reads them back. A
 * `channel:{id}` marker is written only if the user may read that channel at write time: its
 * owner is NULL otherwise, which fails the NOT NULL constraint and rolls the whole batch back.
 * Returns the markers in the order of their first appearance (a name given twice is applied twice,
 * in order, and returned once).
 */
export async function setMarkers(db: Db, userId: number, inputs: MarkerInput[], reset: boolean, at: number, event?: OutboxRef): Promise<SetMarkersResult> {
  const writes = inputs.flatMap((m) => {
    const channelId = markerChannelId(m.name);
    const owner = channelId == null ? userId : sql`(SELECT ${int(userId)} FROM channels c WHERE c.id = ${channelId} AND ${canReadSql("c", userId)})`;
    const write = markerWriteSql({ userId: owner, name: m.name, position: m.position, percentage: m.percentage, reset, version: newVersion(), at });
    return channelId == null ? [write] : [write, refreshUnreadSql(userId, channelId)];
  });
  const names = [...new Set(inputs.map((m) => m.name))];
  try {
    // One `marker` event per name, the outbox rows last (on Postgres they take the outbox lock, held to commit).
    const events = event ? names.map((name) => reserveEvent("marker", { ...event, key: name }, at)) : [];
    const rows = await batchRows(db, [
      ...writes,
      ...events,
      sql`SELECT ${COLUMNS} FROM markers WHERE user_id = ${userId} AND name IN ${inList(names, "text")}`,
    ]);
    const byName = new Map(rows[rows.length - 1].map((r) => [String(r.name), readMarker(r)!]));
    const seqs = seqsBefore(rows, events.length);
    return { ok: true, markers: names.map((n) => byName.get(n)!), seqs: new Map(events.length ? names.map((n, i) => [n, seqs[i]]) : []) };
  } catch (err) {
    if (violates(err, "markers", "user_id")) return { ok: false, reason: "unreadable_channel" };
    throw err;
  }
}
