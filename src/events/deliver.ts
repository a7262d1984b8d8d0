import { openDb, type RawResult } from "../db";
import { runBatch, type Statement } from "../db/batch";
import { appRingHubs, FIRST_RING, typeMask, USER_FANOUT_BATCH, userHubShard, userShardOf, type AppRing } from "./hubs";
import { planMeta, type EventMeta } from "./event-meta";
import type { StampedEvent } from "./publish";
import type { StoredEvent } from "./replay";
import { LIST_TYPES, planRoute, type AppAudience, type OwnConnections } from "./routing";

/** One event as the app stream hubs receive it: serialized once, stored once per hub. */
export interface AppHubEvent {
  /** Bit of the event's object type (see `typeMask`). */
  mask: number;
  event: StoredEvent;
  /** Apps whose streams may receive it; null: every app. */
  appIds: number[] | null;
  /** Extra meta fields of app stream frames (JSON without braces; src/events/event-meta.ts). */
  meta?: string;
  /** The outbox sequence: the frames' `meta.id`; a hub skips a sequence it has applied (a relay retry). */
  seq: number;
}

/** One event as a user's stream hub receives it: data serialized once, and the connections it goes to. */
export interface UserHubEvent {
  event: StoredEvent;
  /** Extra meta fields of user stream frames (JSON without braces). */
  meta?: string;
  /** The outbox sequence (see AppHubEvent). */
  seq?: number;
  /** What subscription filters read that the data does not say (the channel type of a message). */
  channelType?: string;
  /** Subscriptions of this user that asked for it, per connection; or the user's own connections. */
  targets: { connectionId: string; subscriptionIds: string[] }[] | OwnConnections;
}

interface RecipientRow {
  id: string;
  connection_id: string;
  user_id: number;
}

/**
 * The event sink (installed by src/index.ts): delivers the events of one write, in order.
 *
 * 1. Every event is planned from its own content (src/events/routing.ts): its app-stream
 *    audience and, if any, a statement finding the live user-stream subscriptions it concerns.
 * 2. All those statements run in ONE D1 batch.
 * 3. App streams: the events go once to each hub of the active ring (`ring`, held by the relay),
 *    which stores each once under its outbox sequence and sends it to the sockets listening for
 *    its type (and app). Events that need no lookup leave before the batch returns.
 * 4. User streams: the recipients are grouped by user hub shard; each shard gets its events in
 *    calls naming at most USER_FANOUT_BATCH connections each (one after another, so every
 *    connection sees the events in order); shards are called in parallel. The hub numbers each
 *    event per connection and stamps its `subscription_ids`. A token revocation then closes the
 *    token's connections. A post to N connected followers costs about
 *    Σ over shards ⌈connections there / USER_FANOUT_BATCH⌉ calls, never one per recipient.
 */
export async function deliverEvents(env: Env, events: StampedEvent[], ring: AppRing = FIRST_RING): Promise<void> {
  const db = openDb(env);
  const plans = events.map((e) => ({ event: e, ...planRoute(e), stored: storedOf(e), metaPlan: planMeta(e) }));

  const statements: Statement[] = [];
  const slot = (s: Statement | null) => (s ? statements.push(s) - 1 : -1);
  const slots = plans.map((p) => ({
    apps: p.appAudience.kind === "query" ? slot(p.appAudience.statement) : -1,
    users: slot(p.recipients),
    meta: p.metaPlan.statements.map(slot),
  }));
  const metaOf = (results: RawResult[]): EventMeta[] => plans.map((p, i) => p.metaPlan.build(slots[i].meta.map((j) => results[j])));

  const appEvents = (results: RawResult[], metas: EventMeta[]): (AppHubEvent | null)[] =>
    plans.map((p, i) =>
      p.event.seq === undefined
        ? null
        : {
            mask: typeMask([p.event.type]),
            seq: p.event.seq,
            event: p.stored,
            appIds: resolveApps(p.appAudience, results[slots[i].apps]),
            meta: [metas[i].common, metas[i].relay].filter((m) => m).join(","),
          },
    );
  // Only the relay delivers (src/objects/stream-relay.ts), and every outbox row has a sequence:
  // an event without one never reaches an app stream (its `meta.id` would mean nothing).
  const unsequenced = plans.filter((p) => p.event.seq === undefined && !(p.appAudience.kind === "apps" && !p.appAudience.appIds.length)).length;
  if (unsequenced) console.error(JSON.stringify({ error: "events without an outbox sequence left out of app streams", count: unsequenced }));
  // Events that need no lookup go to the app hubs while the batch runs.
  const lookupForApps = slots.some((s) => s.apps >= 0 || s.meta.length > 0);
  const early = lookupForApps ? null : sendToAppHubs(env, appEvents([], metaOf([])), ring);
  early?.catch(() => {}); // marked handled: a failure is reported below with the others, even if the batch throws first
  const results = statements.length ? await runBatch(db, statements) : [];
  const metas = metaOf(results);
  const apps = early ?? sendToAppHubs(env, appEvents(results, metas), ring);

  const perShard = new Map<number, { events: UserHubEvent[]; revokedTokens: number[] }>();
  const forShard = (shard: number) => perShard.get(shard) ?? perShard.set(shard, { events: [], revokedTokens: [] }).get(shard)!;
  plans.forEach((p, i) => {
    const rows = slots[i].users >= 0 ? ((results[slots[i].users].results ?? []) as unknown as RecipientRow[]) : [];
    const byShard = new Map<number, Map<string, string[]>>();
    for (const r of rows) {
      const shard = userShardOf(Number(r.user_id));
      const conns = byShard.get(shard) ?? byShard.set(shard, new Map()).get(shard)!;
      conns.set(r.connection_id, [...(conns.get(r.connection_id) ?? []), r.id]);
    }
    for (const [shard, conns] of byShard) {
      const targets = [...conns].map(([connectionId, subscriptionIds]) => ({ connectionId, subscriptionIds }));
      forShard(shard).events.push({ seq: p.event.seq, event: p.stored, meta: metas[i].common, channelType: metas[i].channelType, targets });
    }
    const own = p.ownConnections;
    if (own) forShard(userShardOf(own.userId)).events.push({ seq: p.event.seq, event: p.stored, meta: metas[i].common, targets: own });
    const { route } = p.event;
    if (p.event.type === "token" && p.event.isDeleted && route?.tokenId !== undefined && route.actorId !== undefined) {
      forShard(userShardOf(route.actorId)).revokedTokens.push(route.tokenId);
    }
  });
  const users = [...perShard].map(async ([shard, { events: evs, revokedTokens }]) => {
    const hub = userHubShard(env, shard);
    const calls = userHubCalls(evs, revokedTokens);
    for (const call of calls) await hub.deliver(call.events, call.revokedTokens);
  });

  const outcomes = await Promise.allSettled([apps, ...users]);
  const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
  if (failed.length) throw new Error(`${failed.length} stream hub call(s) failed: ${String(failed[0].reason)}`);
}

/**
 * One shard's events cut into calls of at most `batch` connections each (an own-connections
 * event counts as one), in order; the revocations ride on the last call, after the events.
 */
export function userHubCalls(events: UserHubEvent[], revokedTokens: number[], batch = USER_FANOUT_BATCH) {
  const calls: { events: UserHubEvent[]; revokedTokens: number[] }[] = [];
  let current: UserHubEvent[] = [];
  let size = 0;
  const flush = () => {
    if (current.length) calls.push({ events: current, revokedTokens: [] });
    current = [];
    size = 0;
  };
  for (const e of events) {
    if (!Array.isArray(e.targets)) {
      if (size + 1 > batch) flush();
      current.push(e);
      size += 1;
      continue;
    }
    for (let at = 0; at < e.targets.length; ) {
      if (size >= batch) flush();
      const part = e.targets.slice(at, at + batch - size);
      current.push({ ...e, targets: part });
      size += part.length;
      at += part.length;
    }
  }
  flush();
  if (revokedTokens.length) {
    if (!calls.length) calls.push({ events: [], revokedTokens: [] });
    calls[calls.length - 1].revokedTokens = revokedTokens;
  }
  return calls;
}

async function sendToAppHubs(env: Env, events: (AppHubEvent | null)[], ring: AppRing): Promise<void> {
  const wanted = events.filter((e): e is AppHubEvent => e !== null && (e.appIds === null || e.appIds.length > 0));
  if (!wanted.length) return;
  await Promise.all(appRingHubs(env, ring).map(({ hub, seat }) => hub.publish(wanted, seat)));
}

function resolveApps(audience: AppAudience, result: RawResult | undefined): number[] | null {
  if (audience.kind === "all") return null;
  if (audience.kind === "apps") return audience.appIds;
  const row = result?.results[0] as { apps: string | null } | undefined;
  if (!row) return [];
  return row.apps === null ? null : (JSON.parse(row.apps) as number[]);
}

function storedOf(e: StampedEvent): StoredEvent {
  const data = LIST_TYPES.has(e.type) && !Array.isArray(e.data) ? [e.data] : e.data;
  return { type: e.type, timestamp: e.timestamp, isDeleted: e.isDeleted === true, data: JSON.stringify(data) };
}
