import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../../auth/access";
import { BODY_LIMITS, LIMITS, MORE_LIMITS } from "../../config";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, errors } from "../../http/route";
import { now } from "../../http/time";
import { parseShortCode, serveContent, shortCodeMatches, signUrls } from "../../services/file-urls";
import { keysToMake, makeDerivedLater } from "../../services/image-derivatives";
import { detect, imageInfoOf, mediaInfo, resolveType } from "../../services/media";
import { completeFile, getFileRow, upsertDerived, writeState, type DerivedRecord } from "../../stores/files";
import { fileCreateOpId } from "../../stores/operations";
import { viewContext } from "../../views/context";
import { renderFile } from "../../views/file";
import {
  QUOTA,
  DerivedKey,
  CORE_DERIVED,
  isMultipart,
  requireUploadAccess,
  loadFile,
  publishFile,
  publishSigned,
  checkSize,
  checkQuota,
  givenContentType,
  refusal,
  fileParams,
  NoContent,
} from "./common";
import type { C } from "./common";
import { keepUpload, receiveUpload, type ReceivedUpload } from "./upload";

// File content: uploads of a placeholder's content and of derived files, serving content by its
// expiring URL, and short URLs.

export const fileContentRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "put",
      path: "/files/{file_id}/content",
      bodyLimit: BODY_LIMITS.upload,
      tags: ["Files"],
      summary: "Upload the content of a placeholder (204). The body is the content; its Content-Type is the mime type",
      description:
        "Needs the file's `file_token` in the query string (as in `upload_parameters.url`), or the owner's token with the files scope. " +
        "A multipart/form-data body with a `content` part (and optional `mime_type`) is accepted too. Completes the `file_create` " +
        "operation and emits a `file` event.",
      request: {
        params: fileParams,
        query: z.object({ file_token: z.string().optional().openapi({ description: "The file's `file_token` (what `upload_parameters.url` carries)." }) }),
      },
      responses: { 204: NoContent, ...errors(400, 401, 403, 404, 413, 507) },
    }),
    async (c) => uploadContent(c, c.req.valid("param").file_id),
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "put",
      path: "/files/{file_id}/content/{derived_key}",
      bodyLimit: BODY_LIMITS.upload,
      tags: ["Files"],
      summary: "Add or replace a derived file (204); `core_*` keys only as specified",
      description:
        "Up to 10 derived files per file. Reserved keys: " +
        Object.entries(CORE_DERIVED)
          .map(([k, v]) => `\`${k}\` (${v.describe})`)
          .join(", ") +
        ". Query `name`: up to 255 ASCII characters (default: the key). Same credentials as the content upload. Emits a `file` event.",
      request: {
        params: fileParams.extend({
          derived_key: DerivedKey.openapi({
            param: { name: "derived_key", in: "path" },
            description: "1 to 64 of `A-Z a-z 0-9 _ . -`; `core_*` keys only as listed above.",
            example: "thumbnail_small",
          }),
        }),
        query: z.object({
          file_token: z.string().optional().openapi({ description: "The file's `file_token` (or use the owner's token)." }),
          name: z.string().optional().openapi({ description: "The derived file's name, up to 255 ASCII characters (default: the key)." }),
        }),
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
      description:
        "Serves the bytes behind a File's `url` with its mime type, `ETag`, `HEAD` and byte ranges (206). The URL is the credential, signed by the server: " +
        "no token is needed. It stops working at `url_expires_at` (403; any read that returns the file gives the current one), when a derived file's " +
        "content is replaced or its signature does not match (403), and when the file is deleted (404). Emits nothing.",
      request: {
        params: z.object({
          url_token: z.string().openapi({ description: "The last part of a File's `url` (file id, expiry and signature; a derived file's key last)." }),
        }),
      },
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
      description:
        "The permanent short link of a public, complete file: a 302 to a freshly issued `url`. A file made private or deleted is a 404. No token needed; emits nothing.",
      request: { params: z.object({ code: z.string().openapi({ description: "The last part of a File's `url_short`.", example: "1-TJMUTg1a" }) }) },
      responses: { 302: { description: "Redirect to the file's current url" }, ...errors(404) },
    }),
    async (c) => {
      const parsed = parseShortCode(c.req.valid("param").code);
      const row = parsed ? await getFileRow(c.var.db, parsed.fileId, null) : undefined;
      if (!parsed || !row?.file.isPublic || !row.file.isComplete || !shortCodeMatches(parsed.check, row.file.fileTokenRead)) {
        throw ApiError.notFound("no such public file");
      }
      // A URL about to expire is no fresh URL: the next one when less than a minute is left.
      await signUrls(c, [row], 60);
      const body = renderFile(row, viewContext(c));
      c.header("Cache-Control", "no-store");
      return c.redirect(body.url!, 302);
    },
  );

// ---- uploads ----------------------------------------------------------------------------------

/** The mime type an upload gives, and the field it came in: a multipart `mime_type`, or the raw body's Content-Type. */
function givenType(c: C, upload: ReceivedUpload): { mimeType?: string; field: string } {
  if (!isMultipart(c)) return { mimeType: givenContentType(c.req.header("content-type")), field: "Content-Type" };
  if (!upload.filePart) throw ApiError.badRequest("'content' is required: a part with the file's bytes");
  return { mimeType: upload.fields.get("mime_type") || undefined, field: "mime_type" };
}

async function uploadContent(c: C, fileId: string) {
  const row = await loadFile(c, fileId);
  requireUploadAccess(c, row);
  const file = row.file;
  if (file.isComplete) throw ApiError.badRequest("the file's content is already uploaded; a complete file's content cannot be replaced");
  const limit = file.kind === "audio" ? LIMITS.file.audio_max_size_bytes : LIMITS.file.max_size_bytes;
  const upload = await receiveUpload(c, file.userId, limit, `${file.kind === "audio" ? "audio " : ""}'content'`);
  return keepUpload(c, upload, async () => {
    const given = givenType(c, upload);
    const { size, sha256, key: storageKey } = upload.stored;
    if (!size) throw ApiError.badRequest("'content' is empty");
    // Rule 1: `kind` from the placeholder; `mime_type` optional here (the placeholder's, if it named one).
    const { kind, mimeType, detected } = await resolveType(
      { kind: file.kind, mimeType: given.mimeType ?? file.mimeType ?? undefined, mimeField: given.mimeType ? given.field : "mime_type" },
      upload.source,
    );
    checkSize(size, kind);
    checkQuota(row.user.storageUsed, size);
    const info = await mediaInfo(kind, mimeType, detected, upload.source);
    const at = now(c);
    const opId = await fileCreateOpId(file.fileToken);
    const toMake = keysToMake(
      { kind, mimeType, mediaInfo: info },
      row.derived.map((d) => d.key),
    );
    const content = { mimeType, size, sha256, storageKey, mediaInfo: info, derivedPendingSince: toMake.length ? at : null };
    if (!(await completeFile(c.var.db, file, content, QUOTA, opId, at))) throw await refusal(c, row, size);
    row.file = { ...file, ...content, isComplete: true };
    await signUrls(c, [row]);
    publishFile(c, row);
    if (toMake.length) makeDerivedLater(c, file.id, publishSigned(c));
    return c.body(null, 204);
  });
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
  const upload = await receiveUpload(c, row.file.userId, LIMITS.file.max_size_bytes, "derived 'content'");
  const derived = await keepUpload(c, upload, async () => {
    const given = givenType(c, upload);
    const { size, sha256, key: storageKey } = upload.stored;
    if (!size) throw ApiError.badRequest("'content' is empty");
    const { kind, mimeType } = await resolveType({ mimeType: given.mimeType, mimeField: given.field }, upload.source);
    const image = kind === "image" ? await imageInfoOf(upload.source, mimeType) : null;
    if (spec && (!image || !spec.check(image))) {
      const is = image ? `${image.width}x${image.height} px` : (await detect(upload.source)).mime;
      throw ApiError.badRequest(`'derived_key' ${key} must be ${spec.describe}; the content is ${is}`);
    }
    if (spec && row.file.mimeType && mimeType !== row.file.mimeType) {
      throw ApiError.badRequest(`'derived_key' ${key} must have the file's mime type ${row.file.mimeType}; the content is ${mimeType}`);
    }
    const delta = size - (previous?.size ?? 0);
    checkQuota(row.user.storageUsed, delta);
    const at = now(c);
    const record: DerivedRecord = {
      fileId: row.file.id,
      key,
      name,
      mimeType,
      size,
      sha256,
      storageKey,
      imageInfo: image,
      createdAt: at,
    };
    const written = await upsertDerived(c.var.db, row.file, record, previous, { quota: QUOTA, maxDerived: MORE_LIMITS.derivedFilesPerFile });
    if (!written) {
      const state = await writeState(c.var.db, row.file.id, row.file.userId);
      if (state && !state.isDeleted && !previous && state.derivedCount >= MORE_LIMITS.derivedFilesPerFile) {
        throw ApiError.badRequest(`a file has at most ${MORE_LIMITS.derivedFilesPerFile} derived files`);
      }
      throw await refusal(c, row, delta);
    }
    return record;
  });
  // The replaced content's URLs stop working with its storage key (they are signed over it).
  if (previous) {
    c.executionCtx.waitUntil(
      c.var.files
        .delete(previous.storageKey)
        .catch((e) => console.error(JSON.stringify({ msg: "replaced derived content not removed", key: previous.storageKey, error: String(e) }))),
    );
  }
  row.derived = [...row.derived.filter((d) => d.key !== key), derived].sort((a, b) => (a.key < b.key ? -1 : 1));
  await signUrls(c, [row]);
  publishFile(c, row);
  return c.body(null, 204);
}
