import { sql, type SQL } from "drizzle-orm";
import { dialect } from "../db/dialect";
import type { Db } from "../db";
import { placeholder, runBatch } from "../db/batch";
import type { DomainEvent, EventType, StampedEvent } from "./publish";

/**
 * The transactional outbox (table `stream_outbox`, docs/streams.md, "Outbox and relay").
 *
 * A write that causes an event adds `reserveEvent(...)` to its own D1 batch / Postgres
 * transaction: the row commits with the data or not at all, and its autoincrement id is the
 * event's global sequence. The row holds a *reference* (type, object id, is_deleted, route,
 * origin), not the rendered event: the event's data is the object as read back after the write
 * (ids, counts, rendered text), which is not known when the batch is built. After commit the
 * writer renders the event as before and hands it to the relay (a latency hint that saves the
 * relay a read); a row whose rendering never arrived (the writer died) is rendered by the relay
 * from its reference (src/events/outbox-render.ts).
 *
 * Writes not converted yet call `publish` without a reservation: their rendered events are
 * inserted after commit with their payload (`appendEvents`), ordered and retried like the rest
 * but not atomic with the write.
 */

/** What the relay needs to render an event from the database when the writer's rendering is lost. */
export interface OutboxRef {
  /** The object's id, filled in by the batch (it may be allocated by the batch itself). */
  id?: number;
  isDeleted?: boolean;
  route?: DomainEvent["route"];
  /** The origin links in the rendered object use (the request's, when PUBLIC_ORIGIN is empty). */
  origin: string;
  /** The object's key when it has no numeric id (a marker's name). */
  key?: string;
}

/** Any number the advisory lock uses; it only has to be the same for every writer of the outbox. */
const OUTBOX_LOCK = 4_807_001;

/**
 * Postgres hands sequence values out at insert, not at commit, so without care a row with a
 * lower id could become visible after a higher one and a relay reading `id > cursor` would pass
 * it by. The insert first takes a transaction-scoped advisory lock, held to commit: outbox
 * writers commit one at a time, in id order (D1 serializes every write already).
 */
const lockSource = dialect.transactionLock(OUTBOX_LOCK);

/**
 * The statement, for the write's own batch, that records an event; its one row is `{id}` (the
 * sequence). `objectId`: a SQL expression of the object's id when the batch allocates it.
 * `when`: a condition on the batch's state so far; the row is written (and a sequence used) only
 * if it holds (a write guarded by quota or state that may have changed nothing), else no row.
 */
export function reserveEvent(type: EventType, ref: OutboxRef, at: number, objectId?: SQL, when?: SQL): SQL {
  const { id, ...rest } = ref;
  const refSql = objectId ? refText(rest, { id: objectId }) : sql`${refJson(ref)}`;
  return reserveSql(type, refSql, at, when);
}

/** A reference whose id is known before the batch, as stored: its fields, the id last. */
const refJson = ({ id, ...rest }: OutboxRef) => JSON.stringify({ ...rest, ...(id !== undefined ? { id } : {}) });

/**
 * `reserveEvent(type, ref, at)` for a statement compiled once per shape, when the ref's id is
 * known before the batch: the placeholders that `refValues` fills.
 */
export const reserveRefShape = (type: EventType): SQL => reserveSql(type, placeholder("eventJson"), placeholder("eventAt"));

/** The values of `reserveRefShape`'s placeholders. */
export const refValues = (ref: OutboxRef, at: number) => ({ eventJson: refJson(ref), eventAt: at });

const reserveSql = (type: EventType, refSql: SQL, at: number | SQL, when?: SQL) =>
  sql`INSERT INTO stream_outbox (type, ref, created_at) SELECT ${type}, ${refSql}, ${at} ${lockSource} ${when ? sql`WHERE ${when}` : sql``} RETURNING id`;

/**
 * `reserveEvent(type, ref, at, objectId)` for a statement compiled once per shape: the ref and
 * time are the placeholders that `reservedValues` fills (the same text and values as `refText`'s).
 */
export function reserveEventShape(type: EventType, objectId: SQL): SQL {
  const ref = sql`(${placeholder("eventRef")} || ${placeholder("eventSep")} || CAST(${objectId} AS TEXT) || '}')`;
  return reserveSql(type, ref, placeholder("eventAt"));
}

/** The values of `reserveEventShape`'s placeholders. */
export function reservedValues(ref: OutboxRef, at: number) {
  const { id: _, ...rest } = ref;
  const { head, before } = refParts(rest, ["id"]);
  return { eventRef: head, eventSep: before[0], eventAt: at };
}

/** `ref`'s JSON text without its closing brace, and the text before each field of `names` spliced in after it. */
function refParts(ref: Omit<OutboxRef, "id">, names: string[]): { head: string; before: string[] } {
  const json = JSON.stringify(ref);
  const empty = json.length <= 2;
  return { head: json.slice(0, -1), before: names.map((name, i) => (empty && i === 0 ? "" : ",") + JSON.stringify(name) + ":") };
}

/**
 * A reference as a SQL text expression: `ref`'s JSON with `fields` (SQL expressions, numbers or
 * JSON fragments) spliced in. A field that is NULL makes the whole text NULL: no event.
 */
export function refText(ref: Omit<OutboxRef, "id">, fields: Record<string, SQL>): SQL {
  const { head, before } = refParts(ref, Object.keys(fields));
  let out = sql`${head}`;
  for (const [i, value] of Object.values(fields).entries()) out = sql`${out} || ${before[i]} || CAST(${value} AS TEXT)`;
  return sql`(${out} || '}')`;
}

/**
 * A reservation for a write whose own statements destroy what says whether it happened (a
 * delete, an insert that may do nothing): `capture` goes where that still shows, `insert` last.
 * `ref` is a SQL text (see `refText`), NULL when there is no event.
 *
 * On D1 (batches run one at a time) `capture` is the insert itself and `insert` a no-op. On
 * Postgres the row must be inserted last, under the outbox lock: taken earlier, the lock would
 * be held while the batch waits for row locks that another writer holds while it waits for the
 * outbox lock (a deadlock). So `capture` keeps the reference in a transaction-local setting and
 * `insert` reads it back. `slot` tells apart several reservations of one batch.
 */
export function reserveCaptured(type: EventType, at: number | SQL, ref: SQL, slot = 0): { capture: SQL; insert: SQL } {
  if (dialect.serializesWrites) {
    return {
      capture: sql`INSERT INTO stream_outbox (type, ref, created_at) SELECT ${type}, r.ref, ${at} FROM (SELECT ${ref} AS ref) r WHERE r.ref IS NOT NULL RETURNING id`,
      insert: sql`SELECT NULL AS id WHERE 1 = 0`,
    };
  }
  const name = `stream_outbox.ref${slot}`;
  return {
    capture: sql`SELECT set_config(${name}, COALESCE(${ref}, ''), true) AS captured`,
    insert: sql`INSERT INTO stream_outbox (type, ref, created_at) SELECT ${type}, current_setting(${name}), ${at} ${lockSource}
      WHERE current_setting(${name}, true) <> '' RETURNING id`,
  };
}

/** The sequence of a `reserveCaptured` pair: from whichever of its two statements inserted. */
export const capturedSeq = (capture: { results?: unknown[] } | undefined, insert: { results?: unknown[] } | undefined) =>
  reservedSeq(capture) ?? reservedSeq(insert);

/**
 * The statement, for the write's own batch, that records an event already rendered before the
 * batch (its data does not depend on the write's result: a deletion rendered from the row read
 * before it, a token): atomic with the write, and the relay needs no renderer for it.
 */
export function reserveRendered(event: StampedEvent, when?: SQL): SQL {
  return sql`INSERT INTO stream_outbox (type, payload, created_at) SELECT ${event.type}, ${JSON.stringify(event)}, ${event.timestamp} ${lockSource}${when ? sql` WHERE ${when}` : sql``} RETURNING id`;
}

/** An event a store reserves in its batch (see `reserveEvent`). */
export interface Reservation {
  type: EventType;
  ref: OutboxRef;
  at: number;
  objectId?: SQL;
  when?: SQL;
}

/** The statements of reservations, for the end of a batch (on Postgres they take the outbox lock, held to commit). */
export const reservationsSql = (events: Reservation[]): SQL[] => events.map((e) => reserveEvent(e.type, e.ref, e.at, e.objectId, e.when));

/** The sequences of `n` reservations whose rows precede the last `after` results of a batch (undefined: not written). */
export const seqsBefore = (rows: unknown[][], n: number, after = 1): (number | undefined)[] =>
  rows.slice(rows.length - after - n, rows.length - after).map((r) => reservedSeq({ results: r }));

/** The sequence a `reserveEvent` statement returned (its raw result's first row). */
export const reservedSeq = (result: { results?: unknown[] } | undefined): number | undefined => {
  const row = result?.results?.[0] as { id?: number | string } | undefined;
  return row?.id === undefined ? undefined : Number(row.id);
};

/** Records already rendered events (writes not reserving in their batch, alarms): one batch, one statement each. */
export async function appendEvents(db: Db, events: StampedEvent[]): Promise<StampedEvent[]> {
  if (!events.length) return [];
  const results = await runBatch(
    db,
    events.map(
      (e) => sql`INSERT INTO stream_outbox (type, payload, created_at) SELECT ${e.type}, ${JSON.stringify(e)}, ${e.timestamp} ${lockSource} RETURNING id`,
    ),
  );
  return events.map((e, i) => ({ ...e, seq: reservedSeq(results[i]) }));
}

/** One outbox row as the relay reads it. */
export interface OutboxRow {
  id: number;
  type: EventType;
  ref: string | null;
  payload: string | null;
  created_at: number;
}

/** The next rows after `cursor`, in sequence order. */
export async function rowsAfter(db: Db, cursor: number, limit: number): Promise<OutboxRow[]> {
  const [r] = await runBatch(db, [sql`SELECT id, type, ref, payload, created_at FROM stream_outbox WHERE id > ${cursor} ORDER BY id LIMIT ${limit}`]);
  return (r.results as unknown as OutboxRow[]).map((row) => ({ ...row, id: Number(row.id), created_at: Number(row.created_at) }));
}

/**
 * Drops delivered rows past the replay window: a row goes when it is delivered, older than
 * `seconds` and not among the newest `events` (the same window the hubs keep).
 */
export async function trimOutbox(db: Db, delivered: number, nowSeconds: number, limits: { seconds: number; events: number }): Promise<number> {
  const [r] = await runBatch(db, [
    sql`DELETE FROM stream_outbox WHERE id <= ${delivered} AND created_at < ${nowSeconds - limits.seconds}
      AND id <= (SELECT MAX(id) FROM stream_outbox) - ${limits.events}`,
  ]);
  return r.changes ?? 0;
}
