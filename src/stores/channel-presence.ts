import { and, desc, eq, gt } from "drizzle-orm";
import { schema, type Db } from "../db";
import { first } from "../db/batch";
import { OFFLINE, type PresenceRecord, type PresenceWrite } from "./presence";

const { channelPresence, users } = schema;

// Per-channel presence (resources/channels/presence.md): the same rules as global presence
// (src/stores/presence.ts) for one (channel, user) pair. A lapsed status reads as offline; no
// timer takes it offline in storage (the reference emits nothing when it lapses).

const userFields = { userId: users.id, username: users.username, name: users.name, avatarUrl: users.avatarUrl };

/** Every user whose status in the channel is live at `now`, newest update first (disabled users left out). */
export async function listChannelPresence(db: Db, channelId: number, now: number): Promise<PresenceRecord[]> {
  return db
    .select({ ...userFields, presence: channelPresence.presence, lastSeenAt: channelPresence.lastSeenAt })
    .from(channelPresence)
    .innerJoin(users, eq(users.id, channelPresence.userId))
    .where(and(eq(channelPresence.channelId, channelId), gt(channelPresence.expiresAt, now), eq(users.isDisabled, false)))
    .orderBy(desc(channelPresence.lastSeenAt), desc(channelPresence.userId));
}

/** One user's presence in a channel (offline when none or lapsed); undefined when the user does not exist. */
export async function getChannelPresence(db: Db, channelId: number, userId: number, now: number): Promise<PresenceRecord | undefined> {
  const row = await db
    .select({
      ...userFields,
      presence: channelPresence.presence,
      lastSeenAt: channelPresence.lastSeenAt,
      expiresAt: channelPresence.expiresAt,
      isDisabled: users.isDisabled,
    })
    .from(users)
    .leftJoin(channelPresence, and(eq(channelPresence.userId, users.id), eq(channelPresence.channelId, channelId)))
    .where(eq(users.id, userId))
    .then(first);
  if (!row) return undefined;
  const { expiresAt, isDisabled, ...rest } = row;
  return { ...rest, presence: !isDisabled && expiresAt != null && expiresAt > now ? rest.presence : null };
}

/** Sets a user's status in a channel (`null` = offline) until `expiresAt`, reading the status it replaces, in one batch. */
export async function writeChannelPresence(
  db: Db,
  channelId: number,
  userId: number,
  status: string | null,
  now: number,
  expiresAt: number,
): Promise<PresenceWrite> {
  const lapse = status === null ? 0 : expiresAt;
  const values = { channelId, userId, presence: status ?? OFFLINE, lastSeenAt: now, expiresAt: lapse };
  const [before] = await db.batch([
    db
      .select({ presence: channelPresence.presence, expiresAt: channelPresence.expiresAt })
      .from(channelPresence)
      .where(and(eq(channelPresence.channelId, channelId), eq(channelPresence.userId, userId))),
    db
      .insert(channelPresence)
      .values(values)
      .onConflictDoUpdate({
        target: [channelPresence.channelId, channelPresence.userId],
        set: { presence: values.presence, lastSeenAt: now, expiresAt: lapse },
      }),
  ]);
  const old = before[0];
  const live = old && old.expiresAt > now;
  return { previous: live ? old.presence : null, previousExpiresAt: live ? old.expiresAt : null, lastSeenAt: now, expiresAt: lapse };
}
