import { and, eq, gt, lte } from "drizzle-orm";
import { schema, type Db } from "../db";
import { first } from "../db/batch";

const { presence, users } = schema;

/**
 * Presence rows: one per user who ever set a presence. A live status has `expires_at` in the
 * future; going offline (PUT `offline`/`0`, or the lifetime lapsing) deletes the status but
 * keeps the row as `presence = 'offline'`, `expires_at = 0`, so `last_seen_at` (time of the
 * user's last update) stays known. Every read treats `expires_at <= now` as offline, so a late
 * expiry alarm never shows a lapsed status; a disabled user's status is not shown either.
 */
export const OFFLINE = "offline";

/** What a Presence object is rendered from: the user's public fields plus their status. */
export interface PresenceRecord {
  userId: number;
  username: string;
  name: string | null;
  avatarUrl: string | null;
  /** The live status, or null when offline. */
  presence: string | null;
  /** Time of the last update; null if the user never set a presence. */
  lastSeenAt: number | null;
}

const userFields = { userId: users.id, username: users.username, name: users.name, avatarUrl: users.avatarUrl };

/** One user's presence (offline when none or lapsed); undefined when the user does not exist. */
export async function getPresence(db: Db, userId: number, now: number): Promise<PresenceRecord | undefined> {
  const row = await db
    .select({ ...userFields, presence: presence.presence, lastSeenAt: presence.lastSeenAt, expiresAt: presence.expiresAt, isDisabled: users.isDisabled })
    .from(users)
    .leftJoin(presence, eq(presence.userId, users.id))
    .where(eq(users.id, userId))
    .then(first);
  if (!row) return undefined;
  const { expiresAt, isDisabled, ...rest } = row;
  return { ...rest, presence: !isDisabled && expiresAt != null && expiresAt > now ? rest.presence : null };
}

export interface PresenceWrite {
  /** The status that was live just before the write (null: offline or never set). */
  previous: string | null;
  /** When that status was to lapse (null: none was live). */
  previousExpiresAt: number | null;
  lastSeenAt: number;
  expiresAt: number;
}

/**
 * Sets a user's status (`null` = offline) in one atomic batch that also reads the status it
 * replaces, so the caller knows whether it changed and whether an expiry timer is running.
 */
export async function writePresence(db: Db, userId: number, status: string | null, now: number, lifetimeSeconds: number): Promise<PresenceWrite> {
  const expiresAt = status === null ? 0 : now + lifetimeSeconds;
  const values = { userId, presence: status ?? OFFLINE, lastSeenAt: now, expiresAt };
  const [before] = await db.batch([
    db.select({ presence: presence.presence, expiresAt: presence.expiresAt }).from(presence).where(eq(presence.userId, userId)),
    db
      .insert(presence)
      .values(values)
      .onConflictDoUpdate({ target: presence.userId, set: { presence: values.presence, lastSeenAt: now, expiresAt } }),
  ]);
  const old = before[0];
  const live = old && old.expiresAt > now;
  return { previous: live ? old.presence : null, previousExpiresAt: live ? old.expiresAt : null, lastSeenAt: now, expiresAt };
}

export interface ExpiryResult {
  /** The user's presence after the lapse, when this call took the status offline. */
  expired: PresenceRecord | null;
  /** When the user's live status (renewed meanwhile) lapses; null when none is live. */
  nextExpiry: number | null;
}

/**
 * Takes a user's status offline if, and only if, it has lapsed at `now`; idempotent (a second
 * run, or a run after the status was renewed or set offline, changes nothing). One batch: the
 * conditional update and the re-read happen atomically.
 */
export async function expirePresence(db: Db, userId: number, now: number): Promise<ExpiryResult> {
  const [updated, current] = await db.batch([
    db
      .update(presence)
      .set({ presence: OFFLINE, expiresAt: 0 })
      .where(and(eq(presence.userId, userId), gt(presence.expiresAt, 0), lte(presence.expiresAt, now)))
      .returning({ lastSeenAt: presence.lastSeenAt }),
    db
      .select({ ...userFields, expiresAt: presence.expiresAt })
      .from(users)
      .leftJoin(presence, eq(presence.userId, users.id))
      .where(eq(users.id, userId)),
  ]);
  const row = current[0];
  const done = updated[0];
  const expired =
    done && row ? { userId: row.userId, username: row.username, name: row.name, avatarUrl: row.avatarUrl, presence: null, lastSeenAt: done.lastSeenAt } : null;
  const nextExpiry = row?.expiresAt != null && row.expiresAt > now ? row.expiresAt : null;
  return { expired, nextExpiry };
}
