import type { Context } from "hono";
import { openDb } from "../db";
import { now } from "../http/time";
import { appendEvents } from "./outbox";
import type { AppEnv } from "../http/types";
import type { AppRing } from "./hubs";

/** Object types of app stream events (api.md "App streams"). */
export const OBJECT_TYPES = [
  "post",
  "bookmark",
  "follow",
  "mute",
  "block",
  "message",
  "channel",
  "channel_subscription",
  "token",
  "file",
  "poll",
  "user_presence",
  "user_channel_presence",
  "user",
] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

/**
 * Event types: the app stream object types, and `marker` (a read position moved), which only
 * the user's own user stream connections receive.
 */
export type EventType = ObjectType | "marker";

/**
 * Something that happened, as streams deliver it (decisions §8). `data` is the object rendered
 * without viewer-specific flags; `is_deleted` marks deletions and undos. `route` carries the
 * ids the stream hub needs to find interested user-stream subscriptions without a lookup.
 */
export interface DomainEvent {
  type: EventType;
  data: unknown;
  isDeleted?: boolean;
  route?: {
    /** The user who acted (author, follower, responder...). */
    actorId?: number;
    /** Users the object is about or addressed to (mentioned, followed, file owner...). */
    userIds?: number[];
    channelId?: number;
    /** Token events: the app the token belongs to (only that app's streams hear of it). */
    appId?: number;
    /** Token revocations: the deleted token, whose user-stream connections are then closed. */
    tokenId?: number;
    /** Marker events: the actor's connection that made the change (it is not told of it). */
    exceptConnectionId?: string;
  };
  /** The event's sequence when the write reserved its outbox row in its own batch (src/events/outbox.ts). */
  seq?: number;
}

/**
 * An event as delivered: stamped once, so every socket sees the same `timestamp`, and numbered
 * once by the outbox (`seq`, the global order the relay delivers in; hubs skip a `seq` they have
 * applied). On app streams `meta.id` is that sequence; user stream hubs give each event the
 * cursor of the connection it goes to (src/events/replay.ts).
 */
export interface StampedEvent extends DomainEvent {
  /** Unix seconds. */
  timestamp: number;
}

type Sink = (env: Env, events: StampedEvent[], ring: AppRing) => Promise<void>;
/** Per isolate by design: the Worker entry installs it at start-up (events/ does not import the hubs). */
let sink: Sink | null = null;

/** Installs the delivery of events (the stream hubs); set once at start-up by the Worker entry. */
export function setEventSink(s: Sink): void {
  sink = s;
}

/** Delivers events to the stream hubs: only the relay calls this (src/objects/stream-relay.ts). */
export async function sendToSink(env: Env, events: StampedEvent[], ring: AppRing): Promise<void> {
  if (sink && events.length) await sink(env, events, ring);
}

/** The relay that moves outbox rows to the hubs, in order (one object: one global order). */
export const streamRelay = (env: Env) => env.STREAM_RELAY.getByName("relay");

/**
 * Publishes events after the response: never slows the write, and a delivery failure never
 * fails it. Writes call this once with everything they changed. Events whose outbox row the
 * write reserved in its batch (`seq` set) are only handed to the relay; the others are recorded
 * in the outbox first. Tests may skip the hand-off (`X-Test-Skip-Relay-Poke: 1`, with the test
 * clock allowed) to play a writer that died after its commit: the relay's alarm finds the row.
 */
export function publish(c: Context<AppEnv>, ...events: DomainEvent[]): void {
  // The request's clock (tests move it with X-Test-Now); callers outside a request may pass a bare context.
  const poke = !(c.req && c.env.ALLOW_TEST_CLOCK === "1" && c.req.header("X-Test-Skip-Relay-Poke") === "1");
  publishAt(c.env, c.executionCtx, c.req ? now(c) : Math.floor(Date.now() / 1000), events, poke);
}

/**
 * `publish` for code that runs outside a request (Durable Object alarms, queues): the same
 * outbox and relay, kept alive by the given context's `waitUntil`.
 */
export function publishFromEnv(env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }, ...events: DomainEvent[]): void {
  publishAt(env, ctx, Math.floor(Date.now() / 1000), events, true);
}

function publishAt(env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }, timestamp: number, events: DomainEvent[], poke: boolean): void {
  if (!events.length) return;
  const stamped = events.map((e) => ({ ...e, timestamp }));
  ctx.waitUntil(handOff(env, stamped, poke).catch((e) => console.error(JSON.stringify({ error: "event hand-off failed", detail: String(e) }))));
}

/**
 * Pokes the relay with nothing: it delivers whatever the outbox holds after its cursor. Called by
 * a stream socket that resumes (`since`): after a crash that is the first sign of clients coming
 * back, and rows whose writer died before its poke should not wait for the relay's heartbeat.
 */
export function wakeRelay(env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }): void {
  ctx.waitUntil(
    streamRelay(env)
      .poke([])
      .catch((e) => console.error(JSON.stringify({ error: "relay wake failed", detail: String(e) }))),
  );
}

/** Records the events not reserved in the write's batch, then pokes the relay with all of them. */
async function handOff(env: Env, events: StampedEvent[], poke: boolean): Promise<void> {
  const reserved = events.filter((e) => e.seq !== undefined);
  const rest = events.filter((e) => e.seq === undefined);
  const appended = rest.length ? await appendEvents(openDb(env), rest) : [];
  if (poke) await streamRelay(env).poke([...reserved, ...appended]);
}
