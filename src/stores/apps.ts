import { and, eq, isNull, sql } from "drizzle-orm";
import { schema, type Db } from "../db";
import { first } from "../db/batch";
import { greatest } from "../db/dialect";
import { rememberDeletedApp } from "./app-refs";

const { apps, users, tokens } = schema;

export type AppRecord = typeof apps.$inferSelect;

export async function createApp(db: Db, values: typeof apps.$inferInsert): Promise<AppRecord> {
  const stmts = [db.insert(apps).values(values).returning()] as const;
  if (values.ownerId != null) {
    const [[row]] = await db.batch([
      stmts[0],
      db
        .update(users)
        .set({ clients: sql`${users.clients} + 1` })
        .where(eq(users.id, values.ownerId)),
    ]);
    return row;
  }
  const [row] = await stmts[0];
  return row;
}

export async function getAppById(db: Db, id: number): Promise<AppRecord | undefined> {
  return db.select().from(apps).where(eq(apps.id, id)).then(first);
}

export async function getAppByClientId(db: Db, clientId: string): Promise<AppRecord | undefined> {
  return db.select().from(apps).where(eq(apps.clientId, clientId)).then(first);
}

/** A public client with its owner, for GET /clients/{client_id}. */
export async function getPublicApp(db: Db, clientId: string) {
  return db
    .select({ app: apps, owner: users })
    .from(apps)
    .leftJoin(users, eq(users.id, apps.ownerId))
    .where(and(eq(apps.clientId, clientId), eq(apps.isPublic, true), isNull(apps.deletedAt)))
    .then(first);
}

/** Active clients owned by a user (list view). */
export async function listAppsByOwner(db: Db, ownerId: number) {
  return db
    .select({ clientId: apps.clientId, name: apps.name, url: apps.url })
    .from(apps)
    .where(and(eq(apps.ownerId, ownerId), isNull(apps.deletedAt)))
    .orderBy(apps.id);
}

/**
 * Deletes a client: the row stays (so embedded references can render `[REMOVED]`) and every
 * token it issued stops working, in one batch.
 */
export async function deleteApp(db: Db, app: AppRecord, at: number): Promise<void> {
  const writes = [db.update(apps).set({ deletedAt: at }).where(eq(apps.id, app.id)), db.delete(tokens).where(eq(tokens.appId, app.id))] as const;
  if (app.ownerId != null) {
    await db.batch([
      ...writes,
      db
        .update(users)
        .set({ clients: greatest(sql`${users.clients} - 1`, sql`0`) })
        .where(eq(users.id, app.ownerId)),
    ]);
  } else await db.batch(writes);
  rememberDeletedApp(app.id, { clientId: app.clientId, name: app.name, url: app.url, deletedAt: at });
}
