import { DurableObject } from "cloudflare:workers";
import { MORE_LIMITS } from "../config";
import type { AppHubEvent } from "../events/deliver";
import { CLOSE, randomId, typeMask } from "../events/hubs";
import { OBJECT_TYPES } from "../events/publish";
import { frameText, REPLAY_TRIM_MS, replayLimits, type ReplayLimits } from "../events/replay";
import { shapeFrame, shapeKey, type ConnectionParams } from "../events/stream-params";
import { ReplayBuffer } from "./replay-buffer";
import { CatchUp } from "./replay-sockets";
import { armAlarm, closeIdleSockets, closeQuietly, completeClose, idleDeadline, touch, type Activity } from "./socket-idle";

/** What the Worker tells the hub about the stream a socket connects to (checked there: token, key). */
export interface AppStreamConnect {
  appId: number;
  key: string;
  objectTypes: string[];
  endpoint: string;
  /** `since`: the `meta.id` of the last event the app processed on this key. */
  since?: string;
  /** The connection parameters (`include_html`, `include_raw`, …): how this socket's frames are rendered. */
  params?: ConnectionParams;
}

interface Attachment extends Activity {
  connectionId: string;
  streamId: number;
  mask: number;
  params?: ConnectionParams;
}

/** A socket's connection parameters (sockets accepted before they existed have none). */
const paramsOf = (ws: WebSocket): ConnectionParams => (ws.deserializeAttachment() as Attachment | null)?.params ?? {};

const keyTag = (appId: number, key: string) => `k:${appId}:${key}`;
const groupTag = (streamId: number, mask: number) => `g:${streamId}:${mask}`;
const isOpen = (ws: WebSocket) => ws.readyState === WebSocket.OPEN;

/**
 * One shard of the app stream sockets (src/events/hubs.ts picks the shard from the stream key),
 * held with the WebSocket Hibernation API: the object sleeps between events while the sockets
 * stay open.
 *
 * Each stream key is a replay stream (src/objects/replay-buffer.ts): every event it receives
 * gets the key's next cursor as `meta.id` and is kept in this object's SQLite, so a socket that
 * reconnects with `since` is sent what it missed, then live events. A key keeps buffering for
 * the replay window after its last socket closes, then is retired.
 *
 * Sockets are tagged with their key (`k:<app>:<key>`: the per-key connection limit, closing a
 * deleted stream) and their group `g:<stream>:<type mask>`: the types are frozen at connect time
 * (a PUT applies on reconnect). The `listening` table indexes groups by object type, so an
 * event is stored once, numbered for the keys that want it, and sent with getWebSockets(group)
 * only to sockets that listen for its type.
 */
export class AppStreamHub extends DurableObject<Env> {
  private readonly buffer: ReplayBuffer;
  private readonly catchUp: CatchUp;
  private readonly limits: ReplayLimits;
  /** Whether this instance has made sure an alarm will trim what it buffers. */
  private trimArmed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    this.buffer = new ReplayBuffer(ctx.storage.sql);
    this.catchUp = new CatchUp(this.buffer);
    this.limits = replayLimits(env);
    // `listeners` was the type index before streams were resumable (it named socket groups only).
    ctx.storage.sql.exec("DROP TABLE IF EXISTS listeners");
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS listening (
      type INTEGER NOT NULL, app_id INTEGER NOT NULL, stream_id INTEGER NOT NULL, mask INTEGER NOT NULL,
      PRIMARY KEY (type, app_id, stream_id, mask)) WITHOUT ROWID`);
  }

  /** The WebSocket upgrade of `GET /v1/app`, forwarded by the Worker with the stream in `X-Stream`. */
  override async fetch(request: Request): Promise<Response> {
    const stream = JSON.parse(request.headers.get("X-Stream") ?? "null") as AppStreamConnect | null;
    if (!stream || request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response(null, { status: 400 });
    const tag = keyTag(stream.appId, stream.key);
    if (this.ctx.getWebSockets(tag).filter(isOpen).length >= MORE_LIMITS.connectionsPerStreamKey) {
      const message = `Too Many Requests: app stream '${stream.key}' already has ${MORE_LIMITS.connectionsPerStreamKey} connections`;
      return Response.json({ meta: { code: 429, error_message: message } }, { status: 429 });
    }

    // From here to the first replayed chunk nothing awaits: no event can slip between the
    // cursor read here and the switch to live.
    const replay = this.buffer.open(tag);
    this.buffer.setRetireAt(replay.id, null);
    const mask = typeMask(stream.objectTypes);
    this.listen(replay.id, stream.appId, mask);
    const start = this.buffer.resumeFrom(replay, stream.since);

    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [tag, groupTag(replay.id, mask)]);
    const connectionId = randomId();
    const params = stream.params ?? {};
    server.serializeAttachment({ connectionId, streamId: replay.id, mask, params, at: Date.now() } satisfies Attachment);
    const meta = {
      connection_id: connectionId,
      stream: { key: stream.key, endpoint: stream.endpoint, object_types: stream.objectTypes },
      cursor: String(start.after),
      ...(start.gap ? { replay_gap: start.gap } : {}),
    };
    server.send(JSON.stringify({ meta }));
    if (stream.since !== undefined && !start.gap) {
      const accept = (type: string) => (typeMask([type]) & mask) !== 0;
      this.ctx.waitUntil(this.catchUp.start(server, replay.id, start.after, accept, (frame) => shapeFrame(frame, params)));
    }
    await armAlarm(this.ctx, idleDeadline());
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * Indexes a new socket group of a key by its types. Groups of the key that no open socket
   * belongs to any more are dropped first: the key's latest types (a PUT) replace them.
   */
  private listen(streamId: number, appId: number, mask: number): void {
    const sql = this.ctx.storage.sql;
    for (const { mask: old } of sql.exec<{ mask: number }>("SELECT DISTINCT mask FROM listening WHERE stream_id = ?", streamId).toArray()) {
      if (old !== mask && !this.ctx.getWebSockets(groupTag(streamId, old)).some(isOpen)) {
        sql.exec("DELETE FROM listening WHERE stream_id = ? AND mask = ?", streamId, old);
      }
    }
    for (let bit = 0; bit < OBJECT_TYPES.length; bit++) {
      if (mask & (1 << bit)) {
        sql.exec("INSERT OR IGNORE INTO listening (type, app_id, stream_id, mask) VALUES (?, ?, ?, ?)", 1 << bit, appId, streamId, mask);
      }
    }
  }

  /**
   * Stores and numbers each event for the keys listening for its type (and app), then sends it
   * to their live sockets; returns how many sends were made.
   */
  async publish(events: AppHubEvent[]): Promise<number> {
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    let sent = 0;
    let stored = false;
    for (const e of events) {
      const rows = (
        e.appIds === null
          ? sql.exec<{ stream_id: number; mask: number }>("SELECT stream_id, mask FROM listening WHERE type = ?", e.mask)
          : sql.exec<{ stream_id: number; mask: number }>(
              "SELECT stream_id, mask FROM listening WHERE type = ? AND app_id IN (SELECT value FROM json_each(?))",
              e.mask,
              JSON.stringify(e.appIds),
            )
      ).toArray();
      if (!rows.length) continue;
      stored = true;
      const streams = [...new Set(rows.map((r) => r.stream_id))];
      const extra = e.meta || undefined;
      const cursors = this.buffer.append(this.buffer.store(e.event, now), now, streams.map((id) => ({ id, extra })), e.seq);
      for (const { stream_id: streamId, mask } of rows) {
        const cursor = cursors.get(streamId);
        const sockets = cursor === undefined ? [] : this.ctx.getWebSockets(groupTag(streamId, mask)); // no cursor: applied before (a relay repeat)
        if (!sockets.length) continue;
        const frame = frameText(e.event, cursor!, extra);
        // The buffer keeps the event as published; each socket gets it rendered as it asked,
        // shaped once per rendering.
        const shaped = new Map<string, string>();
        for (const ws of sockets) {
          if (this.catchUp.has(ws)) continue;
          const params = paramsOf(ws);
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

  /** Closes the connections of deleted streams and forgets their buffers; returns how many were closed. */
  async closeStreams(appId: number, keys: string[]): Promise<number> {
    let closed = 0;
    for (const key of keys) {
      const tag = keyTag(appId, key);
      for (const ws of this.ctx.getWebSockets(tag)) {
        closeQuietly(ws, CLOSE.deleted);
        closed++;
      }
      const replay = this.buffer.find(tag);
      if (replay !== undefined) this.retire(replay);
    }
    return closed;
  }

  override async webSocketMessage(ws: WebSocket): Promise<void> {
    touch(ws);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    completeClose(ws, code, reason);
    await this.dropped(ws, Date.now());
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.dropped(ws, Date.now());
  }

  /** A socket went away: when it was its key's last, the key keeps buffering for the window only. */
  private async dropped(ws: WebSocket, now: number): Promise<void> {
    const { streamId } = ws.deserializeAttachment() as Attachment;
    if (this.openSockets(streamId)) return;
    const retireAt = now + this.limits.seconds * 1000;
    this.buffer.setRetireAt(streamId, retireAt);
    await armAlarm(this.ctx, retireAt);
  }

  private openSockets(streamId: number): boolean {
    const sql = this.ctx.storage.sql;
    const masks = sql.exec<{ mask: number }>("SELECT DISTINCT mask FROM listening WHERE stream_id = ?", streamId).toArray();
    return masks.some(({ mask }) => this.ctx.getWebSockets(groupTag(streamId, mask)).some(isOpen));
  }

  private retire(streamId: number): void {
    this.buffer.retire(streamId);
    this.ctx.storage.sql.exec("DELETE FROM listening WHERE stream_id = ?", streamId);
  }

  /**
   * Closes idle sockets; starts the retention of keys left without sockets (closed now, or lost
   * in a restart without a close event); retires keys nobody reconnected to in time; trims.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const next = closeIdleSockets(this.ctx, now);
    for (const streamId of this.buffer.connected()) {
      if (!this.openSockets(streamId)) this.buffer.setRetireAt(streamId, now + this.limits.seconds * 1000);
    }
    for (const streamId of this.buffer.expired(now)) this.retire(streamId);
    this.buffer.trim(now, this.limits);
    const at = Math.min(next, this.buffer.hasStreams() ? now + REPLAY_TRIM_MS : Infinity);
    if (at !== Infinity) await this.ctx.storage.setAlarm(Math.max(at, now + 1000));
  }
}
