import { and, desc, eq, sql } from "drizzle-orm";
import { schema, type Db } from "../db";
import { first, runOne } from "../db/batch";
import { int } from "../db/dialect";

// Badges (created and awarded through the admin API) and the badges users hold.

const { badges, userBadges } = schema;

export type BadgeRecord = typeof badges.$inferSelect;

export function listBadges(db: Db): Promise<BadgeRecord[]> {
  return db.select().from(badges).orderBy(badges.id);
}

export function getBadge(db: Db, id: number): Promise<BadgeRecord | undefined> {
  return db.select().from(badges).where(eq(badges.id, id)).then(first);
}

/** The badges a user holds, most recently awarded first. */
export function userBadgeList(db: Db, userId: number) {
  return db
    .select({ id: badges.id, name: badges.name, description: badges.description, awardedAt: userBadges.awardedAt })
    .from(userBadges)
    .innerJoin(badges, eq(badges.id, userBadges.badgeId))
    .where(eq(userBadges.userId, userId))
    .orderBy(desc(userBadges.awardedAt), desc(userBadges.badgeId));
}

/** Whether a user holds a badge. */
export async function holdsBadge(db: Db, userId: number, badgeId: number): Promise<boolean> {
  const row = await db
    .select({ id: userBadges.badgeId })
    .from(userBadges)
    .where(and(eq(userBadges.userId, userId), eq(userBadges.badgeId, badgeId)))
    .then(first);
  return row !== undefined;
}

export async function createBadge(db: Db, b: { name: string; description: string; createdAt: number }): Promise<BadgeRecord> {
  const [row] = await db.insert(badges).values(b).returning();
  return row;
}

/** Awards a badge to a user (again: nothing changes). False when the user or the badge does not exist. */
export async function awardBadge(db: Db, userId: number, badgeId: number, at: number): Promise<boolean> {
  await runOne(
    db,
    sql`INSERT INTO user_badges (user_id, badge_id, awarded_at) SELECT ${int(userId)}, b.id, ${int(at)} FROM badges b
      WHERE b.id = ${badgeId} AND EXISTS (SELECT 1 FROM users ub WHERE ub.id = ${userId}) ON CONFLICT DO NOTHING`,
  );
  return holdsBadge(db, userId, badgeId);
}
