import { and, eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Page } from "../http/pagination";
import type { AppRecord } from "./apps";
import { first, runBatch, type Statement } from "../db/batch";
import { reservationsSql, reservedSeq, type Reservation } from "../events/outbox";
import { schema, type Db } from "../db";
import { endOperation } from "./operations";
import { pageLimit, pageOrder, pageWhere } from "./page-sql";
import { userViewColumns, type UserView } from "./users";
import { greatest, inList, joinedText, jsonArrayAgg, jsonObject, jsonValue, position } from "../db/dialect";
import { canReadSql } from "./channel-sql";
import type { FileUrls } from "../services/file-urls";

const { files, derivedFiles, users, apps } = schema;

/** Unused columns (kept for Workers deployed before signed URLs; schema/tables.ts). */
type UnusedUrlColumns = "urlToken" | "urlExpiresAt";
export type FileRecord = Omit<typeof files.$inferSelect, UnusedUrlColumns>;
export type NewFile = typeof files.$inferInsert;
export type DerivedRecord = Omit<typeof derivedFiles.$inferSelect, UnusedUrlColumns>;

/** A file as the views render it: the row, its creator (as the viewer sees them), its client, its derived files. */
export interface FileRow {
  file: FileRecord;
  user: UserView;
  app: AppRecord;
  derived: DerivedRecord[];
  /** Sampled ids of the objects whose raw embeds the file (File `attached_to`); absent on a file just written. */
  attachedTo?: { posts: string[]; polls: string[]; messages: string[] };
  /** Signed URLs to render, once `signUrls` has run (services/file-urls.ts). */
  urls?: FileUrls;
}

const derivedJson = sql<string>`(select ${jsonArrayAgg(
  sql`${jsonObject(
    sql`'fileId', d.file_id, 'key', d.key, 'name', d.name, 'mimeType', d.mime_type, 'size', d.size, 'sha256', d.sha256`,
    sql`'storageKey', d.storage_key, 'imageInfo', ${jsonValue(sql`d.image_info`)}, 'createdAt', d.created_at`,
  )}`,
)} from derived_files d where d.file_id = ${files.id})`;

/**
 * Files by id (not deleted) with their derived files, without user or client: what a raw
 * replacement value needs (its token check and the oEmbed), as a query to batch with others.
 */
export const fileSourcesQuery = (db: Db, ids: number[]) =>
  db
    .select({ file: files, derived: derivedJson })
    .from(files)
    .where(and(inJson(files.id, ids), eq(files.isDeleted, false)));

/** Rows of `fileSourcesQuery`, the derived files parsed. */
export const toFileSources = (rows: { file: FileRecord; derived: string | null }[]): Pick<FileRow, "file" | "derived">[] =>
  rows.map((r) => ({ file: r.file, derived: JSON.parse(r.derived ?? "[]") as DerivedRecord[] }));

/** At most this many ids of each kind in a file's `attached_to` (the reference's "sampled list"): the newest. */
export const ATTACHED_SAMPLE = 20;

/**
 * The live posts, polls and messages (of channels the viewer may read) whose raw names the file,
 * from the `file` facets their writes record (a raw replacement value leaves `file_id` in the
 * stored item): comma-separated ids, newest first, or null. Each walks the facet primary key.
 */
function attachedIds(viewerId: number | null) {
  const fileId = sql`CAST(${files.id} AS TEXT)`;
  const ids = (select: SQL) => sql<string | null>`(select ${joinedText(sql`s.id`)} from (${select} limit ${sql.raw(String(ATTACHED_SAMPLE))}) s)`;
  return {
    attachedPosts: ids(sql`select af.post_id as id from post_facets af join posts ap on ap.id = af.post_id
      where af.facet = 'file' and af.value = ${fileId} and ap.is_deleted = 0 order by af.post_id desc`),
    attachedPolls: ids(sql`select af.poll_id as id from poll_facets af join polls ap on ap.id = af.poll_id
      where af.facet = 'file' and af.value = ${fileId} and ap.is_deleted = 0 order by af.poll_id desc`),
    attachedMessages: ids(sql`select af.message_id as id from message_facets af join messages am on am.id = af.message_id
      join channels ach on ach.id = am.channel_id
      where af.facet = 'file' and af.value = ${fileId} and am.is_deleted = 0 and ${canReadSql("ach", viewerId)} order by af.message_id desc`),
  };
}

/** One query: files with their user (relationship flags for the viewer), client, derived files and what they are attached to. */
function selectFileRows(db: Db, viewerId: number | null) {
  return db
    .select({ file: files, user: userViewColumns(viewerId), app: apps, derived: derivedJson, ...attachedIds(viewerId) })
    .from(files)
    .innerJoin(users, eq(users.id, files.userId))
    .innerJoin(apps, eq(apps.id, files.appId));
}

type SelectedRow = { file: FileRecord; user: unknown; app: AppRecord; derived: string | null } & Record<
  "attachedPosts" | "attachedPolls" | "attachedMessages",
  string | null
>;
const idList = (joined: string | null) => (joined ? joined.split(",").sort((a, b) => Number(b) - Number(a)) : []);
const toFileRow = (r: SelectedRow): FileRow => ({
  file: r.file,
  user: r.user as UserView,
  app: r.app,
  derived: (JSON.parse(r.derived ?? "[]") as DerivedRecord[]).sort((a, b) => (a.key < b.key ? -1 : 1)),
  attachedTo: { posts: idList(r.attachedPosts), polls: idList(r.attachedPolls), messages: idList(r.attachedMessages) },
});

export async function getFileRow(db: Db, id: number, viewerId: number | null): Promise<FileRow | undefined> {
  const row = await selectFileRows(db, viewerId)
    .where(and(eq(files.id, id), eq(files.isDeleted, false)))
    .then(first);
  return row ? toFileRow(row) : undefined;
}

/** Files by id (not deleted), in the order the ids were given. */
export async function getFileRowsByIds(db: Db, ids: number[], viewerId: number | null): Promise<FileRow[]> {
  if (!ids.length) return [];
  const rows = await selectFileRows(db, viewerId).where(and(inJson(files.id, ids), eq(files.isDeleted, false)));
  const byId = new Map(rows.map((r) => [r.file.id, toFileRow(r)]));
  return ids.map((id) => byId.get(id)).filter((r): r is FileRow => !!r);
}

/**
 * Which of `ids` are live files of `userId` (of `types` when the token's scope narrows them), in
 * the order asked: what a batch delete confirms before it runs.
 */
export async function ownLiveFileIds(db: Db, userId: number, ids: number[], types: string[] | null): Promise<number[]> {
  if (!ids.length) return [];
  const rows = await db
    .select({ id: files.id })
    .from(files)
    .where(
      and(inJson(files.id, ids), eq(files.userId, userId), eq(files.isDeleted, false), types ? inJson(files.type, types.length ? types : [""]) : undefined),
    );
  const found = new Set(rows.map((r) => r.id));
  return ids.filter((id) => found.has(id));
}

/**
 * `col in (list)` with the list bound as one JSON parameter: D1 allows at most 100 bound
 * parameters per query, and id lists here go up to 200 and beyond.
 */
const inJson = (col: SQLiteColumn | SQL, values: (string | number)[]) => sql`${col} in ${inList(values, typeof values[0] === "number" ? "int" : "text")}`;

/** Filters of the user's file stream (general file parameters). */
export interface FileFilters {
  includeIncomplete: boolean;
  includePrivate: boolean;
  mimeTypes?: string[];
  fileTypes?: string[];
  excludeFileTypes?: string[];
  /** Types the token's `files:<type>` scopes allow; undefined = all. */
  scopeTypes?: string[];
}

export async function listUserFileRows(db: Db, userId: number, f: FileFilters, page: Page, viewerId: number | null): Promise<FileRow[]> {
  const conds: (SQL | undefined)[] = [eq(files.userId, userId), eq(files.isDeleted, false), pageWhere(files.id, page)];
  if (!f.includeIncomplete) conds.push(eq(files.isComplete, true));
  if (!f.includePrivate) conds.push(eq(files.isPublic, true));
  if (f.mimeTypes?.length) {
    // the recorded type without parameters (a text file's `; charset=...`)
    const semicolon = position(sql`${files.mimeType}`, sql`';'`);
    const base = sql`(case when ${semicolon} > 0 then substr(${files.mimeType}, 1, ${semicolon} - 1) else ${files.mimeType} end)`;
    conds.push(inJson(base, f.mimeTypes));
  }
  if (f.fileTypes?.length) conds.push(inJson(files.type, f.fileTypes));
  else if (f.excludeFileTypes?.length) conds.push(sql`not ${inJson(files.type, f.excludeFileTypes)}`);
  if (f.scopeTypes) conds.push(inJson(files.type, f.scopeTypes));
  const rows = await selectFileRows(db, viewerId)
    .where(and(...conds))
    .orderBy(pageOrder(files.id, page))
    .limit(pageLimit(page));
  return rows.map(toFileRow);
}

// ---- writes --------------------------------------------------------------------------------

type BatchItem = Statement;

/** Maps a raw D1 row (snake_case columns) to the drizzle record of a table. */
function fromRaw<T>(table: SQLiteTable, raw: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [key, col] of Object.entries(getTableColumns(table))) {
    const v = raw[col.name];
    out[key] = v === null || v === undefined ? null : col.mapFromDriverValue(v);
  }
  return out as T;
}

/** `insert into t (cols) select values where <cond>` (plus an optional tail such as ON CONFLICT). */
function insertWhere(table: SQLiteTable, values: Record<string, unknown>, where: SQL, tail: SQL = sql``): SQL {
  const cols = getTableColumns(table);
  const names: SQL[] = [];
  const vals: SQL[] = [];
  for (const [key, v] of Object.entries(values)) {
    if (v === undefined) continue;
    names.push(sql`${sql.identifier(cols[key].name)}`);
    vals.push(v === null ? sql`null` : sql`${cols[key].mapToDriverValue(v)}`);
  }
  return sql`insert into ${table} (${sql.join(names, sql`, `)}) select ${sql.join(vals, sql`, `)} where ${where}${tail}`;
}

/** The owner's storage plus `delta` stays within the quota. */
const fitsQuota = (userId: number, delta: number, quota: number) => sql`(select storage_used from users where id = ${userId}) + ${delta} <= ${quota}`;

/**
 * Creates a file (complete or placeholder) and adds its size to the owner's storage in one
 * batch; nothing is written when the quota would be exceeded (returns undefined).
 */
export async function insertFile(
  db: Db,
  values: NewFile,
  quota: number,
  extra: BatchItem[] = [],
  event?: Reservation,
): Promise<(FileRecord & { seq?: number }) | undefined> {
  const size = values.size ?? 0;
  const key = values.storageKey ?? null;
  // The new file is the owner's newest, with this (random) file token: its id, if the quota let it in.
  const newId = sql`(SELECT max(id) FROM files WHERE user_id = ${values.userId})`;
  const insertedHere = sql`EXISTS (SELECT 1 FROM files WHERE id = ${newId} AND file_token = ${values.fileToken})`;
  const results = await runBatch(db, [
    sql`${insertWhere(files, values as Record<string, unknown>, fitsQuota(values.userId, size, quota))} returning *`,
    db
      .update(users)
      .set({ storageUsed: sql`${users.storageUsed} + ${size}` })
      .where(and(eq(users.id, values.userId), sql`${size} > 0`, sql`exists(select 1 from files where storage_key = ${key})`)),
    ...extra,
    ...(event ? reservationsSql([{ ...event, objectId: newId, when: insertedHere }]) : []),
  ]);
  const raw = results[0].results[0] as Record<string, unknown> | undefined;
  const seq = event ? reservedSeq(results[results.length - 1]) : undefined;
  return raw ? { ...fromRaw<FileRecord>(files, raw), ...(seq !== undefined ? { seq } : {}) } : undefined;
}

export interface UploadedContent {
  mimeType: string;
  size: number;
  sha256: string;
  storageKey: string;
  mediaInfo: unknown;
  /** Set when the server is to make reserved derived images of the content. */
  derivedPendingSince?: number | null;
}

/**
 * Completes a placeholder with its content: the file row, the owner's storage and the
 * placeholder's `file_create` operation change together, only if the file is still an
 * incomplete placeholder and the content fits the quota. Returns whether it happened.
 */
export async function completeFile(db: Db, file: FileRecord, c: UploadedContent, quota: number, opId: string, at: number): Promise<boolean> {
  const stored = sql`exists(select 1 from files where id = ${file.id} and storage_key = ${c.storageKey})`;
  const [updated] = await runBatch(db, [
    db
      .update(files)
      .set({ ...c, isComplete: true })
      .where(and(eq(files.id, file.id), eq(files.isComplete, false), eq(files.isDeleted, false), fitsQuota(file.userId, c.size, quota))),
    db
      .update(users)
      .set({ storageUsed: sql`${users.storageUsed} + ${c.size}` })
      .where(and(eq(users.id, file.userId), stored)),
    db
      .update(schema.operations)
      .set({ status: "completed", endedAt: at })
      .where(and(eq(schema.operations.id, opId), eq(schema.operations.status, "running"), stored)),
  ]);
  return updated.changes > 0;
}

/**
 * Adds or replaces a derived file. `previous` is the row being replaced (read with the file):
 * the write only happens if it is still the current one, the file is not deleted, the file
 * keeps at most `maxDerived` derived files and the size difference fits the quota.
 */
export async function upsertDerived(
  db: Db,
  file: FileRecord,
  d: DerivedRecord,
  previous: DerivedRecord | undefined,
  limits: { quota: number; maxDerived: number },
): Promise<boolean> {
  const delta = d.size - (previous?.size ?? 0);
  const current = previous
    ? sql`(select storage_key from derived_files where file_id = ${file.id} and key = ${d.key}) = ${previous.storageKey}`
    : sql`not exists(select 1 from derived_files where file_id = ${file.id} and key = ${d.key})`;
  const cond = sql`${current}
    and exists(select 1 from files where id = ${file.id} and is_deleted = 0)
    and (select count(*) from derived_files where file_id = ${file.id} and key != ${d.key}) < ${limits.maxDerived}
    and ${fitsQuota(file.userId, delta, limits.quota)}`;
  const upsert = insertWhere(
    derivedFiles,
    d as unknown as Record<string, unknown>,
    cond,
    sql` on conflict (file_id, key) do update set name = excluded.name, mime_type = excluded.mime_type, size = excluded.size,
      sha256 = excluded.sha256, storage_key = excluded.storage_key, image_info = excluded.image_info, created_at = excluded.created_at`,
  );
  const [written] = await runBatch(db, [
    upsert,
    db
      .update(users)
      .set({ storageUsed: sql`${users.storageUsed} + ${delta}` })
      .where(and(eq(users.id, file.userId), sql`exists(select 1 from derived_files where file_id = ${file.id} and storage_key = ${d.storageKey})`)),
  ]);
  return written.changes > 0;
}

/** Changes a live file's name, visibility or raw, with its `file` event reserved in the same batch; undefined when it is gone. */
export async function updateFile(
  db: Db,
  id: number,
  set: Partial<Pick<FileRecord, "name" | "isPublic" | "raw">>,
  event: Reservation,
): Promise<{ file: FileRecord; seq?: number } | undefined> {
  const results = await runBatch(db, [
    db
      .update(files)
      .set(set)
      .where(and(eq(files.id, id), eq(files.isDeleted, false)))
      .returning(),
    ...reservationsSql([{ ...event, when: sql`EXISTS (SELECT 1 FROM files WHERE id = ${id} AND is_deleted = 0)` }]),
  ]);
  const raw = results[0].results[0] as Record<string, unknown> | undefined;
  return raw ? { file: fromRaw<FileRecord>(files, raw), seq: reservedSeq(results[1]) } : undefined;
}

export interface DeletedFiles {
  /** Ids this call deleted (not already deleted, owned by the user). */
  ids: number[];
  /** R2 objects to remove now that no row refers to them. */
  storageKeys: string[];
  /** The sequences of the `events` statements (undefined: not written). */
  eventSeqs?: (number | undefined)[];
}

/**
 * Deletes a user's files in one batch: marks them deleted, removes their derived files,
 * subtracts their bytes from the owner's storage and ends the `file_create` operation of
 * placeholders (`dead`). Content objects are removed by the caller after this succeeds, so
 * no row ever points at missing content. `extra` joins further writes to the same batch.
 */
export async function deleteFiles(
  db: Db,
  userId: number,
  targets: { file: FileRecord; derived: DerivedRecord[]; placeholderOpId?: string }[],
  at: number,
  extra: BatchItem[] = [],
  events: SQL[] = [],
): Promise<DeletedFiles> {
  if (!targets.length) {
    if (extra.length) await runBatch(db, extra);
    return { ids: [], storageKeys: [] };
  }
  const ids = targets.map((t) => t.file.id);
  const live = sql`id in ${inList(ids)} and user_id = ${userId} and is_deleted = 0`;
  const results = await runBatch(db, [
    sql`update users set storage_used = ${greatest(
      sql`0`,
      sql`storage_used - (select coalesce(sum(size), 0) from files where ${live})
        - (select coalesce(sum(size), 0) from derived_files where file_id in (select id from files where ${live}))`,
    )} where id = ${userId}`,
    sql`delete from derived_files where file_id in (select id from files where ${live})`,
    sql`update files set is_deleted = 1 where ${live} returning id`,
    ...targets
      .filter((t) => t.placeholderOpId)
      .map((t) => endOperation(db, t.placeholderOpId!, "dead", at, { file_id: String(t.file.id), reason: "deleted before upload" })),
    ...extra,
    // Outbox rows last (on Postgres they take the outbox lock, held to commit).
    ...events,
  ]);
  const deleted = new Set(results[2].results.map((r) => Number(r.id)));
  const gone = targets.filter((t) => deleted.has(t.file.id));
  return {
    eventSeqs: results.slice(results.length - events.length).map(reservedSeq),
    ids: gone.map((t) => t.file.id),
    storageKeys: gone.flatMap((t) => [t.file.storageKey, ...t.derived.map((d) => d.storageKey)]).filter((k): k is string => !!k),
  };
}

/** What a content URL serves: the content's object and how to label it. */
export interface ContentTarget {
  storageKey: string;
  mimeType: string | null;
  name: string;
  sha256: string | null;
  size: number;
}

/**
 * The current content of a complete, not deleted file (`key` null) or of one of its derived
 * files (deleting a file deletes those rows): what the content route checks a URL against.
 */
export async function getContentTarget(db: Db, fileId: number, key: string | null): Promise<ContentTarget | undefined> {
  if (key !== null) {
    const d = derivedFiles;
    return db
      .select({ storageKey: d.storageKey, mimeType: d.mimeType, name: d.name, sha256: d.sha256, size: d.size })
      .from(d)
      .where(and(eq(d.fileId, fileId), eq(d.key, key)))
      .then(first);
  }
  const row = await db
    .select({ storageKey: files.storageKey, mimeType: files.mimeType, name: files.name, sha256: files.sha256, size: files.size })
    .from(files)
    .where(and(eq(files.id, fileId), eq(files.isDeleted, false), eq(files.isComplete, true)))
    .then(first);
  return row?.storageKey ? { ...row, storageKey: row.storageKey } : undefined;
}

/** The storage in use and the derived file count, to tell why a conditional write did not happen. */
export async function writeState(db: Db, fileId: number, userId: number) {
  return db
    .select({
      storageUsed: users.storageUsed,
      derivedCount: sql<number>`(select count(*) from derived_files where file_id = ${fileId})`,
      isComplete: sql<number>`(select is_complete from files where id = ${fileId})`,
      isDeleted: sql<number>`(select is_deleted from files where id = ${fileId})`,
    })
    .from(users)
    .where(eq(users.id, userId))
    .then(first);
}

/** Marks (or, with null, unmarks) a file's reserved derived images as being made (services/image-derivatives.ts). */
export async function setDerivedPending(db: Db, fileId: number, since: number | null): Promise<void> {
  await db.update(files).set({ derivedPendingSince: since }).where(eq(files.id, fileId));
}
