import { DurableObject } from "cloudflare:workers";
import { MORE_LIMITS } from "../config";
import type { AppHubEvent } from "../events/deliver";
import { CLOSE, randomId, typeMask } from "../events/hubs";
import { OBJECT_TYPES } from "../events/publish";
import { armIdleAlarm, closeIdleSockets, closeQuietly, completeClose, touch, type Activity } from "./socket-idle";

/** What the Worker tells the hub about the stream a socket connects to (checked there: token, key). */
export interface AppStreamConnect {
  appId: number;
  key: string;
  objectTypes: string[];
  endpoint: string;
}

interface Attachment extends Activity {
  connectionId: string;
  appId: number;
  key: string;
}

const keyTag = (appId: number, key: string) => `k:${appId}:${key}`;

/**
 * One shard of the app stream sockets (src/events/hubs.ts picks the shard from the stream key),
 * held with the WebSocket Hibernation API: the object sleeps between events while the sockets
 * stay open.
 *
 * Each socket is tagged with its stream key (`k:<app>:<key>`, for the per-key connection limit
 * and for closing a deleted stream) and with its group `g:<app>:<type mask>`: the sockets of one
 * app listening for the same object types. The types are frozen at connect time (a PUT on the
 * stream applies on reconnect). The `listeners` table (this object's SQLite) indexes the live
 * groups by object type, so an event is sent by looking up the groups of its type and sending
 * to `getWebSockets(group)`: sockets that do not want the event are never touched.
 */
export class AppStreamHub extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS listeners (
      type INTEGER NOT NULL, app_id INTEGER NOT NULL, tag TEXT NOT NULL,
      PRIMARY KEY (type, app_id, tag)) WITHOUT ROWID`);
  }

  /** The WebSocket upgrade of `GET /v1/app`, forwarded by the Worker with the stream in `X-Stream`. */
  override async fetch(request: Request): Promise<Response> {
    const stream = JSON.parse(request.headers.get("X-Stream") ?? "null") as AppStreamConnect | null;
    if (!stream || request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response(null, { status: 400 });
    const open = this.ctx.getWebSockets(keyTag(stream.appId, stream.key)).filter((ws) => ws.readyState === WebSocket.OPEN);
    if (open.length >= MORE_LIMITS.connectionsPerStreamKey) {
      const message = `Too Many Requests: app stream '${stream.key}' already has ${MORE_LIMITS.connectionsPerStreamKey} connections`;
      return Response.json({ meta: { code: 429, error_message: message } }, { status: 429 });
    }

    const mask = typeMask(stream.objectTypes);
    const group = `g:${stream.appId}:${mask}`;
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [keyTag(stream.appId, stream.key), group]);
    const connectionId = randomId();
    server.serializeAttachment({ connectionId, appId: stream.appId, key: stream.key, at: Date.now() } satisfies Attachment);
    for (let bit = 0; bit < OBJECT_TYPES.length; bit++) {
      if (mask & (1 << bit)) {
        this.ctx.storage.sql.exec("INSERT OR IGNORE INTO listeners (type, app_id, tag) VALUES (?, ?, ?)", 1 << bit, stream.appId, group);
      }
    }
    server.send(JSON.stringify({ meta: { connection_id: connectionId, stream: { key: stream.key, endpoint: stream.endpoint, object_types: stream.objectTypes } } }));
    await armIdleAlarm(this.ctx);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sends each event to the sockets of the groups listening for its type; returns how many sends were made. */
  async publish(events: AppHubEvent[]): Promise<number> {
    let sent = 0;
    for (const e of events) {
      const rows =
        e.appIds === null
          ? this.ctx.storage.sql.exec<{ tag: string }>("SELECT tag FROM listeners WHERE type = ?", e.mask)
          : this.ctx.storage.sql.exec<{ tag: string }>(
              "SELECT tag FROM listeners WHERE type = ? AND app_id IN (SELECT value FROM json_each(?))",
              e.mask,
              JSON.stringify(e.appIds),
            );
      for (const { tag } of rows.toArray()) {
        const sockets = this.ctx.getWebSockets(tag);
        if (!sockets.length) this.ctx.storage.sql.exec("DELETE FROM listeners WHERE tag = ?", tag);
        for (const ws of sockets) {
          try {
            ws.send(e.frame);
            sent++;
          } catch {
            // closing socket: skipped
          }
        }
      }
    }
    return sent;
  }

  /** Closes the connections of deleted streams; returns how many were closed. */
  async closeStreams(appId: number, keys: string[]): Promise<number> {
    let closed = 0;
    for (const key of keys) {
      for (const ws of this.ctx.getWebSockets(keyTag(appId, key))) {
        closeQuietly(ws, CLOSE.deleted);
        closed++;
      }
    }
    return closed;
  }

  override async webSocketMessage(ws: WebSocket): Promise<void> {
    touch(ws);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    completeClose(ws, code, reason);
  }

  override async alarm(): Promise<void> {
    await closeIdleSockets(this.ctx);
  }
}
