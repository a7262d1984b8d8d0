import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { codePointLength } from "../../text";
import { timingSafeEqual } from "../../auth/crypto";
import { hasScope } from "../../auth/scopes";
import { LIMITS, MORE_LIMITS } from "../../config";
import { sql, type SQL } from "drizzle-orm";
import { reserveRendered, type Reservation } from "../../events/outbox";
import { publish, type DomainEvent } from "../../events/publish";
import { signUrls } from "../../services/file-urls";
import { assertCleanInput } from "../../http/clean-text";
import { ApiError, describeIssues } from "../../http/errors";
import { idString } from "../../http/route";
import { now } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { KINDS, type Kind } from "../../services/media";
import { readBody } from "../../services/uploads";
import { getFileRow, writeState, type FileRow } from "../../stores/files";
import type { UserView } from "../../stores/users";
import { eventContext, type ViewContext } from "../../views/context";
import { renderFile } from "../../views/file";
import { userParams } from "../../http/params";

// What the file routers share (files.ts and create.ts: the files themselves; content.ts: their content):
// input rules, access checks, content storage helpers, query parameters and schemas.

export type C = Context<AppEnv>;

export const QUOTA = MORE_LIMITS.storageQuotaBytes;
/** Largest JSON body a placeholder or PATCH may have. */
export const JSON_BODY_LIMIT = 64 * 1024;

// ---- input rules ------------------------------------------------------------------------------

export const FileType = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { message: "must be a reversed domain name such as 'com.example.photo'" });
export const FileName = z.string().refine((s) => codePointLength(s) <= MORE_LIMITS.fileNameMaxLength, {
  message: `must be at most ${MORE_LIMITS.fileNameMaxLength} characters`,
});
export const Raw = z
  .record(z.string().min(1).max(255), z.array(z.record(z.string(), z.unknown())))
  .refine((r) => new TextEncoder().encode(JSON.stringify(r)).length <= LIMITS.raw.max_length, {
    message: `must serialize to at most ${LIMITS.raw.max_length} bytes`,
  });

export const CreateFields = z
  .object({
    type: FileType,
    kind: z.enum(KINDS).optional(),
    name: FileName.optional(),
    mime_type: z.string().max(255).optional(),
    is_public: z.boolean().optional(),
    raw: Raw.optional(),
  })
  .strict();

export const PatchBody = z
  .object({ name: FileName.optional(), is_public: z.boolean().optional(), raw: Raw.nullable().optional() })
  .strict()
  .openapi("FilePatch");

/** Derived file keys: free, but `core_*` keys are reserved for the kinds they are specified for. */
export const DerivedKey = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { message: "must be 1 to 64 letters, digits, '_', '.' or '-'" });

/**
 * The reserved derived keys a client may upload, with the reference's rules: an image of the
 * file's own mime type (when the file has one yet), `core_image_200s` exactly 200×200 px and
 * `core_image_960r` within 640×960 px. Any other `core_*` key is refused (`core_image_960l`, this
 * server's own key before the reference's was adopted, too; rows stored under it stay readable).
 */
export const CORE_DERIVED: Record<string, { describe: string; check: (img: { width: number; height: number }) => boolean }> = {
  core_image_200s: { describe: "an image of exactly 200x200 px", check: (i) => i.width === 200 && i.height === 200 },
  core_image_960r: { describe: "an image within 640x960 px (at most 640 wide and 960 high)", check: (i) => i.width <= 640 && i.height <= 960 },
};

export function parseWith<T>(schema: z.ZodType<T>, input: unknown): T {
  const r = schema.safeParse(input);
  if (!r.success) throw ApiError.badRequest(describeIssues(r.error.issues));
  assertCleanInput(r.data);
  return r.data;
}

export function boolField(v: string | undefined, name: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (/^(1|true)$/i.test(v)) return true;
  if (/^(0|false)$/i.test(v)) return false;
  throw ApiError.badRequest(`'${name}' must be 0, 1, true or false`);
}

export function jsonField(v: string | undefined, name: string): unknown {
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v);
  } catch {
    throw ApiError.badRequest(`'${name}' must be JSON`);
  }
}

export async function readJson(c: C): Promise<unknown> {
  const text = new TextDecoder().decode(await readBody(c.req.raw, JSON_BODY_LIMIT));
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw ApiError.badRequest("malformed JSON in request body");
  }
}

export const isJson = (c: C) => /^application\/json\b/i.test(c.req.header("content-type") ?? "");
export const isMultipart = (c: C) => /^multipart\/form-data\b/i.test(c.req.header("content-type") ?? "");

// ---- access -----------------------------------------------------------------------------------

export const tokenMatches = (given: string | undefined, actual: string) => !!given && timingSafeEqual(given, actual);

/** Whether the caller's user token has a Files scope covering files of this type. */
export const scopeCovers = (c: C, type: string) => c.var.auth?.kind === "user" && hasScope(c.var.auth.scopes, "files", type);
export const isOwner = (c: C, row: FileRow) => c.var.auth?.user?.id === row.file.userId;

export function requireTypeScope(c: C, type: string) {
  if (!scopeCovers(c, type)) throw ApiError.forbidden(`the token's files scope does not cover files of type '${type}'`);
}

/** Types a token's `files:<type>` scopes allow, or undefined when a plain `files` allows all. */
export function scopeTypes(c: C): string[] | undefined {
  const scopes = c.var.auth?.scopes ?? [];
  if (scopes.includes("files")) return undefined;
  return scopes.filter((s) => s.startsWith("files:")).map((s) => s.slice("files:".length));
}

/** The owner's token with a Files scope covering the file: what PATCH and DELETE need. */
export function requireOwner(c: C, row: FileRow) {
  requireTypeScope(c, row.file.type);
  if (!isOwner(c, row)) throw ApiError.forbidden("only the file's owner can change or delete it");
}

/**
 * Content uploads: the file's `file_token` in the query string (no other credential needed,
 * so an upload URL can be handed to another client), or the owner's user token with a Files
 * scope covering the file's type.
 */
export function requireUploadAccess(c: C, row: FileRow) {
  if (tokenMatches(c.req.query("file_token"), row.file.fileToken)) return;
  if (c.req.query("file_token") !== undefined) throw ApiError.forbidden("wrong 'file_token'");
  if (!c.var.auth) throw ApiError.unauthorized("uploading needs the file's 'file_token' or the owner's token with the files scope");
  requireOwner(c, row);
}

export async function loadFile(c: C, id: string): Promise<FileRow> {
  const row = await getFileRow(c.var.db, Number(id), c.var.auth?.user?.id ?? null);
  if (!row) throw ApiError.notFound("no such file");
  return row;
}

// ---- helpers ----------------------------------------------------------------------------------

export const eventView = (c: C): ViewContext => eventContext(c);

/** The outbox reservation of a `file` event (src/events/outbox.ts); the relay renders it from this (src/events/outbox-render.ts). */
export const fileReservation = (c: C, ownerId: number, fileId?: number, isDeleted = false): Reservation => ({
  type: "file",
  ref: {
    ...(fileId !== undefined ? { id: fileId } : {}),
    origin: eventView(c).origin,
    ...(isDeleted ? { isDeleted } : {}),
    route: { ...(c.var.auth?.user ? { actorId: c.var.auth.user.id } : {}), userIds: [ownerId] },
  },
  at: now(c),
});

/** The `file` event of a file's state (rendered for no viewer). */
export const fileEvent = (c: C, row: FileRow, isDeleted = false): DomainEvent => ({
  type: "file",
  data: renderFile(row, eventView(c), { isDeleted }),
  isDeleted: isDeleted || undefined,
  route: { actorId: c.var.auth?.user?.id, userIds: [row.file.userId] },
});

/**
 * The outbox row of a file's deletion for the deleting batch, rendered before it (the row read
 * before the delete is what the event shows), written if the file is deleted when it commits.
 */
export const fileDeletionSql = (c: C, row: FileRow): SQL =>
  reserveRendered({ ...fileEvent(c, row, true), timestamp: now(c) }, sql`EXISTS (SELECT 1 FROM files WHERE id = ${row.file.id} AND is_deleted = 1)`);

export function publishFile(c: C, row: FileRow, isDeleted = false, seq?: number) {
  publish(c, { ...fileEvent(c, row, isDeleted), seq });
}

/** Publishes a file read after the request (its derived images made): signs its URLs first. */
export const publishSigned = (c: C) => async (row: FileRow) => {
  await signUrls(c, [row]);
  publishFile(c, row);
};

/** The caller as an embedded user of their own new file. */
export const selfView = (c: C): UserView => ({
  ...c.var.auth!.user!,
  badgeName: c.var.auth!.user!.badgeName ?? null,
  presence: c.var.auth!.user!.presence ?? null,
  followsYou: false,
  youFollow: false,
  youMuted: false,
  youBlocked: false,
  blocksYou: false,
});

/** Removes stored content when the database write did not happen (its URLs are signed, never stored). */
export async function discardContent(c: C, storageKey: string) {
  await c.var.files.delete(storageKey).catch(() => {});
}

/** 413 for content over the size limit of its kind. */
export function checkSize(size: number, kind: Kind) {
  const { max_size_bytes, audio_max_size_bytes } = LIMITS.file;
  if (size > max_size_bytes) throw new ApiError(413, `'content' is larger than ${max_size_bytes} bytes`);
  if (kind === "audio" && size > audio_max_size_bytes) throw new ApiError(413, `audio 'content' is larger than ${audio_max_size_bytes} bytes`);
}

export function checkQuota(storageUsed: number, delta: number) {
  if (delta > 0 && storageUsed + delta > QUOTA) {
    throw new ApiError(507, `the upload needs ${delta} bytes but only ${Math.max(0, QUOTA - storageUsed)} of the storage quota are left`);
  }
}

/** The mime type an upload request gives: a non-generic Content-Type of the content. */
export function givenContentType(v: string | undefined): string | undefined {
  const t = v?.trim();
  if (!t || /^application\/octet-stream\b/i.test(t)) return undefined;
  return t;
}

/** Why a conditional write did not happen: the answer to give. */
export async function refusal(c: C, row: FileRow, delta: number): Promise<ApiError> {
  const state = await writeState(c.var.db, row.file.id, row.file.userId);
  if (!state || state.isDeleted) return ApiError.notFound("the file was deleted");
  if (delta > 0 && state.storageUsed + delta > QUOTA) return new ApiError(507, "the storage quota is exceeded");
  return ApiError.badRequest("the file changed during the upload; retry");
}

// ---- query parameters -------------------------------------------------------------------------

export const Flag = (name: string, description: string) =>
  z
    .enum(["0", "1"], { message: `'${name}' must be 0 or 1` })
    .optional()
    .openapi({ param: { name, in: "query" }, description });

export const rawQuery = {
  ...userParams,
  include_raw: Flag("include_raw", "`1`: include `raw` on the files."),
  include_file_raw: Flag("include_file_raw", "`1`: include `raw` on the files (the same as `include_raw` here)."),
};
export const wantsRaw = (q: { include_raw?: string; include_file_raw?: string }) => q.include_raw === "1" || q.include_file_raw === "1";

export const fileParams = z.object({ file_id: idString("file id").openapi({ param: { name: "file_id", in: "path" } }) });

/** Comma-separated ids (400 naming the field otherwise), at most `max`. */
export function parseIds(v: string, max: number, field = "ids"): number[] {
  const parts = v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!parts.length) throw ApiError.badRequest(`'${field}' must list at least one file id`);
  if (parts.length > max) throw ApiError.badRequest(`'${field}' may list at most ${max} ids`);
  const ids = parts.map((p) => {
    if (!/^\d{1,18}$/.test(p)) throw ApiError.badRequest(`'${field}' must be comma-separated integer ids ('${p}' is not)`);
    return Number(p);
  });
  return [...new Set(ids)];
}

export const csv = (v: string | undefined) =>
  v
    ? v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

// ---- schemas for the OpenAPI document ---------------------------------------------------------

export const FileSchema = z
  .object({ id: z.string(), kind: z.enum(KINDS), type: z.string(), name: z.string() })
  .passthrough()
  .openapi("File");
export const OperationSchema = z
  .object({ id: z.string(), type: z.string(), status: z.enum(["running", "dead", "completed"]), created_at: z.string(), ended_at: z.string().optional() })
  .openapi("Operation");
export const NoContent = { description: "Content stored (no body)" };
