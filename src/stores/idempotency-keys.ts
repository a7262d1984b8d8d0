import { and, eq, lt, sql } from "drizzle-orm";
import { schema, type Db } from "../db";
import { mixedBatch, runOne } from "../db/batch";

const { idempotencyKeys: keys } = schema;

export type KeyRow = typeof keys.$inferSelect;

/** What a claim found: `claimed` when this request now holds the key; the key's row either way. */
export interface Claim {
  claimed: boolean;
  row: KeyRow;
}

/**
 * Claims `key` for a request, in one round trip and atomically: deletes the caller's rows older
 * than the window (so an expired key is free again), inserts the key unless a row holds it, and
 * reads the row that holds it (this request's, or the earlier one's).
 */
export async function claimKey(db: Db, row: Pick<KeyRow, "scope" | "key" | "requestHash" | "createdAt">, windowSeconds: number): Promise<Claim> {
  const [, inserted, found] = await mixedBatch(db, [
    db.delete(keys).where(and(eq(keys.scope, row.scope), lt(keys.createdAt, row.createdAt - windowSeconds))),
    db.insert(keys).values(row).onConflictDoNothing().returning({ key: keys.key }),
    db
      .select()
      .from(keys)
      .where(and(eq(keys.scope, row.scope), eq(keys.key, row.key))),
  ]);
  return { claimed: inserted.length > 0, row: found[0] };
}

/** Stores the outcome of the request holding the key (a response to replay, or a failure to report). */
export async function completeKey(
  db: Db,
  scope: string,
  key: string,
  outcome: Pick<KeyRow, "bodyHash" | "status" | "responseType" | "responseBody">,
): Promise<void> {
  await db
    .update(keys)
    .set(outcome)
    .where(and(eq(keys.scope, scope), eq(keys.key, key)));
}

/** Frees a key whose request wrote nothing (a 4xx), so that a retry runs again. */
export async function releaseKey(db: Db, scope: string, key: string): Promise<void> {
  await db.delete(keys).where(and(eq(keys.scope, scope), eq(keys.key, key)));
}

/** Deletes up to `limit` of the oldest expired rows of any caller (those who never claim again). */
export async function sweepExpiredKeys(db: Db, before: number, limit: number): Promise<void> {
  await runOne(
    db,
    sql`DELETE FROM idempotency_keys WHERE (scope, key) IN
      (SELECT scope, key FROM idempotency_keys WHERE created_at < ${before} ORDER BY created_at LIMIT ${limit})`,
  );
}
