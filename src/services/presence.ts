import type { Context } from "hono";
import { codePointLength } from "../text";
import { LIMITS, MORE_LIMITS } from "../config";
import { publish, type DomainEvent } from "../events/publish";
import { ApiError } from "../http/errors";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import { OFFLINE, writePresence, type PresenceRecord } from "../stores/presence";
import type { UserRecord } from "../stores/users";
import { viewContext } from "../views/context";
import { renderPresence, type PresenceView } from "../views/presence";

/**
 * The status a `presence` value asks for (api.md "States and transitions", decisions §7): unset, empty or `1` →
 * `online`; `offline` or `0` → null (offline, the status is deleted); any other text up to
 * LIMITS.user.presence_max_length code points is kept as given. Longer → 400 naming `field`.
 */
export function parseStatus(raw: string | undefined, field: string): string | null {
  if (raw === undefined || raw.trim() === "" || raw === "1") return "online";
  if (raw === "0" || raw === OFFLINE) return null;
  const max = LIMITS.user.presence_max_length;
  if (codePointLength(raw) > max) throw ApiError.badRequest(`'${field}' must be at most ${max} characters`);
  return raw;
}

/** The `user_presence` event (decisions §8): a list of Presence objects. Going offline is a deletion. */
export function presenceEvent(view: PresenceView): DomainEvent {
  const userId = Number(view.id);
  return {
    type: "user_presence",
    data: [view],
    ...(view.presence === OFFLINE ? { isDeleted: true } : {}),
    route: { actorId: userId, userIds: [userId] },
  };
}

/** The per-user expiry timer (one Durable Object per user: no global hot spot). */
export function presenceTimer(env: Env, userId: number) {
  return env.PRESENCE.get(env.PRESENCE.idFromName(String(userId)));
}

/**
 * Sets the user's status (null = offline) until `expiresAt` (default: the standard lifetime) and
 * returns the updated Presence object. Starts the expiry timer when the user comes online from
 * offline or the new status lapses sooner than the one it replaces (a later expiry is found by
 * the running timer, which re-arms itself); publishes `user_presence` when the status changes
 * (not on plain renewals, which clients send with every call).
 */
export async function setUserPresence(c: Context<AppEnv>, user: UserRecord, status: string | null, expiresAt?: number): Promise<PresenceView> {
  const at = now(c);
  const view = viewContext(c);
  const lifetime = expiresAt === undefined ? MORE_LIMITS.presenceLifetimeSeconds : expiresAt - at;
  const written = await writePresence(c.var.db, user.id, status, at, lifetime);
  if (status !== null && (written.previousExpiresAt === null || written.expiresAt < written.previousExpiresAt)) {
    try {
      await presenceTimer(c.env, user.id).arm(user.id, written.expiresAt, at, view.origin);
    } catch (e) {
      // The status is stored and lapses on reads regardless; only the expiry event is at stake.
      console.error(JSON.stringify({ error: "presence timer not armed", user_id: user.id, detail: String(e) }));
    }
  }
  const record: PresenceRecord = {
    userId: user.id,
    username: user.username,
    name: user.name,
    avatarUrl: user.avatarUrl,
    presence: status,
    lastSeenAt: written.lastSeenAt,
  };
  const rendered = renderPresence(record, view.origin);
  if (written.previous !== status) publish(c, presenceEvent(rendered));
  return rendered;
}
