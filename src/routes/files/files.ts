import { z } from "@hono/zod-openapi";
import { userToken } from "../../auth/access";
import { BODY_LIMITS, MORE_LIMITS } from "../../config";
import { addMeta, ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { parsePage, finishPage, pageQuery } from "../../http/pagination";
import { exampleFile } from "../../http/examples";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { now } from "../../http/time";
import { signUrls } from "../../services/file-urls";
import { runFileDelete } from "../../services/file-delete";
import { normalizeMime } from "../../services/media";
import { deleteFiles, getFileRowsByIds, listUserFileRows, ownLiveFileIds, updateFile, type FileRow } from "../../stores/files";
import { fileCreateOpId, newOperation } from "../../stores/operations";
import { viewContext } from "../../views/context";
import { renderFile, type FileViewOptions } from "../../views/file";
import {
  PatchBody,
  isJson,
  isMultipart,
  tokenMatches,
  scopeCovers,
  isOwner,
  requireTypeScope,
  scopeTypes,
  requireOwner,
  loadFile,
  fileDeletionSql,
  fileReservation,
  publishFile,
  Flag,
  rawQuery,
  wantsRaw,
  fileParams,
  parseIds,
  csv,
  FileSchema,
} from "./common";
import type { C } from "./common";
import { createComplete, createPlaceholder, unsupported } from "./create";
import { prepareRaw } from "../../services/raw-core";

// Files: create (POST /files, the two kinds in create.ts), look up, change and delete. Their content
// (uploads, serving, short URLs) is in content.ts; what they share is in common.ts.

export const fileRoutes = createRouter()
  .openapi(
    defineRoute(userToken("files"), {
      method: "post",
      path: "/files",
      bodyLimit: BODY_LIMITS.upload,
      tags: ["Files"],
      summary: "Create a file: multipart/form-data with `content` (a complete file) or JSON (a placeholder)",
      description:
        "Multipart fields: `content` (the file, required), `type` (required), `kind`, `name`, `mime_type`, `is_public` (0/1), `raw` (JSON). " +
        "JSON: `type` and `kind` required, `name`, `mime_type`, `is_public`, `raw`; the reply carries `upload_parameters` and `meta.status_url` " +
        "of the `file_create` operation, which completes when the content is PUT. Needs a user token with `files` (or `files:<type>`). " +
        "Emits a `file` event once the file is complete.",
      responses: { 201: Envelope(FileSchema, "The created File object", exampleFile, { code: 201 }), ...errors(400, 401, 403, 413, 415, 507) },
    }),
    async (c) => (isMultipart(c) ? createComplete(c) : isJson(c) ? createPlaceholder(c) : unsupported()),
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "get",
      path: "/files/{file_id}",
      tags: ["Files"],
      summary: "A file. An expired `url` (and those of derived files) is renewed",
      description:
        "One file. The owner sees everything; others see public files, or private ones with `file_token_read` (or `file_token`). An expired `url` is renewed in the reply. Needs a user token with `files`; emits nothing.",
      request: {
        params: fileParams,
        query: z.object({
          file_token: z.string().optional().openapi({ description: "The file's `file_token`: opens a private file." }),
          file_token_read: z.string().optional().openapi({ description: "The file's `file_token_read`: opens a private file for reading." }),
          ...rawQuery,
        }),
      },
      responses: { 200: Envelope(FileSchema, "File object", exampleFile), ...errors(400, 401, 403, 404) },
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
      await signUrls(c, [row]);
      return ok(c, renderFile(row, viewContext(c), { fileToken: owner || withToken, fileTokenRead: withReadToken, raw: wantsRaw(q) }));
    },
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "get",
      path: "/files",
      tags: ["Files"],
      summary: "Files by id (the first 200 found); private files need `file_token_read_{file_id}`",
      description:
        "Several files at once, in the order asked, leaving out those the caller may not see; a private file needs `file_token_read_{file_id}=<token>` in the query. Needs a user token with `files`; emits nothing.",
      request: {
        query: z.object({ ids: z.string().openapi({ description: "Comma-separated file ids (at most 200).", example: "1,2,3" }), ...rawQuery }).passthrough(),
      },
      responses: { 200: Envelope(z.array(FileSchema), "File objects", [exampleFile]), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid("query") as { ids: string; include_raw?: string; include_file_raw?: string } & Record<string, string>;
      const ids = parseIds(q.ids, MORE_LIMITS.idsPerRequest);
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
      await signUrls(
        c,
        visible.map((v) => v.row),
      );
      const view = viewContext(c);
      return ok(
        c,
        visible.map((v) => renderFile(v.row, view, v.opts)),
      );
    },
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "get",
      path: "/users/me/files",
      tags: ["Files"],
      summary: "The caller's files (paginated), with the general file parameters",
      description:
        "The caller's own files, newest first, paginated; by default incomplete and private files are included. Needs a user token with `files`; emits nothing.",
      request: {
        query: z.object({
          ...pageQuery,
          include_incomplete: Flag("include_incomplete", "`0` leaves out placeholders whose content was not uploaded yet."),
          include_private: Flag("include_private", "`0` leaves out private files."),
          mime_types: z.string().optional().openapi({ description: "Only files of these mime types, comma-separated.", example: "image/png,image/jpeg" }),
          file_types: z.string().optional().openapi({ description: "Only files of these `type`s, comma-separated." }),
          exclude_file_types: z.string().optional().openapi({ description: "Leave out files of these `type`s, comma-separated." }),
          ...rawQuery,
        }),
      },
      responses: {
        200: Envelope(z.array(FileSchema), "File objects, newest first", [exampleFile], { more: false, max_id: "1", min_id: "1" }),
        ...errors(400, 401, 403),
      },
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
      await signUrls(c, items);
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
      description: "Changes `name`, `is_public` or `raw` of a file. Only its owner. Needs a user token with `files`. Emits a `file` event.",
      request: { params: fileParams, body: { content: { "application/json": { schema: PatchBody } } } },
      responses: { 200: Envelope(FileSchema, "The updated File object", exampleFile), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const row = await loadFile(c, c.req.valid("param").file_id);
      requireOwner(c, row);
      const set = { name: body.name, isPublic: body.is_public, raw: await prepareRaw(c, body.raw, "file") };
      if (Object.values(set).some((v) => v !== undefined)) {
        const updated = await updateFile(c.var.db, row.file.id, set, fileReservation(c, row.file.userId, row.file.id));
        if (!updated) throw ApiError.notFound("no such file");
        row.file = updated.file;
        await signUrls(c, [row]);
        publishFile(c, row, false, updated.seq);
      } else {
        await signUrls(c, [row]);
      }
      return ok(c, renderFile(row, viewContext(c), { fileToken: true, raw: body.raw !== undefined }));
    },
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "delete",
      path: "/files/{file_id}",
      tags: ["Files"],
      summary: "Delete a file (owner only); returns it",
      description:
        "Deletes a file and its derived files, frees the owner's storage and removes the content. Only its owner. Needs a user token with `files`. Emits a `file` event with `is_deleted`.",
      request: { params: fileParams },
      responses: {
        200: Envelope(FileSchema, "The deleted File object, with `is_deleted`", { ...exampleFile, is_deleted: true }),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const row = await loadFile(c, c.req.valid("param").file_id);
      requireOwner(c, row);
      const at = now(c);
      const placeholderOpId = row.file.isComplete ? undefined : await fileCreateOpId(row.file.fileToken);
      const deleted = await deleteFiles(
        c.var.db,
        row.file.userId,
        [{ file: row.file, derived: row.derived, placeholderOpId }],
        at,
        [],
        [fileDeletionSql(c, row)],
      );
      if (!deleted.ids.length) throw ApiError.notFound("no such file");
      // Rows first, content after: a failure here leaves unreferenced objects, recorded as a dead operation.
      await removeContent(c, deleted.storageKeys, { file_ids: [String(row.file.id)] }, at);
      const body = renderFile(row, viewContext(c), { fileToken: true, isDeleted: true });
      publishFile(c, row, true, deleted.eventSeqs?.[0]);
      return ok(c, body);
    },
  )
  .openapi(
    defineRoute(userToken("files"), {
      method: "delete",
      path: "/files",
      tags: ["Files"],
      summary: "Delete up to 200 files (owner only): 202 with the ids confirmed for deletion and the `file_delete` operation's `meta.status_url`",
      description:
        "Deletes several of the caller's files as one `file_delete` operation: the reply is 202 with the ids (in the order asked) of the caller's files that will be deleted, as the reference shows; `meta.status_url` follows the operation until `completed` (or `dead`, with each id's outcome). Needs a user token with `files`. Emits a `file` event with `is_deleted` per file.",
      request: { query: z.object({ ids: z.string().openapi({ description: "Comma-separated ids of the caller's files (at most 200).", example: "1,2,3" }) }) },
      responses: {
        202: Envelope(z.array(z.string()), "File ids confirmed for deletion; `meta.status_url` follows the operation", ["5", "6426"], {
          code: 202,
          status_url: "https://api.example.com/v1/sys/ops/514406d5-63e0-4de0-887d-4d5ebed825f4",
        }),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const ids = parseIds(c.req.valid("query").ids, MORE_LIMITS.filesReturned);
      const user = c.var.auth!.user!;
      const at = now(c);
      const id = crypto.randomUUID();
      const detail = { files: Object.fromEntries(ids.map((i) => [String(i), "pending"])) };
      const [confirmed] = await Promise.all([
        ownLiveFileIds(c.var.db, user.id, ids, scopeTypes(c) ?? null),
        newOperation(c.var.db, { id, type: "file_delete", userId: user.id, detail, createdAt: at }),
      ]);
      const startedMs = Date.now();
      const clock = () => at + Math.floor((Date.now() - startedMs) / 1000);
      c.executionCtx.waitUntil(
        runFileDelete(
          {
            db: c.var.db,
            bucket: c.var.files,
            clock,
            onDeleted: (rows) => {
              for (const r of rows) publishFile(c, r, true);
            },
          },
          { opId: id, userId: user.id, fileIds: ids, scopeTypes: scopeTypes(c) },
        ),
      );
      addMeta(c, { status_url: `${viewContext(c).origin}/v1/sys/ops/${id}` });
      return ok(c, confirmed.map(String), {}, 202);
    },
  );

/**
 * Removes deleted files' content objects (their URLs stopped working with the rows). If R2
 * refuses, the objects stay unreferenced: a `dead` file_delete operation records them (nothing
 * is lost silently).
 */
async function removeContent(c: C, keys: string[], detail: Record<string, unknown>, at: number) {
  if (!keys.length) return;
  try {
    await c.var.files.delete(keys);
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
