import { and, eq, sql } from "drizzle-orm";
import { schema, type Db } from "../db";
import { first } from "../db/batch";
import { userExtraColumns, type UserExtras, type UserRecord } from "./users";

const { tokens, apps, users, authorizations, userActivity } = schema;

export type TokenRecord = typeof tokens.$inferSelect;

/** The token with its app and (for user tokens) user with its badge and presence, in one query. */
export async function findToken(db: Db, tokenHash: string) {
  const row = await db
    .select({ token: tokens, app: apps, user: users, extras: userExtraColumns() })
    .from(tokens)
    .innerJoin(apps, eq(apps.id, tokens.appId))
    .leftJoin(users, eq(users.id, tokens.userId))
    .where(eq(tokens.tokenHash, tokenHash))
    .then(first);
  if (!row) return undefined;
  const user: (UserRecord & UserExtras) | null = row.user && { ...row.user, ...row.extras };
  return { token: row.token, app: row.app, user };
}

/** Issues a token; a user token also records the user's authorization of the app. */
export async function insertToken(
  db: Db,
  t: { tokenHash: string; appId: number; userId: number | null; scopes: string[]; createdAt: number },
): Promise<TokenRecord> {
  const insert = db.insert(tokens).values({ ...t, scopes: t.scopes.join(" ") }).returning();
  if (t.userId == null) return (await insert)[0];
  const [[row]] = await db.batch([
    insert,
    db
      .insert(authorizations)
      .values({ userId: t.userId, appId: t.appId, scopes: t.scopes.join(" "), createdAt: t.createdAt })
      .onConflictDoUpdate({ target: [authorizations.userId, authorizations.appId], set: { scopes: t.scopes.join(" ") } }),
  ]);
  return row;
}

export async function deleteToken(db: Db, id: number): Promise<void> {
  await db.delete(tokens).where(eq(tokens.id, id));
}

/** Records that a token's user was active today (once a day per token). */
export async function touchActivity(db: Db, tokenId: number, userId: number, day: string): Promise<void> {
  await db.batch([
    db.update(tokens).set({ lastSeenDay: day }).where(and(eq(tokens.id, tokenId))),
    db.insert(userActivity).values({ day, userId }).onConflictDoNothing(),
  ]);
}

export const scopeList = (t: TokenRecord) => t.scopes.split(" ").filter(Boolean);


/** Ids of the users who authorized an app (index authorizations_app), oldest authorization first. */
export async function appUserIds(db: Db, appId: number): Promise<number[]> {
  const rows = await db.select({ userId: authorizations.userId }).from(authorizations).where(eq(authorizations.appId, appId)).orderBy(authorizations.createdAt, authorizations.userId);
  return rows.map((r) => r.userId);
}

/** The app's live user tokens with their users, oldest first (one query). */
export async function appUserTokens(db: Db, appId: number) {
  const rows = await db
    .select({ token: tokens, user: users, extras: userExtraColumns() })
    .from(tokens)
    .innerJoin(users, eq(users.id, tokens.userId))
    .where(and(eq(tokens.appId, appId), eq(users.isDisabled, false)))
    .orderBy(tokens.id);
  return rows.map((r) => ({ token: r.token, user: { ...r.user, ...r.extras } }));
}
