import { DurableObject } from "cloudflare:workers";
import { MORE_LIMITS } from "../config";
import type { UserHubEvent } from "../events/deliver";
import { CLOSE, randomId } from "../events/hubs";
import { frameText, joinMeta, REPLAY_TRIM_MS, replayLimits, type ReplayLimits } from "../events/replay";
import { accepts, sameParams, shapeKey, shapeData, type ConnectionParams, type SubscriptionParams } from "../events/stream-params";
import type { OwnConnections } from "../events/routing";
import { openDb } from "../db";
import {
  deleteConnectionSubscriptions,
  deleteSubscriptions,
  insertSubscription,
  pruneUserSubscriptions,
  type StreamEndpoint,
} from "../stores/stream-subscriptions";
import { ReplayBuffer } from "./replay-buffer";
import { CatchUp } from "./replay-sockets";
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

/** What a subscription is: the same endpoint, target and parameters make the same subscription. */
export interface SubscriptionTarget {
  endpoint: StreamEndpoint;
  channelId: number | null;
  /** The post of `/posts/{id}/thread`. */
  targetId: number | null;
  /** Routing bits (SUBSCRIPTION_FLAGS), derived from `params`. */
  flags: number;
  params: SubscriptionParams;
}

interface Subscription extends SubscriptionTarget {
  id: string;
}

interface Attachment extends Activity {
  connectionId: string;
}

/** A connection as stored: it outlives its socket for the replay window, so it can be resumed. */
interface Connection {
  id: string;
  userId: number;
  streamId: number;
  tokenId: number;
  appId: number;
  subscriptions: Subscription[];
  params: ConnectionParams;
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
 * The user stream connections of ONE user (`getByName("user:<id>")`), held with the WebSocket
 * Hibernation API. A connection (its token, app and at most 16 subscriptions) lives in this
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
  private trimArmed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    this.buffer = new ReplayBuffer(ctx.storage.sql);
    this.catchUp = new CatchUp(this.buffer);
    this.limits = replayLimits(env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS connections (
      id TEXT PRIMARY KEY, user_id INTEGER NOT NULL, stream_id INTEGER NOT NULL, token_id INTEGER NOT NULL,
      app_id INTEGER NOT NULL, subscriptions TEXT NOT NULL)`);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS ended (id TEXT PRIMARY KEY, reason TEXT NOT NULL, at INTEGER NOT NULL)");
    // Connection parameters came later: older objects get the column here.
    const columns = ctx.storage.sql.exec<{ name: string }>("PRAGMA table_info(connections)").toArray();
    if (!columns.some((c) => c.name === "params")) ctx.storage.sql.exec("ALTER TABLE connections ADD COLUMN params TEXT NOT NULL DEFAULT '{}'");
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
    const open = this.ctx.getWebSockets(tokenTag(who.tokenId)).filter(
      (ws) => ws.readyState === WebSocket.OPEN && (replaced === null || !this.ctx.getTags(ws).includes(replaced)),
    );
    if (open.length >= MORE_LIMITS.userStreamSocketsPerToken) {
      const message = `Too Many Requests: this access token already has ${MORE_LIMITS.userStreamSocketsPerToken} open user stream sockets; close one first`;
      return Response.json({ meta: { code: 429, error_message: message } }, { status: 429 });
    }
    let conn: Connection;
    if (who.resume) {
      const found = this.connection(who.resume.connectionId);
      if (!found) return refuse(this.whyGone(who.resume.connectionId));
      if (found.tokenId !== who.tokenId) return refuse("'connection_id' was opened with another access token; resume it with the same token");
      // The client may come back before this side noticed the drop: the new socket takes over.
      for (const old of this.ctx.getWebSockets(connectionTag(found.id))) closeQuietly(old, CLOSE.replaced);
      conn = found;
    } else {
      const id = randomId();
      const streamId = this.buffer.open(connectionTag(id)).id;
      conn = { id, userId: who.userId, streamId, tokenId: who.tokenId, appId: who.appId, subscriptions: [], params: who.params ?? {} };
      this.ctx.storage.sql.exec(
        "INSERT INTO connections (id, user_id, stream_id, token_id, app_id, subscriptions, params) VALUES (?, ?, ?, ?, ?, '[]', ?)",
        id,
        conn.userId,
        conn.streamId,
        conn.tokenId,
        conn.appId,
        JSON.stringify(conn.params),
      );
    }

    // Nothing awaits from the cursor read to the first replayed chunk: no event slips in between.
    this.buffer.setRetireAt(conn.streamId, null);
    const start = this.buffer.resumeFrom(this.buffer.get(conn.streamId)!, who.resume?.since);
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [connectionTag(conn.id), tokenTag(who.tokenId)]);
    server.serializeAttachment({ connectionId: conn.id, at: Date.now() } satisfies Attachment);
    server.send(JSON.stringify({ meta: { connection_id: conn.id, cursor: String(start.after), ...(start.gap ? { replay_gap: start.gap } : {}) } }));
    if (who.resume?.since !== undefined && !start.gap) this.ctx.waitUntil(this.catchUp.start(server, conn.streamId, start.after));
    await armAlarm(this.ctx, idleDeadline());
    if (!who.resume) {
      // Rows of connections this object no longer knows (e.g. ended while D1 was unreachable) go now.
      const known = this.connections().map((c) => c.id);
      this.ctx.waitUntil(pruneUserSubscriptions(this.db, who.userId, known).catch(() => {}));
    }
    return new Response(null, { status: 101, webSocket: client });
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

  private connection(id: string): Connection | undefined {
    return this.connections(id)[0];
  }

  private connections(id?: string): Connection[] {
    const rows = this.ctx.storage.sql
      .exec<{ id: string; user_id: number; stream_id: number; token_id: number; app_id: number; subscriptions: string; params: string }>(
        `SELECT id, user_id, stream_id, token_id, app_id, subscriptions, params FROM connections ${id === undefined ? "" : "WHERE id = ?"}`,
        ...(id === undefined ? [] : [id]),
      )
      .toArray();
    return rows.map((r) => ({
      id: r.id,
      userId: r.user_id,
      streamId: r.stream_id,
      tokenId: r.token_id,
      appId: r.app_id,
      // Subscriptions stored before parameters existed read as parameterless.
      subscriptions: (JSON.parse(r.subscriptions) as Partial<Subscription>[]).map((sub) => ({ targetId: null, flags: 0, params: {}, ...sub }) as Subscription),
      params: JSON.parse(r.params) as ConnectionParams,
    }));
  }

  private saveSubscriptions(id: string, subscriptions: Subscription[]): void {
    this.ctx.storage.sql.exec("UPDATE connections SET subscriptions = ? WHERE id = ?", JSON.stringify(subscriptions), id);
  }

  /**
   * Adds a subscription to an open connection; the same endpoint (target) with the same
   * parameters again returns the existing subscription, other parameters make another one.
   * At most MORE_LIMITS.subscriptionsPerConnection per connection.
   */
  async subscribe(connectionId: string, target: SubscriptionTarget, createdAt: number): Promise<SubscribeResult> {
    const conn = this.socket(connectionId) && this.connection(connectionId);
    if (!conn) return { error: "no_connection" };
    const existing = conn.subscriptions.find(
      (s) => s.endpoint === target.endpoint && s.channelId === target.channelId && s.targetId === target.targetId && sameParams(s.params, target.params),
    );
    if (existing) return { subscriptionId: existing.id, created: false };
    if (conn.subscriptions.length >= MORE_LIMITS.subscriptionsPerConnection) return { error: "full" };
    const sub: Subscription = { id: randomId(), ...target };
    // Recorded before the insert, so a concurrent subscribe counts it (no await in between).
    this.saveSubscriptions(connectionId, [...conn.subscriptions, sub]);
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
  async unsubscribe(connectionId: string, subscriptionId: string): Promise<UnsubscribeResult> {
    if (!this.connection(connectionId)) return "no_connection";
    if (!this.forget(connectionId, subscriptionId)) return "no_subscription";
    await deleteSubscriptions(this.db, [subscriptionId]);
    return "ok";
  }

  /** Ends one connection for good (DELETE /users/me/streams/{connection_id}); false if there is none. */
  async closeConnection(connectionId: string): Promise<boolean> {
    const conn = this.connection(connectionId);
    if (!conn) return false;
    const ws = this.socket(connectionId);
    await this.end([conn], "deleted");
    if (ws) closeQuietly(ws, CLOSE.deleted);
    return true;
  }

  /**
   * Numbers each event per connection it goes to (with the `subscription_ids` that connection
   * still holds), keeps it for replay, and sends it to the open, caught-up sockets. Then ends
   * the connections opened with `revokedTokens`. Returns the number of frames sent.
   */
  async deliver(events: UserHubEvent[], revokedTokens: number[] = []): Promise<number> {
    const now = Date.now();
    const conns = new Map(this.connections().map((c) => [c.id, c]));
    const stale: string[] = [];
    let sent = 0;
    let stored = false;
    for (const e of this.buffer.fresh(events)) {
      const targets = Array.isArray(e.targets) ? subscribed(e.targets, conns, stale, e) : own(e.targets, conns);
      if (!targets.length) continue;
      stored = true;
      // Connections asking for the same rendering share one stored copy of the event.
      const byShape = new Map<string, Target[]>();
      for (const t of targets) byShape.set(shapeKey(t.conn.params), [...(byShape.get(shapeKey(t.conn.params)) ?? []), t]);
      for (const group of byShape.values()) {
        const event = { ...e.event, data: shapeData(e.event.data, group[0].conn.params) };
        const withIds = group.map((t) => ({ conn: t.conn, extra: joinMeta(`"subscription_ids":${JSON.stringify(t.ids)}`, e.meta) }));
        const cursors = this.buffer.append(this.buffer.store(event, now), now, withIds.map((t) => ({ id: t.conn.streamId, extra: t.extra })));
        for (const t of withIds) {
          const ws = this.socket(t.conn.id);
          if (!ws || this.catchUp.has(ws)) continue;
          try {
            ws.send(frameText(event, cursors.get(t.conn.streamId)!, t.extra));
            sent++;
          } catch {
            // closing socket
          }
        }
      }
    }
    // Ended before the sockets close: a client that sees the close finds the subscriptions gone.
    const revoked = [...conns.values()].filter((c) => revokedTokens.includes(c.tokenId));
    await Promise.all([deleteSubscriptions(this.db, stale), this.end(revoked, "revoked")]);
    for (const tokenId of revokedTokens) for (const ws of this.ctx.getWebSockets(tokenTag(tokenId))) closeQuietly(ws, CLOSE.revoked);
    if (stored && !this.trimArmed) {
      this.trimArmed = true;
      await armAlarm(this.ctx, now + REPLAY_TRIM_MS);
    }
    return sent;
  }

  /** Removes a subscription from a connection; false if it was not there. */
  private forget(connectionId: string, subscriptionId: string): boolean {
    const conn = this.connection(connectionId);
    const subscriptions = conn?.subscriptions.filter((s) => s.id !== subscriptionId) ?? [];
    if (!conn || subscriptions.length === conn.subscriptions.length) return false;
    this.saveSubscriptions(connectionId, subscriptions);
    return true;
  }

  /** Ends connections for good: their buffers, rows and subscriptions go; a resume is told why. */
  private async end(conns: Connection[], reason: EndReason): Promise<void> {
    if (!conns.length) return;
    const now = Date.now();
    for (const c of conns) {
      this.buffer.retire(c.streamId);
      this.ctx.storage.sql.exec("DELETE FROM connections WHERE id = ?", c.id);
      this.ctx.storage.sql.exec("INSERT OR REPLACE INTO ended (id, reason, at) VALUES (?, ?, ?)", c.id, reason, now);
    }
    await deleteConnectionSubscriptions(this.db, conns.map((c) => c.id));
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
    const conn = this.connection(connectionId);
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
    const conns = this.connections();
    for (const c of conns) {
      if (connected.has(c.streamId) && !this.socket(c.id)) this.buffer.setRetireAt(c.streamId, now + this.limits.seconds * 1000);
    }
    const expired = new Set(this.buffer.expired(now));
    await this.end(conns.filter((c) => expired.has(c.streamId)), "expired");
    this.buffer.trim(now, this.limits);
    this.ctx.storage.sql.exec("DELETE FROM ended WHERE at < ?", now - ENDED_KEPT_MS);
    const oldestEnded = this.ctx.storage.sql.exec<{ at: number | null }>("SELECT min(at) AS at FROM ended").one().at;
    const at = Math.min(next, this.buffer.hasStreams() ? now + REPLAY_TRIM_MS : Infinity, oldestEnded === null ? Infinity : oldestEnded + ENDED_KEPT_MS);
    if (at !== Infinity) await this.ctx.storage.setAlarm(Math.max(at, now + 1000));
  }
}

/** A refused resume: the Worker passes this envelope on as the answer to the upgrade. */
const refuse = (message: string) => Response.json({ meta: { code: 400, error_message: `Bad Request: ${message}` } }, { status: 400 });

type Target = { conn: Connection; ids: string[] };

/**
 * Routed subscriptions still held by this hub's connections (the others are collected in
 * `stale`), less those whose parameters leave the event out.
 */
function subscribed(
  targets: { connectionId: string; subscriptionIds: string[] }[],
  conns: Map<string, Connection>,
  stale: string[],
  e: UserHubEvent,
): Target[] {
  const out: Target[] = [];
  for (const t of targets) {
    const held = new Map(conns.get(t.connectionId)?.subscriptions.map((s) => [s.id, s]));
    const ids = t.subscriptionIds.filter((id) => held.has(id) && accepts(held.get(id)!.params, e));
    stale.push(...t.subscriptionIds.filter((id) => !held.has(id)));
    if (ids.length) out.push({ conn: conns.get(t.connectionId)!, ids });
  }
  return out;
}

/** Every connection of the user but the excepted one, with its subscriptions to the event's stream. */
function own(target: OwnConnections, conns: Map<string, Connection>): Target[] {
  return [...conns.values()]
    .filter((c) => c.id !== target.exceptConnectionId)
    .map((conn) => ({
      conn,
      ids: conn.subscriptions
        .filter((s) => target.endpoints.includes(s.endpoint) && (s.endpoint !== "channel_messages" || s.channelId === target.channelId))
        .map((s) => s.id),
    }));
}
