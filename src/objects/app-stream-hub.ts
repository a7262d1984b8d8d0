import { DurableObject } from "cloudflare:workers";
import { MORE_LIMITS } from "../config";
import type { AppHubEvent } from "../events/deliver";
import { appHubIndex, CLOSE, FIRST_RING, randomId, typeMask, type AppRing, type RingSeat } from "../events/hubs";
import { streamRelay } from "../events/publish";
import { frameText, REPLAY_TRIM_MS, replayLimits, type ReplayGap, type ReplayLimits } from "../events/replay";
import { shapeFrame, shapeKey, type ConnectionParams } from "../events/stream-params";
import { AppEventLog, type LogRow, type LogState } from "./app-event-log";
import { CatchUp } from "./replay-sockets";
import { armAlarm, closeIdleSockets, closeQuietly, completeClose, idleDeadline, touch, type Activity } from "./socket-idle";

/** What the Worker tells the hub about the stream a socket connects to (checked there: token, key). */
export interface AppStreamConnect {
  appId: number;
  key: string;
  objectTypes: string[];
  endpoint: string;
  /** `since`: the `meta.id` of the last event the app processed (an outbox sequence). */
  since?: string;
  /** The connection parameters (`include_html`, `include_raw`, …): how this socket's frames are rendered. */
  params?: ConnectionParams;
  /** The seat the Worker routed to, under the ring it knows. */
  seat: RingSeat;
}

interface Attachment extends Activity {
  connectionId: string;
  appId: number;
  key: string;
  mask: number;
  params?: ConnectionParams;
  /** A `since` ahead of what this hub had applied: live events up to it are not sent. */
  ahead?: number;
}

const attachmentOf = (ws: WebSocket) => ws.deserializeAttachment() as Attachment | null;
const keyTag = (appId: number, key: string) => `k:${appId}:${key}`;
/** Sockets of one app listening for the same types get the same frames: one group. */
const groupTag = (appId: number, mask: number) => `a:${appId}:${mask}`;
const isOpen = (ws: WebSocket) => ws.readyState === WebSocket.OPEN;
const newer = (a: AppRing, b: AppRing) => (b.version > a.version ? b : a);

/**
 * One hub of the app stream ring (src/events/hubs.ts), held with the WebSocket Hibernation API.
 *
 * Every app event of the ring reaches every hub, which stores it once in its log
 * (src/objects/app-event-log.ts) with its outbox sequence, then sends it to the socket groups
 * (`a:<app>:<type mask>`) whose types and app take it. `meta.id` is the sequence, the same on
 * every socket and hub, so a socket resumes on any hub by `since`. Sockets also carry their key
 * (`k:<app>:<key>`): its connection limit, closing a deleted stream, and closing keys this hub
 * no longer owns when the ring changes (close code 4004).
 */
export class AppStreamHub extends DurableObject<Env> {
  private readonly log: AppEventLog;
  private readonly catchUp = new CatchUp();
  private readonly limits: ReplayLimits;
  /** Sockets whose `since` was ahead of this hub when they connected, until it catches up. */
  private readonly ahead = new Map<WebSocket, number>();
  private trimArmed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    // Per-key numbering of earlier versions: their cursors are answered with a gap now.
    for (const t of ["listeners", "listening", "replay_entries", "replay_events", "replay_streams", "replay_meta"])
      ctx.storage.sql.exec(`DROP TABLE IF EXISTS ${t}`);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS app_groups (app_id INTEGER NOT NULL, mask INTEGER NOT NULL, PRIMARY KEY (app_id, mask)) WITHOUT ROWID");
    this.log = new AppEventLog(ctx.storage.sql);
    this.limits = replayLimits(env);
    if ((this.log.state("ahead_until") ?? 0) > this.log.applied()) {
      for (const ws of ctx.getWebSockets()) {
        const after = attachmentOf(ws)?.ahead;
        if (after !== undefined && after > this.log.applied()) this.ahead.set(ws, after);
      }
    }
  }

  /** The ring this hub knows (the relay tells it; a connect or delivery may carry a newer one). */
  private ring(): RingSeat {
    const count = this.log.state("ring_count");
    const index = this.log.state("ring_index") ?? -1;
    return count === null ? { ...FIRST_RING, index } : { count, version: this.log.state("ring_version") ?? 0, index };
  }

  /** The WebSocket upgrade of `GET /v1/app`, forwarded by the Worker with the stream in `X-Stream`. */
  override async fetch(request: Request): Promise<Response> {
    const stream = JSON.parse(request.headers.get("X-Stream") ?? "null") as AppStreamConnect | null;
    if (!stream || request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response(null, { status: 400 });
    const ring = newer(this.ring(), stream.seat);
    if (stream.seat.index >= ring.count || appHubIndex(stream.appId, stream.key, ring.count) !== stream.seat.index) {
      // Routed under an older ring: the key lives elsewhere now. The Worker re-routes by this ring
      // (src/events/app-ring.ts); a client only sees close code 4004 if that fails too.
      return Response.json({ ring: { count: ring.count, version: ring.version } }, { status: 409, headers: { "X-Stream-Moved": "1" } });
    }
    const tag = keyTag(stream.appId, stream.key);
    if (this.ctx.getWebSockets(tag).filter(isOpen).length >= MORE_LIMITS.connectionsPerStreamKey) {
      const message = `Too Many Requests: app stream '${stream.key}' already has ${MORE_LIMITS.connectionsPerStreamKey} connections`;
      return Response.json({ meta: { code: 429, error_message: message } }, { status: 429 });
    }
    // A `since` ahead of this hub (another hub sent it first) must have been sent by the relay.
    let check = stream.since === undefined ? null : this.log.checkSince(stream.appId, stream.key, stream.since);
    if (check && "ahead" in check) {
      const { sendingThrough } = await streamRelay(this.env).ringInfo();
      if (check.ahead > sendingThrough) check = { gap: "unknown" };
      else if (stream.since !== undefined) check = this.log.checkSince(stream.appId, stream.key, stream.since); // this hub may have caught up meanwhile
    }

    // From here to the first replayed chunk nothing awaits: no event can slip between the
    // position read here and the switch to live.
    const applied = this.log.position();
    const gap: ReplayGap | undefined = check && "gap" in check ? check.gap : undefined;
    const after = check && "after" in check ? check.after : check && "ahead" in check ? check.ahead : applied;
    const mask = typeMask(stream.objectTypes);
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO app_groups (app_id, mask) VALUES (?, ?)", stream.appId, mask);

    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [tag, groupTag(stream.appId, mask)]);
    const params = stream.params ?? {};
    const attachment: Attachment = { connectionId: randomId(), appId: stream.appId, key: stream.key, mask, params, at: Date.now() };
    if (check && "ahead" in check) {
      attachment.ahead = after;
      this.ahead.set(server, after);
      this.log.setState("ahead_until", Math.max(after, this.log.state("ahead_until") ?? 0));
    }
    server.serializeAttachment(attachment);
    const meta = {
      connection_id: attachment.connectionId,
      stream: { key: stream.key, endpoint: stream.endpoint, object_types: stream.objectTypes },
      cursor: String(after),
      ...(gap ? { replay_gap: gap } : {}),
    };
    server.send(JSON.stringify({ meta }));
    if (check && "after" in check) {
      const read = (position: number, limit: number) => this.log.read(position, limit, mask, stream.appId);
      this.ctx.waitUntil(this.catchUp.start(server, after, read, (frame) => shapeFrame(frame, params)));
    }
    await armAlarm(this.ctx, idleDeadline());
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * Stores each event once (a sequence applied before is skipped: a relay repeat) and sends it
   * to the socket groups that take it; returns how many sends were made. `seat`: this hub's
   * place in the ring the relay delivers under (a newer ring is adopted first).
   */
  async publish(events: AppHubEvent[], seat?: RingSeat): Promise<number> {
    if (seat && seat.version > this.ring().version) this.adoptRing(seat);
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    let sent = 0;
    let stored = false;
    for (const e of events) {
      if (!this.log.append(e, now)) continue;
      stored = true;
      const groups = sql.exec<{ app_id: number; mask: number }>("SELECT app_id, mask FROM app_groups WHERE (mask & ?) <> 0", e.mask).toArray();
      if (!groups.length) continue;
      const frame = frameText(e.event, e.seq, e.meta || undefined);
      // The log keeps the event as published; each socket gets it rendered as it asked, shaped once per rendering.
      const shaped = new Map<string, string>();
      for (const g of groups) {
        if (e.appIds !== null && !e.appIds.includes(g.app_id)) continue;
        for (const ws of this.ctx.getWebSockets(groupTag(g.app_id, g.mask))) {
          if (this.catchUp.has(ws)) continue;
          if (this.ahead.size && this.ahead.has(ws)) {
            if (e.seq <= this.ahead.get(ws)!) continue;
            this.ahead.delete(ws);
          }
          const params = attachmentOf(ws)?.params ?? {};
          const key = shapeKey(params);
          if (!shaped.has(key)) shaped.set(key, shapeFrame(frame, params));
          try {
            ws.send(shaped.get(key)!);
            sent++;
          } catch {
            // closing socket: skipped
          }
        }
      }
    }
    if (stored && !this.trimArmed) {
      this.trimArmed = true;
      await armAlarm(this.ctx, now + REPLAY_TRIM_MS);
    }
    return sent;
  }

  /** Closes the connections of deleted streams and marks their keys; returns how many were closed. */
  async closeStreams(appId: number, keys: string[]): Promise<number> {
    let closed = 0;
    for (const key of keys) {
      for (const ws of this.ctx.getWebSockets(keyTag(appId, key))) {
        closeQuietly(ws, CLOSE.deleted);
        closed++;
      }
      this.log.closeKey(appId, key);
    }
    return closed;
  }

  /** The relay changed the ring: closes the sockets of keys this hub no longer owns (4004); returns how many. */
  async setRing(seat: RingSeat): Promise<number> {
    return seat.version >= this.ring().version ? this.adoptRing(seat) : 0;
  }

  private adoptRing(seat: RingSeat): number {
    this.log.setState("ring_count", seat.count);
    this.log.setState("ring_version", seat.version);
    this.log.setState("ring_index", seat.index);
    const leaving = seat.index >= seat.count;
    if (leaving) this.log.clear();
    let closed = 0;
    for (const ws of this.ctx.getWebSockets()) {
      const a = attachmentOf(ws);
      if (!a || (!leaving && appHubIndex(a.appId, a.key, seat.count) === seat.index)) continue;
      closeQuietly(ws, CLOSE.moved);
      closed++;
    }
    return closed;
  }

  /** A page of the log for a hub joining the ring (the first page, `after` 0, carries the log's state). */
  async exportLog(after: number, limit: number): Promise<{ rows: LogRow[]; state?: LogState }> {
    return this.log.exportRows(after, limit);
  }

  /** Takes a page of another hub's log (a first page, with `state`, replaces this one's). */
  async importLog(rows: LogRow[], state?: LogState): Promise<void> {
    this.log.importRows(rows, state);
    if (rows.length && !this.trimArmed) {
      this.trimArmed = true;
      await armAlarm(this.ctx, Date.now() + REPLAY_TRIM_MS);
    }
  }

  /** What this hub holds, for tests and operators. */
  async status(): Promise<{ applied: number; floor: number | null; ring: RingSeat; sockets: number }> {
    return { applied: this.log.applied(), floor: this.log.state("floor"), ring: this.ring(), sockets: this.ctx.getWebSockets().length };
  }

  override async webSocketMessage(ws: WebSocket): Promise<void> {
    touch(ws);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    completeClose(ws, code, reason);
    this.ahead.delete(ws);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.ahead.delete(ws);
  }

  /** Closes idle sockets; drops socket groups nobody is in any more; trims the log to the window. */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const next = closeIdleSockets(this.ctx, now);
    const sql = this.ctx.storage.sql;
    for (const g of sql.exec<{ app_id: number; mask: number }>("SELECT app_id, mask FROM app_groups").toArray()) {
      if (!this.ctx.getWebSockets(groupTag(g.app_id, g.mask)).some(isOpen)) sql.exec("DELETE FROM app_groups WHERE app_id = ? AND mask = ?", g.app_id, g.mask);
    }
    this.log.trim(now, this.limits);
    const at = Math.min(next, this.log.hasEvents() ? now + REPLAY_TRIM_MS : Infinity);
    if (at !== Infinity) await this.ctx.storage.setAlarm(Math.max(at, now + 1000));
  }
}
