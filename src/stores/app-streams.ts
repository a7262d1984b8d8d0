import { and, asc, eq, sql } from "drizzle-orm";
import { first, runOne } from "../db/batch";
import { schema, type Db } from "../db";

const { appStreams } = schema;

export type AppStreamRecord = typeof appStreams.$inferSelect;

/** The app's streams in creation order. */
const listQuery = (db: Db, appId: number) =>
  db.select().from(appStreams).where(eq(appStreams.appId, appId)).orderBy(asc(appStreams.createdAt), asc(appStreams.position));

export async function listAppStreams(db: Db, appId: number): Promise<AppStreamRecord[]> {
  return listQuery(db, appId);
}

export async function getAppStream(db: Db, appId: number, key: string): Promise<AppStreamRecord | undefined> {
  return db
    .select()
    .from(appStreams)
    .where(and(eq(appStreams.appId, appId), eq(appStreams.key, key)))
    .then(first);
}

/**
 * Inserts a stream unless the app already has `max` streams, in one statement (so even a
 * caller that bypassed the registry object could not make one too many). False when full.
 * A taken key throws the primary key's constraint error.
 */
export async function insertAppStreamIfRoom(db: Db, row: Omit<AppStreamRecord, "position">, max: number): Promise<boolean> {
  const result = await runOne(
    db,
    sql`INSERT INTO app_streams (app_id, key, object_types, created_at, position)
        SELECT ${row.appId}, ${row.key}, ${JSON.stringify(row.objectTypes)}, ${row.createdAt},
          (SELECT coalesce(max(position), 0) + 1 FROM app_streams WHERE app_id = ${row.appId})
        WHERE (SELECT count(*) FROM app_streams WHERE app_id = ${row.appId}) < ${max}`,
  );
  return result.changes === 1;
}

export async function updateAppStreamTypes(db: Db, appId: number, key: string, objectTypes: string[]): Promise<AppStreamRecord | undefined> {
  const [row] = await db
    .update(appStreams)
    .set({ objectTypes })
    .where(and(eq(appStreams.appId, appId), eq(appStreams.key, key)))
    .returning();
  return row;
}

export async function deleteAppStream(db: Db, appId: number, key: string): Promise<AppStreamRecord | undefined> {
  const [row] = await db
    .delete(appStreams)
    .where(and(eq(appStreams.appId, appId), eq(appStreams.key, key)))
    .returning();
  return row;
}

/** Deletes all the app's streams; returns them in creation order (one round trip). */
export async function deleteAllAppStreams(db: Db, appId: number): Promise<AppStreamRecord[]> {
  const [rows] = await db.batch([listQuery(db, appId), db.delete(appStreams).where(eq(appStreams.appId, appId))]);
  return rows;
}
