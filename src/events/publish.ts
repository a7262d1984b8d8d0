import type { Context } from "hono";
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
 * Something that happened, as streams deliver it (decisions §8). `data` is the object rendered
 * without viewer-specific flags; `is_deleted` marks deletions and undos. `route` carries the
 * ids the stream hub needs to find interested user-stream subscriptions without a lookup.
 */
export interface DomainEvent {
  type: ObjectType;
  data: unknown;
  isDeleted?: boolean;
  route?: {
    /** The user who acted (author, follower, responder...). */
    actorId?: number;
    /** Users the object is about or addressed to (mentioned, followed, file owner...). */
    userIds?: number[];
    channelId?: number;
  };
}

type Sink = (env: Env, events: DomainEvent[]) => Promise<void>;
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
  if (!sink || !events.length) return;
  const deliver = sink;
  c.executionCtx.waitUntil(deliver(c.env, events).catch((e) => console.error("event delivery failed", String(e))));
}
