import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { codePointLength } from "../text";
import { PUBLIC, userToken } from "../auth/access";
import { randomToken, timingSafeEqual } from "../auth/crypto";
import { hasScope } from "../auth/scopes";
import { LIMITS, MORE_LIMITS } from "../config";
import { publish } from "../events/publish";
import { addMeta, ok } from "../http/envelope";
import { ApiError, describeIssues } from "../http/errors";
import { parsePage, finishPage, pageQuery } from "../http/pagination";
import { createRouter, defineRoute, Envelope, errors, idString } from "../http/route";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import { issueUrl, parseShortCode, renewExpiredUrls, revokeUrls, serveContent, shortCodeMatches, type IssuedUrl } from "../services/file-urls";
import { runFileDelete } from "../services/file-delete";
import { detect, imageInfo, KINDS, kindOfMime, mediaInfo, normalizeMime, resolveType, type Kind } from "../services/media";
import { newStorageKey, parseMultipart, partText, readBody, sha256Of } from "../services/uploads";
import {
  completeFile,
  deleteFiles,
  getFileRow,
  getFileRowsByIds,
  insertFile,
  listUserFileRows,
  updateFileQuery,
  upsertDerived,
  writeState,
  type DerivedRecord,
  type FileRow,
} from "../stores/files";
import { fileCreateOpId, getOperation, newOperation } from "../stores/operations";
import type { UserView } from "../stores/users";
import { viewContext, type ViewContext } from "../views/context";
import { renderFile, type FileViewOptions } from "../views/file";
import { renderOperation } from "../views/operation";

type C = Context<AppEnv>;

const QUOTA = MORE_LIMITS.storageQuotaBytes;
/** Room for the non-file fields of a multipart upload (raw data, names, part headers). */
const MULTIPART_OVERHEAD = 64 * 1024;
/** Largest JSON body a placeholder or PATCH may have. */
const JSON_BODY_LIMIT = 64 * 1024;

// ---- input rules ------------------------------------------------------------------------------

const FileType = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { message: "must be a reversed domain name such as 'com.example.photo'" });
const FileName = z.string().refine((s) => codePointLength(s) <= MORE_LIMITS.fileNameMaxLength, {
  message: `must be at most ${MORE_LIMITS.fileNameMaxLength} characters`,
});
const Raw = z
  .record(z.string().min(1).max(255), z.array(z.record(z.string(), z.unknown())))
  .refine((r) => new TextEncoder().encode(JSON.stringify(r)).length <= LIMITS.raw.max_length, {
    message: `must serialize to at most ${LIMITS.raw.max_length} bytes`,
  });

const CreateFields = z
  .object({
    type: FileType,
    kind: z.enum(KINDS).optional(),
    name: FileName.optional(),
    mime_type: z.string().max(255).optional(),
    is_public: z.boolean().optional(),
    raw: Raw.optional(),
  })
  .strict();

const PatchBody = z
  .object({ name: FileName.optional(), is_public: z.boolean().optional(), raw: Raw.nullable().optional() })
  .strict()
  .openapi("FilePatch");

/** Derived file keys: free, but `core_*` keys are reserved for the kinds they are specified for. */
const DerivedKey = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { message: "must be 1 to 64 letters, digits, '_', '.' or '-'" });

/**
 * The reserved derived keys this server accepts, with their specification. Any other
 * `core_*` key is refused.
 */
export const CORE_DERIVED: Record<string, { describe: string; check: (img: { width: number; height: number }) => boolean }> = {
  core_image_200s: { describe: "an image of at most 200 px on its shortest side", check: (i) => Math.min(i.width, i.height) <= 200 },
  core_image_960l: { describe: "an image of at most 960 px on its longest side", check: (i) => Math.max(i.width, i.height) <= 960 },
};

function parseWith<T>(schema: z.ZodType<T>, input: unknown): T {
  const r = schema.safeParse(input);
  if (!r.success) throw ApiError.badRequest(describeIssues(r.error.issues));
  return r.data;
}

function boolField(v: string | undefined, name: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (/^(1|true)$/i.test(v)) return true;
  if (/^(0|false)$/i.test(v)) return false;
  throw ApiError.badRequest(`'${name}' must be 0, 1, true or false`);
}

function jsonField(v: string | undefined, name: string): unknown {
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v);
  } catch {
    throw ApiError.badRequest(`'${name}' must be JSON`);
  }
}

async function readJson(c: C): Promise<unknown> {
  const text = new TextDecoder().decode(await readBody(c.req.raw, JSON_BODY_LIMIT));
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw ApiError.badRequest("malformed JSON in request body");
  }
}

const isJson = (c: C) => /^application\/json\b/i.test(c.req.header("content-type") ?? "");
const isMultipart = (c: C) => /^multipart\/form-data\b/i.test(c.req.header("content-type") ?? "");

// ---- access -----------------------------------------------------------------------------------

const tokenMatches = (given: string | undefined, actual: string) => !!given && timingSafeEqual(given, actual);

/** Whether the caller's user token has a Files scope covering files of this type. */
const scopeCovers = (c: C, type: string) => c.var.auth?.kind === "user" && hasScope(c.var.auth.scopes, "files", type);
const isOwner = (c: C, row: FileRow) => c.var.auth?.user?.id === row.file.userId;

function requireTypeScope(c: C, type: string) {
  if (!scopeCovers(c, type)) throw ApiError.forbidden(`the token's files scope does not cover files of type '${type}'`);
}

/** Types a token's `files:<type>` scopes allow, or undefined when a plain `files` allows all. */
function scopeTypes(c: C): string[] | undefined {
  const scopes = c.var.auth?.scopes ?? [];
  if (scopes.includes("files")) return undefined;
  return scopes.filter((s) => s.startsWith("files:")).map((s) => s.slice("files:".length));
}

/** The owner's token with a Files scope covering the file: what PATCH and DELETE need. */
function requireOwner(c: C, row: FileRow) {
  requireTypeScope(c, row.file.type);
  if (!isOwner(c, row)) throw ApiError.forbidden("only the file's owner can change or delete it");
}

/**
 * Content uploads: the file's `file_token` in the query string (no other credential needed,
 * so an upload URL can be handed to another client), or the owner's user token with a Files
 * scope covering the file's type.
 */
function requireUploadAccess(c: C, row: FileRow) {
  if (tokenMatches(c.req.query("file_token"), row.file.fileToken)) return;
  if (c.req.query("file_token") !== undefined) throw ApiError.forbidden("wrong 'file_token'");
  if (!c.var.auth) throw ApiError.unauthorized("uploading needs the file's 'file_token' or the owner's token with the files scope");
  requireOwner(c, row);
}

async function loadFile(c: C, id: string): Promise<FileRow> {
  const row = await getFileRow(c.var.db, Number(id), c.var.auth?.user?.id ?? null);
  if (!row) throw ApiError.notFound("no such file");
  return row;
}

// ---- helpers ----------------------------------------------------------------------------------

const eventView = (c: C): ViewContext => ({ ...viewContext(c), viewerId: null });

function publishFile(c: C, row: FileRow, isDeleted = false) {
  publish(c, {
    type: "file",
    data: renderFile(row, eventView(c), { isDeleted }),
    isDeleted: isDeleted || undefined,
    route: { actorId: c.var.auth?.user?.id, userIds: [row.file.userId] },
  });
}

/** The caller as an embedded user of their own new file. */
const selfView = (c: C): UserView => ({
  ...c.var.auth!.user!,
  followsYou: false,
  youFollow: false,
  youMuted: false,
  youBlocked: false,
  blocksYou: false,
});

/** Stores content in R2 and issues its first URL token, together. */
async function storeContent(c: C, userId: number, bytes: Uint8Array, mimeType: string, name: string, sha256: string, at: number) {
  const storageKey = newStorageKey(userId);
  const [, url] = await Promise.all([
    c.env.FILES.put(storageKey, bytes, { httpMetadata: { contentType: mimeType }, sha256 }),
    issueUrl(c.env.KV, { storageKey, mimeType, name, sha256, size: bytes.length }, at),
  ]);
  return { storageKey, url };
}

/** Undoes `storeContent` when the database write did not happen. */
async function discardContent(c: C, storageKey: string, url: IssuedUrl) {
  await Promise.all([c.env.FILES.delete(storageKey).catch(() => {}), revokeUrls(c.env.KV, [url.token])]);
}

/** 413 for content over the size limit of its kind. */
function checkSize(size: number, kind: Kind) {
  const { max_size_bytes, audio_max_size_bytes } = LIMITS.file;
  if (size > max_size_bytes) throw new ApiError(413, `'content' is larger than ${max_size_bytes} bytes`);
  if (kind === "audio" && size > audio_max_size_bytes) throw new ApiError(413, `audio 'content' is larger than ${audio_max_size_bytes} bytes`);
}

function checkQuota(storageUsed: number, delta: number) {
  if (delta > 0 && storageUsed + delta > QUOTA) {
    throw new ApiError(507, `the upload needs ${delta} bytes but only ${Math.max(0, QUOTA - storageUsed)} of the storage quota are left`);
  }
}

/** The mime type an upload request gives: a non-generic Content-Type of the content. */
function givenContentType(v: string | undefined): string | undefined {
  const t = v?.trim();
  if (!t || /^application\/octet-stream\b/i.test(t)) return undefined;
  return t;
}

/** Why a conditional write did not happen: the answer to give. */
async function refusal(c: C, row: FileRow, delta: number): Promise<ApiError> {
  const state = await writeState(c.var.db, row.file.id, row.file.userId);
  if (!state || state.isDeleted) return ApiError.notFound("the file was deleted");
  if (delta > 0 && state.storageUsed + delta > QUOTA) return new ApiError(507, "the storage quota is exceeded");
  return ApiError.badRequest("the file changed during the upload; retry");
}

// ---- query parameters -------------------------------------------------------------------------

const Flag = (name: string) =>
  z
    .enum(["0", "1"], { message: `'${name}' must be 0 or 1` })
    .optional()
    .openapi({ param: { name, in: "query" } });

const rawQuery = { include_raw: Flag("include_raw"), include_file_raw: Flag("include_file_raw") };
const wantsRaw = (q: { include_raw?: string; include_file_raw?: string }) => q.include_raw === "1" || q.include_file_raw === "1";

const fileParams = z.object({ file_id: idString("file id").openapi({ param: { name: "file_id", in: "path" } }) });

/** Comma-separated ids (400 naming the field otherwise), at most `max`. */
function parseIds(v: string, max: number, field = "ids"): number[] {
  const parts = v.split(",").map((s) => s.trim()).filter(Boolean);
  if (!parts.length) throw ApiError.badRequest(`'${field}' must list at least one file id`);
  if (parts.length > max) throw ApiError.badRequest(`'${field}' may list at most ${max} ids`);
  const ids = parts.map((p) => {
    if (!/^\d{1,18}$/.test(p)) throw ApiError.badRequest(`'${field}' must be comma-separated integer ids ('${p}' is not)`);
    return Number(p);
  });
  return [...new Set(ids)];
}

const csv = (v: string | undefined) => (v ? v.split(",").map((s) => s.trim()).filter(Boolean) : undefined);

// ---- schemas for the OpenAPI document ---------------------------------------------------------

const FileSchema = z.object({ id: z.string(), kind: z.enum(KINDS), type: z.string(), name: z.string() }).passthrough().openapi("File");
const OperationSchema = z
  .object({ id: z.string(), type: z.string(), status: z.enum(["running", "dead", "completed"]), created_at: z.string(), ended_at: z.string().optional() })
  .openapi("Operation");
const NoContent = { description: "Content stored (no body)" };

// ---- routes -----------------------------------------------------------------------------------

export const fileRoutes = createRouter()
  .openapi(
    defineRoute(userToken("files"), {
      method: "post",
      path: "/files",
      tags: ["Files"],
      summary: "Create a file: multipart/form-data with `content` (a complete file) or JSON (a placeholder)",
      description:
        "Multipart fields: `content` (the file, required), `type` (required), `kind`, `name`, `mime_type`, `is_public` (0/1), `raw` (JSON). " +
        "JSON: `type` and `kind` required, `name`, `mime_type`, `is_public`, `raw`; the reply carries `upload_parameters` and `meta.status_url` " +
        "of the `file_create` operation, which completes when the content is PUT.",
      responses: { 201: Envelope(FileSchema, "The created File object"), ...errors(400, 401, 403, 413, 415, 507) },
    }),
    async (c) => (isMultipart(c) ? createComplete(c) : isJson(c) ? createPlaceholder(c) : unsupported()),
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "get",
      path: "/files/{file_id}",
      tags: ["Files"],
      summary: "A file. An expired `url` (and those of derived files) is renewed",
      request: {
        params: fileParams,
        query: z.object({ file_token: z.string().optional(), file_token_read: z.string().optional(), ...rawQuery }),
      },
      responses: { 200: Envelope(FileSchema, "File object"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const row = await loadFile(c, c.req.valid("param").file_id);
      requireTypeScope(c, row.file.type);
      const owner = isOwner(c, row);
      const withToken = tokenMatches(q.file_token, row.file.fileToken);
      const withReadToken = tokenMatches(q.file_token_read, row.file.fileTokenRead);
      if (!owner && !row.file.isPublic && !withToken && !withReadToken) {
        throw ApiError.forbidden(
          q.file_token_read === undefined && q.file_token === undefined ? "this private file needs its 'file_token_read'" : "wrong 'file_token_read'",
        );
      }
      await renewExpiredUrls(c, [row]);
      return ok(c, renderFile(row, viewContext(c), { fileToken: owner || withToken, fileTokenRead: withReadToken, raw: wantsRaw(q) }));
    },
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "get",
      path: "/files",
      tags: ["Files"],
      summary: "Files by id (the first 200 found); private files need `file_token_read_{file_id}`",
      request: { query: z.object({ ids: z.string().openapi({ example: "1,2,3" }), ...rawQuery }).passthrough() },
      responses: { 200: Envelope(z.array(FileSchema), "File objects"), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid("query") as { ids: string; include_raw?: string; include_file_raw?: string } & Record<string, string>;
      const ids = parseIds(q.ids, 1000);
      const rows = await getFileRowsByIds(c.var.db, ids, c.var.auth!.user!.id);
      const visible: { row: FileRow; opts: FileViewOptions }[] = [];
      for (const row of rows) {
        if (visible.length >= MORE_LIMITS.filesReturned) break;
        if (!scopeCovers(c, row.file.type)) continue;
        const owner = isOwner(c, row);
        const withReadToken = tokenMatches(q[`file_token_read_${row.file.id}`], row.file.fileTokenRead);
        if (!owner && !row.file.isPublic && !withReadToken) continue;
        visible.push({ row, opts: { fileToken: owner, fileTokenRead: withReadToken, raw: wantsRaw(q) } });
      }
      await renewExpiredUrls(c, visible.map((v) => v.row));
      const view = viewContext(c);
      return ok(c, visible.map((v) => renderFile(v.row, view, v.opts)));
    },
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "get",
      path: "/users/me/files",
      tags: ["Files"],
      summary: "The caller's files (paginated), with the general file parameters",
      request: {
        query: z.object({
          ...pageQuery,
          include_incomplete: Flag("include_incomplete"),
          include_private: Flag("include_private"),
          mime_types: z.string().optional(),
          file_types: z.string().optional(),
          exclude_file_types: z.string().optional(),
          ...rawQuery,
        }),
      },
      responses: { 200: Envelope(z.array(FileSchema), "File objects, newest first"), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const page = parsePage(q);
      const user = c.var.auth!.user!;
      const rows = await listUserFileRows(
        c.var.db,
        user.id,
        {
          includeIncomplete: q.include_incomplete !== "0",
          includePrivate: q.include_private !== "0",
          mimeTypes: csv(q.mime_types)?.map((m) => normalizeMime(m, "mime_types").base),
          fileTypes: csv(q.file_types),
          excludeFileTypes: csv(q.exclude_file_types),
          scopeTypes: scopeTypes(c),
        },
        page,
        user.id,
      );
      const { items, meta } = finishPage(rows, page, (r) => r.file.id);
      await renewExpiredUrls(c, items);
      const view = viewContext(c);
      return ok(
        c,
        items.map((r) => renderFile(r, view, { fileToken: true, raw: wantsRaw(q), paginated: true })),
        meta,
      );
    },
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "patch",
      path: "/files/{file_id}",
      tags: ["Files"],
      summary: "Change a file's `name`, `is_public` or `raw` (owner only)",
      request: { params: fileParams, body: { content: { "application/json": { schema: PatchBody } } } },
      responses: { 200: Envelope(FileSchema, "The updated File object"), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const row = await loadFile(c, c.req.valid("param").file_id);
      requireOwner(c, row);
      const set = { name: body.name, isPublic: body.is_public, raw: body.raw };
      if (Object.values(set).some((v) => v !== undefined)) {
        const [updated] = await updateFileQuery(c.var.db, row.file.id, set);
        if (!updated) throw ApiError.notFound("no such file");
        row.file = updated;
        publishFile(c, row);
      }
      await renewExpiredUrls(c, [row]);
      return ok(c, renderFile(row, viewContext(c), { fileToken: true, raw: body.raw !== undefined }));
    },
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "delete",
      path: "/files/{file_id}",
      tags: ["Files"],
      summary: "Delete a file (owner only); returns it",
      request: { params: fileParams },
      responses: { 200: Envelope(FileSchema, "The deleted File object, with `is_deleted`"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const row = await loadFile(c, c.req.valid("param").file_id);
      requireOwner(c, row);
      const at = now(c);
      const placeholderOpId = row.file.isComplete ? undefined : await fileCreateOpId(row.file.fileToken);
      const deleted = await deleteFiles(c.var.db, row.file.userId, [{ file: row.file, derived: row.derived, placeholderOpId }], at);
      if (!deleted.ids.length) throw ApiError.notFound("no such file");
      // Rows first, content after: a failure here leaves unreferenced objects, recorded as a dead operation.
      await removeContent(c, deleted.storageKeys, deleted.urlTokens, { file_ids: [String(row.file.id)] }, at);
      const body = renderFile(row, viewContext(c), { fileToken: true, isDeleted: true });
      publishFile(c, row, true);
      return ok(c, body);
    },
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "delete",
      path: "/files",
      tags: ["Files"],
      summary: "Delete up to 200 files (owner only): 202 with the `file_delete` operation",
      request: { query: z.object({ ids: z.string().openapi({ example: "1,2,3" }) }) },
      responses: { 202: Envelope(OperationSchema, "The running Operation; `meta.status_url` follows it"), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const ids = parseIds(c.req.valid("query").ids, MORE_LIMITS.filesReturned);
      const user = c.var.auth!.user!;
      const at = now(c);
      const id = crypto.randomUUID();
      const [op] = await newOperation(c.var.db, {
        id,
        type: "file_delete",
        userId: user.id,
        detail: { files: Object.fromEntries(ids.map((i) => [String(i), "pending"])) },
        createdAt: at,
      });
      const startedMs = Date.now();
      const clock = () => at + Math.floor((Date.now() - startedMs) / 1000);
      c.executionCtx.waitUntil(
        runFileDelete(
          { db: c.var.db, bucket: c.env.FILES, kv: c.env.KV, clock, onDeleted: (rows) => rows.forEach((r) => publishFile(c, r, true)) },
          { opId: id, userId: user.id, fileIds: ids, scopeTypes: scopeTypes(c) },
        ),
      );
      addMeta(c, { status_url: `${viewContext(c).origin}/v1/sys/ops/${id}` });
      return ok(c, renderOperation(op), {}, 202);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "put",
      path: "/files/{file_id}/content",
      tags: ["Files"],
      summary: "Upload the content of a placeholder (204). The body is the content; its Content-Type is the mime type",
      description:
        "Needs the file's `file_token` in the query string (as in `upload_parameters.url`), or the owner's token with the files scope. " +
        "A multipart/form-data body with a `content` part (and optional `mime_type`) is accepted too.",
      request: { params: fileParams, query: z.object({ file_token: z.string().optional() }) },
      responses: { 204: NoContent, ...errors(400, 401, 403, 404, 413, 507) },
    }),
    async (c) => uploadContent(c, c.req.valid("param").file_id),
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "put",
      path: "/files/{file_id}/content/{derived_key}",
      tags: ["Files"],
      summary: "Add or replace a derived file (204); `core_*` keys only as specified",
      description:
        "Up to 10 derived files per file. Reserved keys: " +
        Object.entries(CORE_DERIVED)
          .map(([k, v]) => `\`${k}\` (${v.describe})`)
          .join(", ") +
        ". Query `name`: up to 255 ASCII characters (default: the key). Same credentials as the content upload.",
      request: {
        params: fileParams.extend({ derived_key: DerivedKey.openapi({ param: { name: "derived_key", in: "path" } }) }),
        query: z.object({ file_token: z.string().optional(), name: z.string().optional() }),
      },
      responses: { 204: NoContent, ...errors(400, 401, 403, 404, 413, 507) },
    }),
    async (c) => uploadDerived(c, c.req.valid("param").file_id, c.req.valid("param").derived_key),
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/files/content/{url_token}",
      tags: ["Files"],
      summary: "The content behind a file's `url`; 403 once `url_expires_at` has passed",
      request: { params: z.object({ url_token: z.string() }) },
      responses: { 200: { description: "The content" }, 206: { description: "A range of the content" }, ...errors(403, 404) },
    }),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async (c) => (await serveContent(c, c.req.valid("param").url_token)) as any,
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/f/{code}",
      tags: ["Files"],
      summary: "`url_short` of a public file: 302 to a fresh `url`",
      request: { params: z.object({ code: z.string() }) },
      responses: { 302: { description: "Redirect to the file's current url" }, ...errors(404) },
    }),
    async (c) => {
      const parsed = parseShortCode(c.req.valid("param").code);
      const row = parsed ? await getFileRow(c.var.db, parsed.fileId, null) : undefined;
      if (!parsed || !row || !row.file.isPublic || !row.file.isComplete || !shortCodeMatches(parsed.check, row.file.fileTokenRead)) {
        throw ApiError.notFound("no such public file");
      }
      // A URL about to expire is no fresh URL: renew when less than a minute is left.
      await renewExpiredUrls(c, [row], 60);
      const body = renderFile(row, viewContext(c));
      c.header("Cache-Control", "no-store");
      return c.redirect(body.url!, 302);
    },
  );

function unsupported(): never {
  throw new ApiError(415, "POST /files takes multipart/form-data (a file with 'content') or application/json (a placeholder)");
}

// ---- create -----------------------------------------------------------------------------------

async function createComplete(c: C) {
  const user = c.var.auth!.user!;
  const body = await readBody(c.req.raw, LIMITS.file.max_size_bytes + MULTIPART_OVERHEAD, "the upload");
  const parts = parseMultipart(body, c.req.header("content-type")!);
  const content = parts.get("content");
  if (!content || content.filename === undefined) throw ApiError.badRequest("'content' is required: a file part with the file's bytes");
  const text = (name: string) => partText(parts.get(name));
  const unknown = [...parts.keys()].find((k) => !["content", "type", "kind", "name", "mime_type", "is_public", "raw"].includes(k));
  if (unknown) throw ApiError.badRequest(`'${unknown}' is not a field of a file upload`);
  const fields = parseWith(CreateFields, {
    type: text("type"),
    kind: text("kind"),
    name: text("name"),
    mime_type: text("mime_type") || undefined,
    is_public: boolField(text("is_public"), "is_public"),
    raw: jsonField(text("raw"), "raw"),
  });
  requireTypeScope(c, fields.type);
  const bytes = content.data;
  checkSize(bytes.length, fields.kind ?? "other");
  if (!bytes.length) throw ApiError.badRequest("'content' is empty");
  const { kind, mimeType, detected } = await resolveType({ kind: fields.kind, mimeType: fields.mime_type }, bytes);
  checkSize(bytes.length, kind);
  checkQuota(user.storageUsed, bytes.length);
  const info = await mediaInfo(kind, mimeType, detected, bytes);
  const at = now(c);
  const name = fields.name ?? [...(content.filename ?? "")].slice(0, MORE_LIMITS.fileNameMaxLength).join("");
  const sha256 = await sha256Of(bytes);
  const { storageKey, url } = await storeContent(c, user.id, bytes, mimeType, name, sha256, at);
  const file = await insertFile(
    c.var.db,
    {
      userId: user.id,
      appId: c.var.auth!.app.id,
      kind,
      type: fields.type,
      name,
      mimeType,
      size: bytes.length,
      sha256,
      isComplete: true,
      isPublic: fields.is_public ?? false,
      storageKey,
      fileToken: randomToken(24),
      fileTokenRead: randomToken(24),
      mediaInfo: info,
      raw: fields.raw ?? null,
      createdAt: at,
      urlToken: url.token,
      urlExpiresAt: url.expiresAt,
    },
    QUOTA,
  );
  if (!file) {
    await discardContent(c, storageKey, url);
    throw new ApiError(507, "the storage quota is exceeded");
  }
  const row: FileRow = { file, user: selfView(c), app: c.var.auth!.app, derived: [] };
  publishFile(c, row);
  return ok(c, renderFile(row, viewContext(c), { fileToken: true, raw: fields.raw !== undefined }), {}, 201);
}

async function createPlaceholder(c: C) {
  const user = c.var.auth!.user!;
  const input = await readJson(c);
  if (!input || typeof input !== "object" || Array.isArray(input)) throw ApiError.badRequest("the JSON body must be an object");
  const fields = parseWith(CreateFields, input);
  if (!fields.kind) throw ApiError.badRequest("'kind' is required when creating a placeholder (audio, video, image or other)");
  requireTypeScope(c, fields.type);
  let mimeType: string | null = null;
  if (fields.mime_type !== undefined) {
    const m = normalizeMime(fields.mime_type);
    if (kindOfMime(m.base) !== fields.kind) {
      throw ApiError.badRequest(`'mime_type' ${m.base} does not match 'kind' ${fields.kind} (${m.base} is kind ${kindOfMime(m.base)})`);
    }
    mimeType = m.base;
  }
  const at = now(c);
  const fileToken = randomToken(24);
  const opId = await fileCreateOpId(fileToken);
  const file = await insertFile(
    c.var.db,
    {
      userId: user.id,
      appId: c.var.auth!.app.id,
      kind: fields.kind,
      type: fields.type,
      name: fields.name ?? "",
      mimeType,
      size: 0,
      isComplete: false,
      isPublic: fields.is_public ?? false,
      fileToken,
      fileTokenRead: randomToken(24),
      raw: fields.raw ?? null,
      createdAt: at,
    },
    QUOTA,
    [newOperation(c.var.db, { id: opId, type: "file_create", userId: user.id, createdAt: at })],
  );
  if (!file) throw new ApiError(507, "the storage quota is exceeded");
  const row: FileRow = { file, user: selfView(c), app: c.var.auth!.app, derived: [] };
  publishFile(c, row);
  const origin = viewContext(c).origin;
  addMeta(c, { status_url: `${origin}/v1/sys/ops/${opId}` });
  return ok(
    c,
    {
      ...renderFile(row, viewContext(c), { fileToken: true, raw: fields.raw !== undefined }),
      upload_parameters: { method: "PUT", url: `${origin}/v1/files/${file.id}/content?file_token=${encodeURIComponent(fileToken)}` },
    },
    {},
    201,
  );
}

// ---- uploads ----------------------------------------------------------------------------------

/** The bytes and the mime type an upload request carries (raw body, or a multipart `content` part). */
async function uploadBody(c: C, limit: number, what: string): Promise<{ bytes: Uint8Array; mimeType?: string; field: string }> {
  if (isMultipart(c)) {
    const body = await readBody(c.req.raw, limit + MULTIPART_OVERHEAD, what);
    const parts = parseMultipart(body, c.req.header("content-type")!);
    const content = parts.get("content");
    if (!content) throw ApiError.badRequest("'content' is required: a part with the file's bytes");
    if (content.data.length > limit) throw new ApiError(413, `${what} is larger than ${limit} bytes`);
    return { bytes: content.data, mimeType: partText(parts.get("mime_type")) || undefined, field: "mime_type" };
  }
  const bytes = await readBody(c.req.raw, limit, what);
  return { bytes, mimeType: givenContentType(c.req.header("content-type")), field: "Content-Type" };
}

async function uploadContent(c: C, fileId: string) {
  const row = await loadFile(c, fileId);
  requireUploadAccess(c, row);
  const file = row.file;
  if (file.isComplete) throw ApiError.badRequest("the file's content is already uploaded; a complete file's content cannot be replaced");
  const limit = file.kind === "audio" ? LIMITS.file.audio_max_size_bytes : LIMITS.file.max_size_bytes;
  const upload = await uploadBody(c, limit, `${file.kind === "audio" ? "audio " : ""}'content'`);
  const bytes = upload.bytes;
  if (!bytes.length) throw ApiError.badRequest("'content' is empty");
  // Rule 1: `kind` from the placeholder; `mime_type` optional here (the placeholder's, if it named one).
  const given = upload.mimeType ?? file.mimeType ?? undefined;
  const { kind, mimeType, detected } = await resolveType(
    { kind: file.kind, mimeType: given, mimeField: upload.mimeType ? upload.field : "mime_type" },
    bytes,
  );
  checkSize(bytes.length, kind);
  checkQuota(row.user.storageUsed, bytes.length);
  const info = await mediaInfo(kind, mimeType, detected, bytes);
  const at = now(c);
  const sha256 = await sha256Of(bytes);
  const { storageKey, url } = await storeContent(c, file.userId, bytes, mimeType, file.name, sha256, at);
  const opId = await fileCreateOpId(file.fileToken);
  const content = { mimeType, size: bytes.length, sha256, storageKey, mediaInfo: info, urlToken: url.token, urlExpiresAt: url.expiresAt };
  if (!(await completeFile(c.var.db, file, content, QUOTA, opId, at))) {
    await discardContent(c, storageKey, url);
    throw await refusal(c, row, bytes.length);
  }
  row.file = { ...file, ...content, isComplete: true };
  publishFile(c, row);
  return c.body(null, 204);
}

async function uploadDerived(c: C, fileId: string, key: string) {
  const spec = CORE_DERIVED[key];
  if (key.startsWith("core_") && !spec) {
    throw ApiError.badRequest(`'derived_key' ${key} is reserved; the core keys are ${Object.keys(CORE_DERIVED).join(", ")}`);
  }
  const name = c.req.query("name") ?? key;
  if (!/^[\x20-\x7e]+$/.test(name) || name.length > MORE_LIMITS.derivedFileNameMaxLength) {
    throw ApiError.badRequest(`'name' of a derived file must be 1 to ${MORE_LIMITS.derivedFileNameMaxLength} printable ASCII characters`);
  }
  const row = await loadFile(c, fileId);
  requireUploadAccess(c, row);
  const previous = row.derived.find((d) => d.key === key);
  if (!previous && row.derived.length >= MORE_LIMITS.derivedFilesPerFile) {
    throw ApiError.badRequest(`a file has at most ${MORE_LIMITS.derivedFilesPerFile} derived files`);
  }
  const upload = await uploadBody(c, LIMITS.file.max_size_bytes, "derived 'content'");
  const bytes = upload.bytes;
  if (!bytes.length) throw ApiError.badRequest("'content' is empty");
  const { kind, mimeType } = await resolveType({ mimeType: upload.mimeType, mimeField: upload.field }, bytes);
  const image = kind === "image" ? imageInfo(bytes, mimeType) : null;
  if (spec && (!image || !spec.check(image))) {
    const is = image ? `${image.width}x${image.height} px` : (await detect(bytes)).mime;
    throw ApiError.badRequest(`'derived_key' ${key} must be ${spec.describe}; the content is ${is}`);
  }
  const delta = bytes.length - (previous?.size ?? 0);
  checkQuota(row.user.storageUsed, delta);
  const at = now(c);
  const sha256 = await sha256Of(bytes);
  const { storageKey, url } = await storeContent(c, row.file.userId, bytes, mimeType, name, sha256, at);
  const derived: DerivedRecord = {
    fileId: row.file.id,
    key,
    name,
    mimeType,
    size: bytes.length,
    sha256,
    storageKey,
    imageInfo: image,
    createdAt: at,
    urlToken: url.token,
    urlExpiresAt: url.expiresAt,
  };
  const written = await upsertDerived(c.var.db, row.file, derived, previous, { quota: QUOTA, maxDerived: MORE_LIMITS.derivedFilesPerFile });
  if (!written) {
    await discardContent(c, storageKey, url);
    const state = await writeState(c.var.db, row.file.id, row.file.userId);
    if (state && !state.isDeleted && !previous && state.derivedCount >= MORE_LIMITS.derivedFilesPerFile) {
      throw ApiError.badRequest(`a file has at most ${MORE_LIMITS.derivedFilesPerFile} derived files`);
    }
    throw await refusal(c, row, delta);
  }
  if (previous) {
    c.executionCtx.waitUntil(
      Promise.all([c.env.FILES.delete(previous.storageKey), revokeUrls(c.env.KV, [previous.urlToken])]).catch((e) =>
        console.error(JSON.stringify({ msg: "replaced derived content not removed", key: previous.storageKey, error: String(e) })),
      ),
    );
  }
  row.derived = [...row.derived.filter((d) => d.key !== key), derived].sort((a, b) => (a.key < b.key ? -1 : 1));
  publishFile(c, row);
  return c.body(null, 204);
}

// ---- deletes ----------------------------------------------------------------------------------

/**
 * Removes deleted files' content objects and URL tokens. If R2 refuses, the objects stay
 * unreferenced: a `dead` file_delete operation records them (nothing is lost silently).
 */
async function removeContent(c: C, keys: string[], urlTokens: string[], detail: Record<string, unknown>, at: number) {
  c.executionCtx.waitUntil(revokeUrls(c.env.KV, urlTokens));
  if (!keys.length) return;
  try {
    await c.env.FILES.delete(keys);
  } catch (e) {
    console.error(JSON.stringify({ msg: "file content not removed", keys, error: String(e) }));
    await newOperation(c.var.db, {
      id: crypto.randomUUID(),
      type: "file_delete",
      status: "dead",
      userId: c.var.auth?.user?.id ?? null,
      detail: { ...detail, content_not_removed: keys, error: String(e) },
      createdAt: at,
      endedAt: at,
    }).catch(() => {});
  }
}
