import type { AppHubEvent } from "../events/deliver";
import { frameText, type ReplayGap, type ReplayLimits } from "../events/replay";
import type { ReplayRead } from "./replay-sockets";

/**
 * App stream cursors are outbox sequences, which start above SEQ_BASE (a migration moved the
 * outbox's numbering there). Anything below is a cursor of the per-key numbering of earlier
 * versions: its position cannot be mapped, so it is answered with a gap, never read as a sequence.
 */
export const SEQ_BASE = 1_000_000_000_000;

/** One stored event as it travels from hub to hub when the ring grows. */
export interface LogRow {
  seq: number;
  at: number;
  mask: number;
  apps: string | null;
  type: string;
  timestamp: number;
  deleted: number;
  meta: string | null;
  data: string;
}

/** What a new hub needs besides the rows: where the log starts and what it applied, and deleted keys. */
export interface LogState {
  applied: number;
  floor: number | null;
  keyFloors: { app_id: number; key: string; floor: number }[];
}

/** Where a `since` puts a socket: after a stored position, ahead of this hub, or nowhere (a gap). */
export type SinceCheck = { after: number } | { ahead: number } | { gap: ReplayGap };

/**
 * The event log of one app stream hub, in the object's SQLite (survives eviction and restarts).
 * Each app event is stored ONCE with its outbox sequence, its type bit and app audience; sockets
 * and replays filter it. Nothing is stored per key, so publishing costs the same whatever the
 * number of listening keys. `floor`: the log holds every event this hub applied after it
 * (a `since` below it is a gap); `applied`: the highest sequence stored. A deleted stream leaves
 * a key floor at the position of its deletion: an older cursor is a gap for a re-created key (a
 * cursor AT that position asks for exactly what the new stream is owed).
 */
export class AppEventLog {
  /**
   * `app_log_state` as last read or written: only this object writes it, and a hub publishes
   * several events a second, each reading `applied` and `floor` (and the ring's three values): a
   * SQL read each was ~5 % of the runtime's CPU for a post created with no app stream listening.
   */
  private readonly stateCache = new Map<string, number | null>();

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS app_log (
      seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, mask INTEGER NOT NULL, apps TEXT, type TEXT NOT NULL,
      timestamp INTEGER NOT NULL, deleted INTEGER NOT NULL, meta TEXT, data TEXT NOT NULL)`);
    sql.exec("CREATE TABLE IF NOT EXISTS app_log_state (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
    sql.exec(
      "CREATE TABLE IF NOT EXISTS app_key_floors (app_id INTEGER NOT NULL, key TEXT NOT NULL, floor INTEGER NOT NULL, PRIMARY KEY (app_id, key)) WITHOUT ROWID",
    );
  }

  state(name: string): number | null {
    if (this.stateCache.has(name)) return this.stateCache.get(name)!;
    const value = this.sql.exec<{ value: number }>("SELECT value FROM app_log_state WHERE name = ?", name).toArray()[0]?.value ?? null;
    this.stateCache.set(name, value);
    return value;
  }

  setState(name: string, value: number): void {
    this.sql.exec("INSERT INTO app_log_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value", name, value);
    this.stateCache.set(name, value);
  }

  /** Deletes `applied` and `floor` (the log's position) from the state. */
  private forgetPosition(): void {
    this.sql.exec("DELETE FROM app_log_state WHERE name IN ('applied', 'floor')");
    this.stateCache.delete("applied");
    this.stateCache.delete("floor");
  }

  /** The highest sequence this hub stored (0: none yet). */
  applied(): number {
    return this.state("applied") ?? 0;
  }

  /** The position a new socket starts after: the latest stored sequence, or SEQ_BASE (before every event) on an empty log. */
  position(): number {
    return Math.max(this.applied(), SEQ_BASE);
  }

  /** Stores an event; false when its sequence was applied before (a relay repeat). */
  append(e: AppHubEvent, at: number): boolean {
    const applied = this.applied();
    if (e.seq <= applied) return false;
    // An empty log in the ring has missed nothing: every app event above SEQ_BASE reaches every hub.
    if (this.state("floor") === null) this.setState("floor", SEQ_BASE);
    this.sql.exec(
      "INSERT INTO app_log (seq, at, mask, apps, type, timestamp, deleted, meta, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      e.seq,
      at,
      e.mask,
      e.appIds === null ? null : JSON.stringify(e.appIds),
      e.event.type,
      e.event.timestamp,
      e.event.isDeleted ? 1 : 0,
      e.meta || null,
      e.event.data,
    );
    this.setState("applied", e.seq);
    return true;
  }

  /** Where a reconnect of key (app, key) with `since` starts. */
  checkSince(appId: number, key: string, since: string): SinceCheck {
    if (!/^\d{1,15}$/.test(since)) return { gap: "unknown" };
    const cursor = Number(since);
    if (cursor < SEQ_BASE) return { gap: "expired" };
    const floor = this.state("floor");
    // SEQ_BASE is the position an empty log gives (before every event); any other cursor on a log
    // with no history cannot be told from one it never saw: a gap, not a silent skip.
    if (floor === null) return cursor === SEQ_BASE ? { after: SEQ_BASE } : { gap: "expired" };
    const applied = this.applied();
    if (cursor > Math.max(applied, SEQ_BASE)) return { ahead: cursor };
    const keyFloor = this.sql.exec<{ floor: number }>("SELECT floor FROM app_key_floors WHERE app_id = ? AND key = ?", appId, key).toArray()[0]?.floor ?? 0;
    if (cursor < floor || cursor < keyFloor) return { gap: "expired" };
    return { after: cursor };
  }

  /** The events after `after` that a socket of app `appId` listening for `mask` takes, in order, as frames. */
  read(after: number, limit: number, mask: number, appId: number): ReplayRead[] {
    return this.sql
      .exec<{ seq: number; type: string; timestamp: number; deleted: number; meta: string | null; data: string }>(
        `SELECT seq, type, timestamp, deleted, meta, data FROM app_log
         WHERE seq > ? AND (mask & ?) <> 0 AND (apps IS NULL OR EXISTS (SELECT 1 FROM json_each(apps) WHERE value = ?))
         ORDER BY seq LIMIT ?`,
        after,
        mask,
        appId,
        limit,
      )
      .toArray()
      .map((r) => ({
        seq: r.seq,
        frame: frameText({ type: r.type, timestamp: r.timestamp, isDeleted: r.deleted === 1, data: r.data }, r.seq, r.meta ?? undefined),
      }));
  }

  /** A deleted stream: cursors issued so far are not positions of a stream re-created with its key. */
  closeKey(appId: number, key: string): void {
    this.sql.exec(
      "INSERT INTO app_key_floors (app_id, key, floor) VALUES (?, ?, ?) ON CONFLICT (app_id, key) DO UPDATE SET floor = excluded.floor",
      appId,
      key,
      this.applied(),
    );
  }

  /**
   * Keeps every event younger than `limits.seconds` AND the newest `limits.events`; the rest
   * goes (cost proportional to what is deleted) and the floor rises past it.
   */
  trim(now: number, limits: ReplayLimits): void {
    const young = this.sql
      .exec<{ seq: number }>("SELECT seq FROM app_log WHERE at >= ? ORDER BY at, seq LIMIT 1", now - limits.seconds * 1000)
      .toArray()[0]?.seq;
    const newest = this.sql.exec<{ seq: number }>("SELECT seq FROM app_log ORDER BY seq DESC LIMIT 1 OFFSET ?", limits.events - 1).toArray()[0]?.seq;
    if (newest === undefined) return; // fewer than limits.events kept
    const keepFrom = Math.min(newest, young ?? Infinity);
    const cut = this.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM app_log WHERE seq < ?", keepFrom).one().seq;
    if (cut === null) return;
    this.sql.exec("DELETE FROM app_log WHERE seq <= ?", cut);
    this.setState("floor", Math.max(cut, this.state("floor") ?? 0));
    this.sql.exec("DELETE FROM app_key_floors WHERE floor <= ?", cut);
  }

  /** True when the log holds events its alarm must trim later. */
  hasEvents(): boolean {
    return this.sql.exec("SELECT 1 FROM app_log LIMIT 1").toArray().length > 0;
  }

  /** Rows after `after`, in order, for a hub joining the ring; with the log's state on the first page. */
  exportRows(after: number, limit: number): { rows: LogRow[]; state?: LogState } {
    const rows = this.sql
      .exec<LogRow & Record<string, SqlStorageValue>>(
        "SELECT seq, at, mask, apps, type, timestamp, deleted, meta, data FROM app_log WHERE seq > ? ORDER BY seq LIMIT ?",
        after,
        limit,
      )
      .toArray();
    if (after > 0) return { rows };
    const keyFloors = this.sql.exec<{ app_id: number; key: string; floor: number }>("SELECT app_id, key, floor FROM app_key_floors").toArray();
    return { rows, state: { applied: this.applied(), floor: this.state("floor"), keyFloors } };
  }

  /** Replaces this log with another hub's (first page: `state` given) or adds a further page. */
  importRows(rows: LogRow[], state?: LogState): void {
    if (state) {
      this.sql.exec("DELETE FROM app_log");
      this.sql.exec("DELETE FROM app_key_floors");
      this.forgetPosition();
      if (state.floor !== null) this.setState("floor", state.floor);
      if (state.applied) this.setState("applied", state.applied);
      for (const k of state.keyFloors) this.sql.exec("INSERT INTO app_key_floors (app_id, key, floor) VALUES (?, ?, ?)", k.app_id, k.key, k.floor);
    }
    for (const r of rows) {
      this.sql.exec(
        "INSERT OR IGNORE INTO app_log (seq, at, mask, apps, type, timestamp, deleted, meta, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        r.seq,
        r.at,
        r.mask,
        r.apps,
        r.type,
        r.timestamp,
        r.deleted,
        r.meta,
        r.data,
      );
    }
  }

  /** Forgets everything (a hub leaving the ring: a later return starts from another hub's copy). */
  clear(): void {
    this.sql.exec("DELETE FROM app_log");
    this.sql.exec("DELETE FROM app_key_floors");
    this.forgetPosition();
  }
}
