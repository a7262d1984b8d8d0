import { DurableObject } from "cloudflare:workers";
import { MORE_LIMITS } from "../config";
import type { UserHubEvent } from "../events/deliver";
import { CLOSE, randomId } from "../events/hubs";
import { openDb } from "../db";
import {
  deleteConnectionSubscriptions,
  deleteSubscriptions,
  insertSubscription,
  pruneUserSubscriptions,
  type StreamEndpoint,
} from "../stores/stream-subscriptions";
import { armIdleAlarm, closeIdleSockets, closeQuietly, completeClose, touch, type Activity } from "./socket-idle";

/** Who opens a user stream (checked by the Worker from the token). */
export interface UserStreamConnect {
  userId: number;
  appId: number;
  tokenId: number;
}

interface Subscription {
  id: string;
  endpoint: StreamEndpoint;
  channelId: number | null;
}

interface Attachment extends Activity, UserStreamConnect {
  connectionId: string;
  subscriptions: Subscription[];
}

export type SubscribeResult = { subscriptionId: string; created: boolean } | { error: "no_connection" | "full" };
export type UnsubscribeResult = "ok" | "no_connection" | "no_subscription";

const connectionTag = (id: string) => `c:${id}`;
const tokenTag = (id: number) => `t:${id}`;

/**
 * The user stream connections of ONE user (`getByName("user:<id>")`), held with the WebSocket
 * Hibernation API. A socket's subscriptions live in its attachment (at most 16); the same
 * subscriptions are mirrored in the D1 table `stream_subscriptions`, the index the event router
 * queries to find who wants an event. This object is the authority: it serializes
 * subscribe/unsubscribe per user, and a routed event is sent only for subscriptions it still
 * holds (rows left behind by lost sockets are deleted when they are met).
 */
export class UserStreamHub extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  private get db() {
    return openDb(this.env);
  }

  /** The WebSocket upgrade of `GET /v1/user`, forwarded by the Worker with the caller in `X-Connection`. */
  override async fetch(request: Request): Promise<Response> {
    const who = JSON.parse(request.headers.get("X-Connection") ?? "null") as UserStreamConnect | null;
    if (!who || request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response(null, { status: 400 });
    const { 0: client, 1: server } = new WebSocketPair();
    const connectionId = randomId();
    this.ctx.acceptWebSocket(server, [connectionTag(connectionId), tokenTag(who.tokenId)]);
    server.serializeAttachment({ ...who, connectionId, subscriptions: [], at: Date.now() } satisfies Attachment);
    server.send(JSON.stringify({ meta: { connection_id: connectionId } }));
    await armIdleAlarm(this.ctx);
    // Rows of connections lost without a close event (e.g. a restart) are dropped now.
    const live = this.ctx.getWebSockets().map((ws) => (ws.deserializeAttachment() as Attachment).connectionId);
    this.ctx.waitUntil(pruneUserSubscriptions(this.db, who.userId, live).catch(() => {}));
    return new Response(null, { status: 101, webSocket: client });
  }

  private socket(connectionId: string): WebSocket | undefined {
    return this.ctx.getWebSockets(connectionTag(connectionId)).find((ws) => ws.readyState === WebSocket.OPEN);
  }

  /**
   * Adds a subscription to an open connection; the same endpoint (and channel) again returns
   * the existing subscription. At most MORE_LIMITS.subscriptionsPerConnection per connection.
   */
  async subscribe(connectionId: string, endpoint: StreamEndpoint, channelId: number | null, createdAt: number): Promise<SubscribeResult> {
    const ws = this.socket(connectionId);
    if (!ws) return { error: "no_connection" };
    const att = ws.deserializeAttachment() as Attachment;
    const existing = att.subscriptions.find((s) => s.endpoint === endpoint && s.channelId === channelId);
    if (existing) return { subscriptionId: existing.id, created: false };
    if (att.subscriptions.length >= MORE_LIMITS.subscriptionsPerConnection) return { error: "full" };
    const sub: Subscription = { id: randomId(), endpoint, channelId };
    // Recorded before the insert, so a concurrent subscribe counts it (no await in between).
    ws.serializeAttachment({ ...att, subscriptions: [...att.subscriptions, sub] });
    try {
      await insertSubscription(this.db, { ...sub, connectionId, userId: att.userId, appId: att.appId, createdAt });
    } catch (e) {
      this.forget(ws, sub.id);
      throw e;
    }
    return { subscriptionId: sub.id, created: true };
  }

  async unsubscribe(connectionId: string, subscriptionId: string): Promise<UnsubscribeResult> {
    const ws = this.socket(connectionId);
    if (!ws) return "no_connection";
    if (!this.forget(ws, subscriptionId)) return "no_subscription";
    await deleteSubscriptions(this.db, [subscriptionId]);
    return "ok";
  }

  /** Closes one connection (DELETE /users/me/streams/{connection_id}); false if it is not open here. */
  async closeConnection(connectionId: string): Promise<boolean> {
    const ws = this.socket(connectionId);
    if (!ws) return false;
    closeQuietly(ws, CLOSE.deleted);
    await deleteConnectionSubscriptions(this.db, [connectionId]);
    return true;
  }

  /**
   * Sends routed events: one frame per connection with the `subscription_ids` it still holds.
   * Then closes the connections opened with `revokedTokens`. Returns the number of frames sent.
   */
  async deliver(events: UserHubEvent[], revokedTokens: number[] = []): Promise<number> {
    const stale: string[] = [];
    let sent = 0;
    for (const e of events) {
      for (const target of e.targets) {
        const ws = this.socket(target.connectionId);
        const held = new Set(ws ? (ws.deserializeAttachment() as Attachment).subscriptions.map((s) => s.id) : []);
        const ids = target.subscriptionIds.filter((id) => held.has(id));
        stale.push(...target.subscriptionIds.filter((id) => !held.has(id)));
        if (!ws || !ids.length) continue;
        try {
          ws.send(`{"meta":${JSON.stringify({ ...e.meta, subscription_ids: ids })},"data":${e.data}}`);
          sent++;
        } catch {
          // closing socket
        }
      }
    }
    const revoked: string[] = [];
    for (const tokenId of revokedTokens) {
      for (const ws of this.ctx.getWebSockets(tokenTag(tokenId))) {
        closeQuietly(ws, CLOSE.revoked);
        revoked.push((ws.deserializeAttachment() as Attachment).connectionId);
      }
    }
    await Promise.all([deleteSubscriptions(this.db, stale), deleteConnectionSubscriptions(this.db, revoked)]);
    return sent;
  }

  /** Removes a subscription from the socket's attachment; false if it was not there. */
  private forget(ws: WebSocket, subscriptionId: string): boolean {
    const att = ws.deserializeAttachment() as Attachment;
    const subscriptions = att.subscriptions.filter((s) => s.id !== subscriptionId);
    if (subscriptions.length === att.subscriptions.length) return false;
    ws.serializeAttachment({ ...att, subscriptions });
    return true;
  }

  override async webSocketMessage(ws: WebSocket): Promise<void> {
    touch(ws);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    completeClose(ws, code, reason);
    await this.dropRows([ws]);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.dropRows([ws]);
  }

  override async alarm(): Promise<void> {
    await this.dropRows(await closeIdleSockets(this.ctx));
  }

  private async dropRows(sockets: WebSocket[]): Promise<void> {
    const ids = sockets.map((ws) => (ws.deserializeAttachment() as Attachment).connectionId);
    await deleteConnectionSubscriptions(this.db, ids);
  }
}
