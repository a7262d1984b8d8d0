import type { Db } from "../db";
import { deleteFiles, getFileRowsByIds, type DeletedFiles, type FileRow } from "../stores/files";
import { endOperation, fileCreateOpId, setOperationDetail } from "../stores/operations";

/** What the batch delete works with (injectable, so its failure paths are testable). */
export interface FileDeleteDeps {
  db: Db;
  bucket: Pick<R2Bucket, "delete">;
  /** Unix seconds now (the request's clock plus the time spent since). */
  clock: () => number;
  /** Called with the files that were deleted (to publish their events). */
  onDeleted?: (rows: FileRow[]) => void;
}

export interface FileDeleteJob {
  opId: string;
  userId: number;
  fileIds: number[];
  /** Types the token's `files:<type>` scopes allow; undefined = all. */
  scopeTypes?: string[];
}

/** Outcome per requested id, recorded in the operation's `detail.files`. */
type Outcome = "deleted" | "not_found" | "not_deleted" | "deleted_content_not_removed";

const R2_DELETE_CHUNK = 1000;

/**
 * The `file_delete` operation behind DELETE /files?ids= (run after the 202 reply). Steps:
 * 1. one database batch marks the caller's files deleted (with their derived files and the
 *    owner's storage) and records the per-id outcome in the operation;
 * 2. the content objects are removed from R2;
 * 3. the operation ends `completed`.
 * A failure in step 1 changes nothing and ends the operation `dead` (every id `not_deleted`);
 * a failure in step 2 ends it `dead` listing the objects left (`content_not_removed`): no file
 * is ever half deleted and nothing is lost silently.
 */
export async function runFileDelete(deps: FileDeleteDeps, job: FileDeleteJob): Promise<void> {
  const { db } = deps;
  const outcome: Record<string, Outcome> = Object.fromEntries(job.fileIds.map((id) => [String(id), "not_found" as Outcome]));
  let deleted: DeletedFiles;
  let rows: FileRow[];
  try {
    const found = (await getFileRowsByIds(db, job.fileIds, null)).filter(
      (r) => r.file.userId === job.userId && (!job.scopeTypes || job.scopeTypes.includes(r.file.type)),
    );
    const targets = await Promise.all(
      found.map(async (r) => ({
        file: r.file,
        derived: r.derived,
        placeholderOpId: r.file.isComplete ? undefined : await fileCreateOpId(r.file.fileToken),
      })),
    );
    for (const t of targets) outcome[String(t.file.id)] = "deleted";
    deleted = await deleteFiles(db, job.userId, targets, deps.clock(), [setOperationDetail(db, job.opId, { files: outcome, step: "content_removal" })]);
    // A file deleted concurrently by another request was not deleted by this batch.
    for (const t of targets) if (!deleted.ids.includes(t.file.id)) outcome[String(t.file.id)] = "not_found";
    rows = found.filter((r) => deleted.ids.includes(r.file.id));
  } catch (e) {
    console.error(JSON.stringify({ msg: "file_delete failed", op: job.opId, error: String(e) }));
    const untouched = Object.fromEntries(job.fileIds.map((id) => [String(id), "not_deleted"]));
    await endOperation(db, job.opId, "dead", deps.clock(), { files: untouched, error: String(e) }).catch(() => {});
    return;
  }
  deps.onDeleted?.(rows);
  try {
    for (let i = 0; i < deleted.storageKeys.length; i += R2_DELETE_CHUNK) {
      await deps.bucket.delete(deleted.storageKeys.slice(i, i + R2_DELETE_CHUNK));
    }
  } catch (e) {
    console.error(JSON.stringify({ msg: "file_delete left content", op: job.opId, keys: deleted.storageKeys, error: String(e) }));
    for (const id of deleted.ids) outcome[String(id)] = "deleted_content_not_removed";
    await endOperation(db, job.opId, "dead", deps.clock(), { files: outcome, content_not_removed: deleted.storageKeys, error: String(e) }).catch(() => {});
    return;
  }
  await endOperation(db, job.opId, "completed", deps.clock(), { files: outcome });
}
