import { and, eq, gt } from "drizzle-orm";
import { schema, type Db } from "../db";

const { oauthCodes } = schema;

export async function saveCode(db: Db, code: typeof oauthCodes.$inferInsert): Promise<void> {
  await db.insert(oauthCodes).values(code);
}

/** Takes a code once: deleting and returning in one statement, so it cannot be used twice. */
export async function consumeCode(db: Db, codeHash: string, at: number) {
  const [row] = await db
    .delete(oauthCodes)
    .where(and(eq(oauthCodes.codeHash, codeHash), gt(oauthCodes.expiresAt, at)))
    .returning();
  return row;
}
