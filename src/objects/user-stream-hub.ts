import { DurableObject } from "cloudflare:workers";
import { MORE_LIMITS } from "../config";
import type { UserHubEvent } from "../events/deliver";
import { CLOSE, randomId } from "../events/hubs";
import { frameText, joinMeta, REPLAY_TRIM_MS, replayLimits, type ReplayLimits } from "../events/replay";
import { sameParams, shapeKey, shapeData, type ConnectionParams } from "../events/stream-params";
import { openDb } from "../db";
import { deleteConnectionSubscriptions, deleteSubscriptions, insertSubscription, pruneUserSubscriptions } from "../stores/stream-subscriptions";
import { ReplayBuffer } from "./replay-buffer";
import { CatchUp } from "./replay-sockets";
import { Connections, own, subscribed, type Connection, type Subscription, type SubscriptionTarget, type Target } from "./user-connections";
import { armAlarm, closeIdleSockets, closeQuietly, completeClose, idleDeadline, touch, type Activity } from "./socket-idle";

/** Who opens a user stream (checked by the Worker from the token), and the connection it resumes, if any. */
export interface UserStreamConnect {
  userId: number;
  appId: number;
  tokenId: number;
  /** `connection_id` of a dropped connection to take up again, and `since`: the last `meta.id` processed. */
  resume?: { connectionId: string; since?: string };
  /** The connection query parameters (how-to/user-streams.md): how every frame's data is rendered. */
  params?: ConnectionParams;
}

export type { SubscriptionTarget } from "./user-connections";

interface Attachment extends Activity {
  connectionId: string;
}

export type SubscribeResult = { subscriptionId: string; created: boolean } | { error: "no_connection" | "full" };
export type UnsubscribeResult = "ok" | "no_connection" | "no_subscription";
/** Why a connection ended for good: what a later resume is told. */
type EndReason = "deleted" | "revoked" | "expired";

const connectionTag = (id: string) => `c:${id}`;
const tokenTag = (id: number) => `t:${id}`;
/** How long the reason a connection ended is kept, to refuse a late resume with it. */
const ENDED_KEPT_MS = 24 * 3600 * 1000;

/**
 * The user stream connections of the users of one shard (`getByName("users:<shard>")`, see
 * src/events/hubs.ts), held with the WebSocket Hibernation API. Every method that names a
 * connection for a caller also names the caller's user: another user's connection in the same
 * shard reads as unknown. A connection (its token, app and at most 16 subscriptions) lives in this
 * object's SQLite and outlives its socket: after a drop it keeps receiving events into its
 * replay buffer for the replay window, and `GET /v1/user?connection_id=…&since=…` takes it up
 * again with the same subscriptions. Later it ends, and so does a deleted or revoked one.
 * The subscriptions are mirrored in the D1 table `stream_subscriptions`, the index the event
 * router queries to find who wants an event. This object is the authority: it serializes
 * subscribe/unsubscribe per user, and a routed event is kept only for subscriptions it still
 * holds (rows left behind are deleted when they are met).
 */
export class UserStreamHub extends DurableObject<Env> {
  private readonly buffer: ReplayBuffer;
  private readonly catchUp: CatchUp;
  private readonly limits: ReplayLimits;
  private readonly conns: Connections;
  private trimArmed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    this.buffer = new ReplayBuffer(ctx.storage.sql);
    this.catchUp = new CatchUp();
    this.limits = replayLimits(env);
    this.conns = new Connections(ctx.storage.sql);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS ended (id TEXT PRIMARY KEY, reason TEXT NOT NULL, at INTEGER NOT NULL)");
  }

  private get db() {
    return openDb(this.env);
  }

  /** The WebSocket upgrade of `GET /v1/user`, forwarded by the Worker with the caller in `X-Connection`. */
  override async fetch(request: Request): Promise<Response> {
    const who = JSON.parse(request.headers.get("X-Connection") ?? "null") as UserStreamConnect | null;
    if (!who || request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response(null, { status: 400 });
    // Sockets this token has open, less the one a resume takes over: at most userStreamSocketsPerToken.
    const replaced = who.resume ? connectionTag(who.resume.connectionId) : null;
    const open = this.ctx
      .getWebSockets(tokenTag(who.tokenId))
      .filter((ws) => ws.readyState === WebSocket.OPEN && (replaced === null || !this.ctx.getTags(ws).includes(replaced)));
    if (open.length >= MORE_LIMITS.userStreamSocketsPerToken) {
      const message = `Too Many Requests: this access token already has ${MORE_LIMITS.userStreamSocketsPerToken} open user stream sockets; close one first`;
      return Response.json({ meta: { code: 429, error_message: message } }, { status: 429 });
    }
    let conn: Connection;
    if (who.resume) {
      const found = this.conns.ofUser(who.userId, who.resume.connectionId);
      if (!found) return refuse(this.whyGone(who.resume.connectionId));
      if (found.tokenId !== who.tokenId) return refuse("'connection_id' was opened with another access token; resume it with the same token");
      // The client may come back before this side noticed the drop: the new socket takes over.
      for (const old of this.ctx.getWebSockets(connectionTag(found.id))) closeQuietly(old, CLOSE.replaced);
      conn = found;
    } else {
      conn = this.open(who);
    }

    // Nothing awaits from the cursor read to the first replayed chunk: no event slips in between.
    this.buffer.setRetireAt(conn.streamId, null);
    const start = this.buffer.resumeFrom(this.buffer.get(conn.streamId)!, who.resume?.since);
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [connectionTag(conn.id), tokenTag(who.tokenId)]);
    server.serializeAttachment({ connectionId: conn.id, at: Date.now() } satisfies Attachment);
    server.send(JSON.stringify({ meta: { connection_id: conn.id, cursor: String(start.after), ...(start.gap ? { replay_gap: start.gap } : {}) } }));
    if (who.resume?.since !== undefined && !start.gap)
      this.ctx.waitUntil(this.catchUp.start(server, start.after, (after, limit) => this.buffer.read(conn.streamId, after, limit)));
    await armAlarm(this.ctx, idleDeadline());
    if (!who.resume) {
      // Rows of connections this object no longer knows (e.g. ended while D1 was unreachable) go now.
      const known = this.conns.byUsers([who.userId]).map((c) => c.id);
      this.ctx.waitUntil(pruneUserSubscriptions(this.db, who.userId, known).catch(() => {}));
    }
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A new connection (no socket yet): its row and its replay stream. */
  private open(who: Pick<UserStreamConnect, "userId" | "tokenId" | "appId" | "params">, id = randomId()): Connection {
    const streamId = this.buffer.open(connectionTag(id)).id;
    const conn = { id, userId: who.userId, streamId, tokenId: who.tokenId, appId: who.appId, subscriptions: [], params: who.params ?? {} };
    this.conns.insert(conn);
    return conn;
  }

  /** Why a connection id cannot be resumed, as the 400's message. */
  private whyGone(connectionId: string): string {
    const ended = this.ctx.storage.sql.exec<{ reason: EndReason }>("SELECT reason FROM ended WHERE id = ?", connectionId).toArray()[0];
    const minutes = this.limits.seconds % 60 ? `${this.limits.seconds} seconds` : `${this.limits.seconds / 60} minutes`;
    const again = "open a new user stream without 'connection_id'";
    if (ended?.reason === "expired") return `'connection_id' can no longer be resumed: it was dropped more than ${minutes} ago; ${again}`;
    if (ended?.reason === "deleted") return `'connection_id' names a user stream that was deleted; ${again}`;
    if (ended?.reason === "revoked") return `'connection_id' names a user stream whose access token was deleted; ${again}`;
    return "'connection_id' names no user stream of this user";
  }

  private socket(connectionId: string): WebSocket | undefined {
    return this.ctx.getWebSockets(connectionTag(connectionId)).find((ws) => ws.readyState === WebSocket.OPEN);
  }

  /**
   * Adds a subscription to an open connection; the same endpoint (target) with the same
   * parameters again returns the existing subscription, other parameters make another one.
   * At most MORE_LIMITS.subscriptionsPerConnection per connection.
   */
  async subscribe(userId: number, connectionId: string, target: SubscriptionTarget, createdAt: number): Promise<SubscribeResult> {
    const conn = this.socket(connectionId) && this.conns.ofUser(userId, connectionId);
    if (!conn) return { error: "no_connection" };
    const existing = conn.subscriptions.find(
      (s) => s.endpoint === target.endpoint && s.channelId === target.channelId && s.targetId === target.targetId && sameParams(s.params, target.params),
    );
    if (existing) return { subscriptionId: existing.id, created: false };
    if (conn.subscriptions.length >= MORE_LIMITS.subscriptionsPerConnection) return { error: "full" };
    const sub: Subscription = { id: randomId(), ...target };
    // Recorded before the insert, so a concurrent subscribe counts it (no await in between).
    this.conns.saveSubscriptions(connectionId, [...conn.subscriptions, sub]);
    try {
      const row = { id: sub.id, endpoint: sub.endpoint, channelId: sub.channelId, targetId: sub.targetId, flags: sub.flags };
      await insertSubscription(this.db, { ...row, connectionId, userId: conn.userId, appId: conn.appId, tokenId: conn.tokenId, createdAt });
    } catch (e) {
      this.forget(connectionId, sub.id);
      throw e;
    }
    return { subscriptionId: sub.id, created: true };
  }

  /** Removes a subscription of a connection, open or dropped (still resumable). */
  async unsubscribe(userId: number, connectionId: string, subscriptionId: string): Promise<UnsubscribeResult> {
    if (!this.conns.ofUser(userId, connectionId)) return "no_connection";
    if (!this.forget(connectionId, subscriptionId)) return "no_subscription";
    await deleteSubscriptions(this.db, [subscriptionId]);
    return "ok";
  }

  /** Ends one connection for good (DELETE /users/me/streams/{connection_id}); false if there is none. */
  async closeConnection(userId: number, connectionId: string): Promise<boolean> {
    const conn = this.conns.ofUser(userId, connectionId);
    if (!conn) return false;
    const ws = this.socket(connectionId);
    await this.end([conn], "deleted");
    if (ws) closeQuietly(ws, CLOSE.deleted);
    return true;
  }

  /**
   * Numbers each event per connection it goes to (with the `subscription_ids` that connection
   * still holds), keeps it for replay, and sends it to the open, caught-up sockets. Then ends
   * the connections opened with `revokedTokens`. Reads only the connections the events name (or
   * their users', for own-connection events). Returns the frames stored (one per connection
   * and event) and sent.
   */
  async deliver(events: UserHubEvent[], revokedTokens: number[] = []): Promise<{ stored: number; sent: number }> {
    const now = Date.now();
    const named = events.flatMap((e) => (Array.isArray(e.targets) ? e.targets.map((t) => t.connectionId) : []));
    const ownUsers = events.flatMap((e) => (Array.isArray(e.targets) ? [] : [e.targets.userId]));
    const conns = new Map([...this.conns.byIds([...new Set(named)]), ...this.conns.byUsers([...new Set(ownUsers)])].map((c) => [c.id, c]));
    const stale: string[] = [];
    let sent = 0;
    let frames = 0;
    let stored = false;
    for (const e of events) {
      const targets = Array.isArray(e.targets) ? subscribed(e.targets, conns, stale, e) : own(e.targets, conns);
      if (!targets.length) continue;
      stored = true;
      // Connections asking for the same rendering share one stored copy of the event.
      const byShape = new Map<string, Target[]>();
      for (const t of targets) byShape.set(shapeKey(t.conn.params), [...(byShape.get(shapeKey(t.conn.params)) ?? []), t]);
      for (const group of byShape.values()) {
        const event = { ...e.event, data: shapeData(e.event.data, group[0].conn.params) };
        const withIds = group.map((t) => ({ conn: t.conn, extra: joinMeta(`"subscription_ids":${JSON.stringify(t.ids)}`, e.meta) }));
        const cursors = this.buffer.append(
          this.buffer.store(event, now),
          now,
          withIds.map((t) => ({ id: t.conn.streamId, extra: t.extra })),
          e.seq,
        );
        frames += cursors.size;
        for (const t of withIds) {
          const cursor = cursors.get(t.conn.streamId);
          const ws = this.socket(t.conn.id);
          if (cursor === undefined || !ws || this.catchUp.has(ws)) continue; // no cursor: applied before (a relay repeat)
          try {
            ws.send(frameText(event, cursor, t.extra));
            sent++;
          } catch {
            // closing socket
          }
        }
      }
    }
    // Ended before the sockets close: a client that sees the close finds the subscriptions gone.
    const revoked = this.conns.byTokens(revokedTokens);
    await Promise.all([deleteSubscriptions(this.db, stale), this.end(revoked, "revoked")]);
    for (const tokenId of revokedTokens) for (const ws of this.ctx.getWebSockets(tokenTag(tokenId))) closeQuietly(ws, CLOSE.revoked);
    if (stored && !this.trimArmed) {
      this.trimArmed = true;
      await armAlarm(this.ctx, now + REPLAY_TRIM_MS);
    }
    return { stored: frames, sent };
  }

  /** Removes a subscription from a connection; false if it was not there. */
  private forget(connectionId: string, subscriptionId: string): boolean {
    const conn = this.conns.get(connectionId);
    const subscriptions = conn?.subscriptions.filter((s) => s.id !== subscriptionId) ?? [];
    if (!conn || subscriptions.length === conn.subscriptions.length) return false;
    this.conns.saveSubscriptions(connectionId, subscriptions);
    return true;
  }

  /** Ends connections for good: their buffers, rows and subscriptions go; a resume is told why. */
  private async end(conns: Connection[], reason: EndReason): Promise<void> {
    if (!conns.length) return;
    const now = Date.now();
    for (const c of conns) {
      this.buffer.retire(c.streamId);
      this.conns.delete(c.id);
      this.ctx.storage.sql.exec("INSERT OR REPLACE INTO ended (id, reason, at) VALUES (?, ?, ?)", c.id, reason, now);
    }
    await deleteConnectionSubscriptions(
      this.db,
      conns.map((c) => c.id),
    );
  }

  override async webSocketMessage(ws: WebSocket): Promise<void> {
    touch(ws);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    completeClose(ws, code, reason);
    await this.dropped(ws);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.dropped(ws);
  }

  /** A socket went away: its connection stays resumable for the window (unless another socket took it over). */
  private async dropped(ws: WebSocket): Promise<void> {
    const { connectionId } = ws.deserializeAttachment() as Attachment;
    const conn = this.conns.get(connectionId);
    if (!conn || this.socket(connectionId)) return;
    const retireAt = Date.now() + this.limits.seconds * 1000;
    this.buffer.setRetireAt(conn.streamId, retireAt);
    await armAlarm(this.ctx, retireAt);
  }

  /**
   * Closes idle sockets; starts the resume window of connections left without a socket (closed
   * now, or lost in a restart without a close event); ends those not resumed in time; trims.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const next = closeIdleSockets(this.ctx, now);
    const connected = new Set(this.buffer.connected());
    const conns = this.conns.all();
    for (const c of conns) {
      if (connected.has(c.streamId) && !this.socket(c.id)) this.buffer.setRetireAt(c.streamId, now + this.limits.seconds * 1000);
    }
    const expired = new Set(this.buffer.expired(now));
    await this.end(
      conns.filter((c) => expired.has(c.streamId)),
      "expired",
    );
    this.buffer.trim(now, this.limits);
    this.ctx.storage.sql.exec("DELETE FROM ended WHERE at < ?", now - ENDED_KEPT_MS);
    const oldestEnded = this.ctx.storage.sql.exec<{ at: number | null }>("SELECT min(at) AS at FROM ended").one().at;
    const at = Math.min(next, this.buffer.hasStreams() ? now + REPLAY_TRIM_MS : Infinity, oldestEnded === null ? Infinity : oldestEnded + ENDED_KEPT_MS);
    if (at !== Infinity) await this.ctx.storage.setAlarm(Math.max(at, now + 1000));
  }
}

/** A refused resume: the Worker passes this envelope on as the answer to the upgrade. */
const refuse = (message: string) => Response.json({ meta: { code: 400, error_message: `Bad Request: ${message}` } }, { status: 400 });
