import { checkCursor, frameText, type CursorRange, type ReplayGap, type ReplayLimits, type StoredEvent } from "../events/replay";

/** A stream's numbering and retention, as stored. */
export interface ReplayStream extends CursorRange {
  id: number;
  /** Unix ms after which the stream is dropped (nobody connected); null while a socket is open. */
  retireAt: number | null;
}

/** One entry read back for replay: its cursor and ready frame (null: a type the socket does not take). */
export interface ReplayEntry {
  seq: number;
  frame: string | null;
}

interface StreamRow extends Record<string, SqlStorageValue> {
  id: number;
  floor: number;
  trimmed: number;
  last: number;
  retire_at: number | null;
}

const toStream = (r: StreamRow): ReplayStream => ({ id: r.id, floor: r.floor, trimmed: r.trimmed, last: r.last, retireAt: r.retire_at });

/**
 * The replay buffer of one user stream hub, in the object's own SQLite storage (so it survives
 * eviction and restarts). A *stream* is what a cursor counts: a user stream connection (app stream
 * hubs keep one log of outbox sequences instead: src/objects/app-event-log.ts).
 * Each event is stored once (`replay_events`); each stream that received it gets an entry with
 * its next cursor (`replay_entries`, contiguous per stream: `trimmed + 1 .. last`). Trimming keeps
 * an entry while it is younger than the window OR among its stream's newest `events`; a stream
 * nobody resumed in time is retired, and `hwm` (the highest cursor ever retired) makes the
 * numbering of a stream opened again start above every cursor issued before, so an old cursor
 * reads as expired, never as a position in the new stream.
 */
export class ReplayBuffer {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS replay_events (
      id INTEGER PRIMARY KEY, at INTEGER NOT NULL, type TEXT NOT NULL, timestamp INTEGER NOT NULL,
      deleted INTEGER NOT NULL, data TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS replay_streams (
      id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, floor INTEGER NOT NULL, trimmed INTEGER NOT NULL,
      last INTEGER NOT NULL, retire_at INTEGER)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS replay_entries (
      stream_id INTEGER NOT NULL, seq INTEGER NOT NULL, event_id INTEGER NOT NULL, at INTEGER NOT NULL, extra TEXT,
      PRIMARY KEY (stream_id, seq)) WITHOUT ROWID`);
    sql.exec("CREATE INDEX IF NOT EXISTS replay_entries_event ON replay_entries (event_id)");
    sql.exec("CREATE TABLE IF NOT EXISTS replay_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
    // The highest relay sequence each stream has applied (see `append`); added to older storage.
    const columns = sql.exec<{ name: string }>("SELECT name FROM pragma_table_info('replay_streams')").toArray();
    if (!columns.some((c) => c.name === "relay_seq")) sql.exec("ALTER TABLE replay_streams ADD COLUMN relay_seq INTEGER NOT NULL DEFAULT 0");
  }

  /** The stream of that name, created (numbered above every retired cursor) when missing. */
  open(name: string): ReplayStream {
    const found = this.sql.exec<StreamRow>("SELECT id, floor, trimmed, last, retire_at FROM replay_streams WHERE name = ?", name).toArray()[0];
    if (found) return toStream(found);
    const hwm = this.sql.exec<{ value: number }>("SELECT value FROM replay_meta WHERE name = 'hwm'").toArray()[0]?.value ?? 0;
    const floor = hwm + 1;
    const row = this.sql
      .exec<StreamRow>(
        "INSERT INTO replay_streams (name, floor, trimmed, last) VALUES (?, ?, ?, ?) RETURNING id, floor, trimmed, last, retire_at",
        name,
        floor,
        floor,
        floor,
      )
      .one();
    return toStream(row);
  }

  /** The id of the stream of that name, if it exists. */
  find(name: string): number | undefined {
    return this.sql.exec<{ id: number }>("SELECT id FROM replay_streams WHERE name = ?", name).toArray()[0]?.id;
  }

  get(id: number): ReplayStream | undefined {
    const row = this.sql.exec<StreamRow>("SELECT id, floor, trimmed, last, retire_at FROM replay_streams WHERE id = ?", id).toArray()[0];
    return row && toStream(row);
  }

  /** Streams marked as connected (no retention running). */
  connected(): number[] {
    return this.sql
      .exec<{ id: number }>("SELECT id FROM replay_streams WHERE retire_at IS NULL")
      .toArray()
      .map((r) => r.id);
  }

  /** Where a reconnect with `since` starts: after that cursor, or a gap (then live from `last`). */
  resumeFrom(stream: ReplayStream, since: string | undefined): { after: number; gap?: ReplayGap } {
    if (since === undefined) return { after: stream.last };
    const checked = checkCursor(stream, since);
    return "gap" in checked ? { after: stream.last, gap: checked.gap } : checked;
  }

  /** Marks a stream as connected (retireAt null) or as dropped until `retireAt`. */
  setRetireAt(id: number, retireAt: number | null): void {
    this.sql.exec("UPDATE replay_streams SET retire_at = ? WHERE id = ?", retireAt, id);
  }

  /** Stores an event once; returns its id for `append`. */
  store(e: StoredEvent, at: number): number {
    return this.sql
      .exec<{ id: number }>(
        "INSERT INTO replay_events (at, type, timestamp, deleted, data) VALUES (?, ?, ?, ?, ?) RETURNING id",
        at,
        e.type,
        e.timestamp,
        e.isDeleted ? 1 : 0,
        e.data,
      )
      .one().id;
  }

  /**
   * Gives the stored event the next cursor of each stream (with `extra`, e.g. the
   * subscription ids of a user stream connection); returns the cursor per stream id.
   * With the event's relay sequence `seq`, a stream that already applied it (or a later one) is
   * passed over and left out of the result: the relay delivers in sequence order and repeats a
   * delivery it is not sure of, and one event can reach a hub in several calls (recipient
   * batches), so the check is per stream, not per hub.
   */
  append(eventId: number, at: number, streams: { id: number; extra?: string }[], seq?: number): Map<number, number> {
    // Two statements whatever the number of streams: fan-out to many keys stays cheap.
    const ids = JSON.stringify(streams.map((s) => s.id));
    const numbered = (
      seq === undefined
        ? this.sql.exec<{ id: number; last: number }>(
            "UPDATE replay_streams SET last = last + 1 WHERE id IN (SELECT value FROM json_each(?)) RETURNING id, last",
            ids,
          )
        : this.sql.exec<{ id: number; last: number }>(
            "UPDATE replay_streams SET last = last + 1, relay_seq = ? WHERE id IN (SELECT value FROM json_each(?)) AND relay_seq < ? RETURNING id, last",
            seq,
            ids,
            seq,
          )
    ).toArray();
    const extras = new Map(streams.map((s) => [s.id, s.extra ?? null]));
    this.sql.exec(
      `INSERT INTO replay_entries (stream_id, seq, event_id, at, extra)
       SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?, ?, json_extract(value, '$[2]') FROM json_each(?)`,
      eventId,
      at,
      JSON.stringify(numbered.map((r) => [r.id, r.last, extras.get(r.id)])),
    );
    return new Map(numbered.map((r) => [r.id, r.last]));
  }

  /**
   * The entries of a stream after cursor `after`, in order, up to `limit` of them; those whose
   * type `accept` refuses are left out (their cursors are passed over).
   */
  read(streamId: number, after: number, limit: number, accept: (type: string) => boolean = () => true): ReplayEntry[] {
    const rows = this.sql
      .exec<{ seq: number; extra: string | null; type: string; timestamp: number; deleted: number; data: string }>(
        `SELECT e.seq, e.extra, v.type, v.timestamp, v.deleted, v.data FROM replay_entries e
         JOIN replay_events v ON v.id = e.event_id
         WHERE e.stream_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`,
        streamId,
        after,
        limit,
      )
      .toArray();
    return rows.map((r) => ({
      seq: r.seq,
      frame: accept(r.type) ? frameText({ type: r.type, timestamp: r.timestamp, isDeleted: r.deleted === 1, data: r.data }, r.seq, r.extra ?? undefined) : null,
    }));
  }

  /** Drops a stream and its entries; its cursors stay below those of any stream opened later. */
  retire(id: number): void {
    this.sql.exec(
      `INSERT INTO replay_meta (name, value) SELECT 'hwm', last FROM replay_streams WHERE id = ?
       ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)`,
      id,
    );
    this.sql.exec("DELETE FROM replay_entries WHERE stream_id = ?", id);
    this.sql.exec("DELETE FROM replay_streams WHERE id = ?", id);
  }

  /** Streams whose retention ran out (no socket reconnected in time). */
  expired(now: number): number[] {
    return this.sql
      .exec<{ id: number }>("SELECT id FROM replay_streams WHERE retire_at IS NOT NULL AND retire_at <= ?", now)
      .toArray()
      .map((r) => r.id);
  }

  /**
   * Trims every stream to the window: entries older than `limits.seconds` and beyond the newest
   * `limits.events` go (cost proportional to what is deleted), then events no entry refers to.
   */
  trim(now: number, limits: ReplayLimits): void {
    const cut = now - limits.seconds * 1000;
    for (const s of this.sql.exec<StreamRow>("SELECT id, floor, trimmed, last, retire_at FROM replay_streams").toArray()) {
      const young = this.sql
        .exec<{ seq: number }>("SELECT seq FROM replay_entries WHERE stream_id = ? AND at >= ? ORDER BY seq LIMIT 1", s.id, cut)
        .toArray()[0];
      const upTo = Math.min((young?.seq ?? s.last + 1) - 1, s.last - limits.events);
      if (upTo <= s.trimmed) continue;
      this.sql.exec("DELETE FROM replay_entries WHERE stream_id = ? AND seq <= ?", s.id, upTo);
      this.sql.exec("UPDATE replay_streams SET trimmed = ? WHERE id = ?", upTo, s.id);
    }
    // Ids grow with time: only events older than the window can have lost all their entries.
    const firstYoung = this.sql.exec<{ id: number }>("SELECT id FROM replay_events WHERE at >= ? ORDER BY id LIMIT 1", cut).toArray()[0]?.id;
    this.sql.exec(
      "DELETE FROM replay_events WHERE id < ? AND NOT EXISTS (SELECT 1 FROM replay_entries WHERE event_id = replay_events.id)",
      firstYoung ?? Number.MAX_SAFE_INTEGER,
    );
  }

  /** True when the hub keeps anything that its alarm must trim or retire later. */
  hasStreams(): boolean {
    return this.sql.exec("SELECT 1 FROM replay_streams LIMIT 1").toArray().length > 0;
  }
}
