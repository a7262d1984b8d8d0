import { and, eq } from "drizzle-orm";
import { sha256Hex } from "../auth/crypto";
import { schema, type Db } from "../db";
import { first } from "../db/batch";

const { operations } = schema;

export type OperationRecord = typeof operations.$inferSelect;
export type OperationStatus = OperationRecord["status"];

/**
 * The `file_create` operation of a placeholder has an id derived from the file's secret
 * `file_token`, so it is written in the same batch as the file (whose id is not known yet),
 * and the upload that completes it or the delete that ends it finds it by primary key.
 * Formatted as a UUID (version 8, RFC 9562).
 */
export async function fileCreateOpId(fileToken: string): Promise<string> {
  const h = (await sha256Hex(`file_create:${fileToken}`)).slice(0, 32).split("");
  h[12] = "8";
  h[16] = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  const s = h.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

export const newOperation = (
  db: Db,
  op: {
    id: string;
    type: OperationRecord["type"];
    status?: OperationStatus;
    userId: number | null;
    detail?: unknown;
    createdAt: number;
    endedAt?: number | null;
  },
) =>
  db
    .insert(operations)
    .values({ status: "running", ...op })
    .returning();

export async function getOperation(db: Db, id: string): Promise<OperationRecord | undefined> {
  return db.select().from(operations).where(eq(operations.id, id)).then(first);
}

/** Ends a running operation (a query for a batch): `completed` or `dead`, with its detail. */
export const endOperation = (db: Db, id: string, status: "completed" | "dead", endedAt: number, detail?: unknown) =>
  db
    .update(operations)
    .set({ status, endedAt, ...(detail !== undefined ? { detail } : {}) })
    .where(and(eq(operations.id, id), eq(operations.status, "running")));

/** Replaces an operation's detail while it runs (progress that survives a failure). */
export const setOperationDetail = (db: Db, id: string, detail: unknown) => db.update(operations).set({ detail }).where(eq(operations.id, id));
