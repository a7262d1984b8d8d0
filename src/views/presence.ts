import { iso } from "../http/time";
import type { PresenceRecord } from "../stores/presence";
import { OFFLINE } from "../stores/presence";

/**
 * The Presence object (api.md "Resources and their fields"): `presence` is the live status or `offline`; `last_seen_at`
 * only when the user ever set a presence; `name` only when the user has one. `origin` serves
 * the default avatar of users without their own.
 */
export function renderPresence(p: PresenceRecord, origin: string) {
  return {
    id: String(p.userId),
    username: p.username,
    ...(p.name ? { name: p.name } : {}),
    avatar_image: p.avatarUrl ?? `${origin}/v1/static/default-avatar.png`,
    presence: p.presence ?? OFFLINE,
    ...(p.lastSeenAt != null ? { last_seen_at: iso(p.lastSeenAt) } : {}),
  };
}

export type PresenceView = ReturnType<typeof renderPresence>;
