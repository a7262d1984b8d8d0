import type { Context } from "hono";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";

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
}

/**
 * An event as delivered: stamped once, so every socket sees the same `timestamp`. Its `meta.id`
 * is given by each stream hub: the cursor of the stream it goes to (src/events/replay.ts).
 */
export interface StampedEvent extends DomainEvent {
  /** Unix seconds. */
  timestamp: number;
}

type Sink = (env: Env, events: StampedEvent[]) => Promise<void>;
let sink: Sink | null = null;

/** Installs the delivery of events (the stream hub); set once at start-up by the Worker entry. */
export function setEventSink(s: Sink): void {
  sink = s;
}

/**
 * Publishes events after the response: never slows the write, and a delivery failure never
 * fails it. Writes call this once with everything they changed.
 */
export function publish(c: Context<AppEnv>, ...events: DomainEvent[]): void {
  // The request's clock (tests move it with X-Test-Now); callers outside a request may pass a bare context.
  publishAt(c.env, c.executionCtx, c.req ? now(c) : Math.floor(Date.now() / 1000), events);
}

/**
 * `publish` for code that runs outside a request (Durable Object alarms, queues): the same
 * sink, kept alive by the given context's `waitUntil`.
 */
export function publishFromEnv(env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }, ...events: DomainEvent[]): void {
  publishAt(env, ctx, Math.floor(Date.now() / 1000), events);
}

function publishAt(env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }, timestamp: number, events: DomainEvent[]): void {
  if (!sink || !events.length) return;
  const stamped = events.map((e) => ({ ...e, timestamp }));
  ctx.waitUntil(sink(env, stamped).catch((e) => console.error(JSON.stringify({ error: "event delivery failed", detail: String(e) }))));
}
