import { eq, sql, type SQL } from "drizzle-orm";
import { schema, type Db } from "../db";
import { aliasedFields, mixedBatch } from "../db/batch";
import { userViewColumns, type UserView } from "./users";
import { capturedSeq, reserveCaptured, reservedSeq, reserveEvent } from "../events/outbox";
import type { RawResult } from "../db/types";

/** What the `user` event's outbox row needs from the request (reserved in the change's batch). */
export interface UserEvent {
  origin: string;
  at: number;
}
const userRef = (e: UserEvent, userId: number) => ({ origin: e.origin, route: { actorId: userId }, id: userId });

// The caller's profile: name, locale, timezone, profile text, raw, badge, avatar and cover. Each
// change is one batch that ends with the read of the user as they see themselves.

const { users } = schema;

/** A user as they see themselves, batch-safe (aliased columns). */
const selfQuery = (db: Db, id: number) =>
  db
    .select(aliasedFields(userViewColumns(id), "u_"))
    .from(users)
    .where(eq(users.id, id));
type SelfRows = Awaited<ReturnType<typeof selfQuery>>;
const asUser = (rows: SelfRows) => rows[0] as unknown as UserView | undefined;

export interface ProfileChange {
  name?: string | null;
  locale?: string;
  timezone?: string;
  /** Processed profile text and the text as written (null: none). */
  description?: { content: unknown; markdown: string } | null;
  raw?: unknown;
  badgeId?: number | null;
}

/** Applies a profile change (fields left undefined stay) and reads the user back. */
export async function updateProfile(db: Db, userId: number, p: ProfileChange, event?: UserEvent): Promise<{ user: UserView | undefined; seq?: number }> {
  const sets: SQL[] = [];
  if (p.name !== undefined) sets.push(sql`name = ${p.name}`);
  if (p.locale !== undefined) sets.push(sql`locale = ${p.locale}`);
  if (p.timezone !== undefined) sets.push(sql`timezone = ${p.timezone}`);
  if (p.description !== undefined) {
    sets.push(sql`description = ${p.description ? JSON.stringify(p.description.content) : null}`);
    sets.push(sql`description_markdown = ${p.description?.markdown ?? null}`);
  }
  if (p.raw !== undefined) sets.push(sql`raw = ${p.raw === null ? null : JSON.stringify(p.raw)}`);
  if (p.badgeId !== undefined) sets.push(sql`badge_id = ${p.badgeId}`);
  const writes = sets.length ? [sql`UPDATE users SET ${sql.join(sets, sql`, `)} WHERE id = ${userId}`] : [];
  if (event) writes.push(reserveEvent("user", userRef(event, userId), event.at, undefined, sql`exists(select 1 from users eu where eu.id = ${userId})`));
  const results = await mixedBatch(db, [...writes, selfQuery(db, userId)]);
  const seq = event ? reservedSeq(results[results.length - 2] as RawResult) : undefined;
  return { user: asUser(results[results.length - 1] as SelfRows), seq };
}

export type ImageKind = "avatar" | "cover";

/** A stored image: its URL and size, or null for the default image. */
export type StoredImage = { url: string; width: number; height: number } | null;

/**
 * Sets a user's avatar or cover (null: back to the default) and reads the user back; `previous` is
 * the URL it replaced, whose content the caller removes.
 */
export async function setImage(
  db: Db,
  userId: number,
  kind: ImageKind,
  image: StoredImage,
  event?: UserEvent,
): Promise<{ user: UserView | undefined; previous: string | null; seq?: number }> {
  const [url, width, height] = kind === "avatar" ? ["avatar_url", "avatar_width", "avatar_height"] : ["cover_url", "cover_width", "cover_height"];
  // An event when an image is set, or one is removed (not when removing the default).
  const ref = JSON.stringify(userRef(event ?? { origin: "", at: 0 }, userId));
  const changes = image ? sql`1 = 1` : sql`${sql.raw(url)} is not null`;
  const reservation = reserveCaptured(
    "user",
    event?.at ?? 0,
    event ? sql`(select case when ${changes} then ${ref} end from users cu where cu.id = ${userId})` : sql`NULL`,
  );
  const [before, capture, , insert, after] = await mixedBatch(db, [
    sql`SELECT ${sql.raw(url)} AS url FROM users WHERE id = ${userId}`,
    reservation.capture,
    sql`UPDATE users SET ${sql.raw(url)} = ${image?.url ?? null}, ${sql.raw(width)} = ${image?.width ?? null}, ${sql.raw(height)} = ${image?.height ?? null}
      WHERE id = ${userId}`,
    reservation.insert,
    selfQuery(db, userId),
  ] as const);
  return { user: asUser(after), previous: (before.results[0]?.url as string | null | undefined) ?? null, seq: capturedSeq(capture, insert) };
}

/** Sets the URL a user proved to own (null removes it) and reads the user back; undefined for no such user. */
export async function setVerifiedUrl(db: Db, userId: number, url: string | null): Promise<UserView | undefined> {
  const [, rows] = await mixedBatch(db, [sql`UPDATE users SET verified_url = ${url} WHERE id = ${userId}`, selfQuery(db, userId)] as const);
  return asUser(rows);
}
