import { MORE_LIMITS } from "../config";
import { CLOSE } from "../events/hubs";

/**
 * Idle closing shared by the two stream hubs (decisions §8: a client message at least every
 * 60 s). Every socket's attachment carries `at`, the time (ms) of its last client message; the
 * text `ping` is answered `pong` by the runtime without waking the object, and the time of
 * that auto-response counts as activity too. One alarm per hub walks the sockets (once per
 * idle period, never per event) and closes those past the limit; the same alarm trims the
 * hub's replay buffer.
 */
const IDLE_MS = MORE_LIMITS.streamIdleSeconds * 1000;

export interface Activity {
  /** Unix ms of the last client message. */
  at: number;
}

/** Records a client message on the socket. */
export function touch(ws: WebSocket, at = Date.now()): void {
  const att = ws.deserializeAttachment() as Activity;
  ws.serializeAttachment({ ...att, at });
}

function lastActivity(ctx: DurableObjectState, ws: WebSocket): number {
  const ping = ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? 0;
  return Math.max((ws.deserializeAttachment() as Activity | null)?.at ?? 0, ping);
}

/**
 * Makes sure the hub's alarm runs by `at` (call after accepting a socket, or when something
 * else needs the alarm). A stored alarm in the past never fired (e.g. kept over a restart of
 * the local runtime, which does not schedule it again): it is set again, to run now.
 */
export async function armAlarm(ctx: { storage: Pick<DurableObjectStorage, "getAlarm" | "setAlarm"> }, at: number, now = Date.now()): Promise<void> {
  const current = await ctx.storage.getAlarm();
  if (current === null || current > at) await ctx.storage.setAlarm(at);
  else if (current < now) await ctx.storage.setAlarm(now);
}

/** The alarm time for an idle check of a socket accepted now. */
export const idleDeadline = (now = Date.now()) => now + IDLE_MS;

/**
 * Closes the sockets idle for longer than the limit. Returns the earliest idle deadline of
 * those left (Infinity: none), for the hub to schedule its next alarm.
 */
export function closeIdleSockets(ctx: DurableObjectState, now = Date.now()): number {
  let next = Infinity;
  for (const ws of ctx.getWebSockets()) {
    if (ws.readyState !== WebSocket.OPEN) continue;
    const deadline = lastActivity(ctx, ws) + IDLE_MS;
    if (deadline <= now) closeQuietly(ws, CLOSE.idle);
    else next = Math.min(next, deadline);
  }
  return next;
}

/** Closes a socket, ignoring one that is already closing. */
export function closeQuietly(ws: WebSocket, how: { code: number; reason: string }): void {
  try {
    ws.close(how.code, how.reason);
  } catch {
    // already closed
  }
}

/** Answers the client's close (the runtime does not do it for us at this compatibility date). */
export function completeClose(ws: WebSocket, code: number, reason: string): void {
  // 1005/1006 are reserved codes that cannot be sent back.
  closeQuietly(ws, { code: code === 1005 || code === 1006 ? 1000 : code, reason });
}
