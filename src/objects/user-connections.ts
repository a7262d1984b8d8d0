import type { UserHubEvent } from "../events/deliver";
import type { OwnConnections } from "../events/routing";
import { accepts, type ConnectionParams, type SubscriptionParams } from "../events/stream-params";
import type { StreamEndpoint } from "../stores/stream-subscriptions";

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

export interface Subscription extends SubscriptionTarget {
  id: string;
}

/** A connection as stored: it outlives its socket for the replay window, so it can be resumed. */
export interface Connection {
  id: string;
  userId: number;
  streamId: number;
  tokenId: number;
  appId: number;
  subscriptions: Subscription[];
  params: ConnectionParams;
}

type Row = { id: string; user_id: number; stream_id: number; token_id: number; app_id: number; subscriptions: string; params: string };

const COLUMNS = "id, user_id, stream_id, token_id, app_id, subscriptions, params";

/**
 * The connections table of a user stream hub shard (the connections of many users). Reads are
 * by connection id, user or token, through indexes: a delivery reads only the connections it
 * names, whatever the number of connections the shard holds.
 */
export class Connections {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS connections (
      id TEXT PRIMARY KEY, user_id INTEGER NOT NULL, stream_id INTEGER NOT NULL, token_id INTEGER NOT NULL,
      app_id INTEGER NOT NULL, subscriptions TEXT NOT NULL)`);
    // Connection parameters came later: older objects get the column here.
    const columns = sql.exec<{ name: string }>("PRAGMA table_info(connections)").toArray();
    if (!columns.some((c) => c.name === "params")) sql.exec("ALTER TABLE connections ADD COLUMN params TEXT NOT NULL DEFAULT '{}'");
    sql.exec("CREATE INDEX IF NOT EXISTS connections_user ON connections (user_id)");
    sql.exec("CREATE INDEX IF NOT EXISTS connections_token ON connections (token_id)");
  }

  insert(c: Connection): void {
    this.sql.exec(
      `INSERT INTO connections (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      c.id,
      c.userId,
      c.streamId,
      c.tokenId,
      c.appId,
      JSON.stringify(c.subscriptions),
      JSON.stringify(c.params),
    );
  }

  get(id: string): Connection | undefined {
    return this.where("id = ?", id)[0];
  }

  /** The connection, if it is one of `userId`'s (another user's id in the same shard reads as unknown). */
  ofUser(userId: number, id: string): Connection | undefined {
    const conn = this.get(id);
    return conn?.userId === userId ? conn : undefined;
  }

  byIds(ids: string[]): Connection[] {
    return ids.length ? this.where("id IN (SELECT value FROM json_each(?))", JSON.stringify(ids)) : [];
  }

  byUsers(userIds: number[]): Connection[] {
    return userIds.length ? this.where("user_id IN (SELECT value FROM json_each(?))", JSON.stringify(userIds)) : [];
  }

  byTokens(tokenIds: number[]): Connection[] {
    return tokenIds.length ? this.where("token_id IN (SELECT value FROM json_each(?))", JSON.stringify(tokenIds)) : [];
  }

  all(): Connection[] {
    return this.where("1 = 1");
  }

  saveSubscriptions(id: string, subscriptions: Subscription[]): void {
    this.sql.exec("UPDATE connections SET subscriptions = ? WHERE id = ?", JSON.stringify(subscriptions), id);
  }

  delete(id: string): void {
    this.sql.exec("DELETE FROM connections WHERE id = ?", id);
  }

  private where(condition: string, ...params: SqlStorageValue[]): Connection[] {
    const rows = this.sql.exec<Row>(`SELECT ${COLUMNS} FROM connections WHERE ${condition}`, ...params).toArray();
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
}

export type Target = { conn: Connection; ids: string[] };

/**
 * Routed subscriptions still held by this hub's connections (the others are collected in
 * `stale`), less those whose parameters leave the event out.
 */
export function subscribed(
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
export function own(target: OwnConnections, conns: Map<string, Connection>): Target[] {
  return [...conns.values()]
    .filter((c) => c.userId === target.userId && c.id !== target.exceptConnectionId)
    .map((conn) => ({
      conn,
      ids: conn.subscriptions
        .filter((s) => target.endpoints.includes(s.endpoint) && (s.endpoint !== "channel_messages" || s.channelId === target.channelId))
        .map((s) => s.id),
    }));
}
