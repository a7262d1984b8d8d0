import { eq } from "drizzle-orm";
import { first } from "../db/batch";
import { schema, type Db } from "../db";

const { fileUrlSecret } = schema;

const ROW = 1;

/**
 * The generated key that signs file URLs (table file_url_secret, one row). The first caller
 * stores `fresh`; concurrent first callers race on the primary key and all read back the one
 * that was stored, so every isolate of a deployment signs with the same key.
 */
export async function readOrCreateUrlSecret(db: Db, fresh: string, at: number): Promise<string> {
  const read = () => db.select({ secret: fileUrlSecret.secret }).from(fileUrlSecret).where(eq(fileUrlSecret.id, ROW)).then(first);
  const found = await read();
  if (found) return found.secret;
  await db.insert(fileUrlSecret).values({ id: ROW, secret: fresh, createdAt: at }).onConflictDoNothing();
  const stored = await read();
  if (!stored) throw new Error("file_url_secret: the signing key was neither found nor stored");
  return stored.secret;
}
