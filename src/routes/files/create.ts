import { randomToken } from "../../auth/crypto";
import { LIMITS, MORE_LIMITS } from "../../config";
import { addMeta, ok } from "../../http/envelope";
import { badTextError, hasBadText } from "../../http/clean-text";
import { ApiError } from "../../http/errors";
import { now } from "../../http/time";
import { signUrls } from "../../services/file-urls";
import { keysToMake, makeDerivedLater } from "../../services/image-derivatives";
import { kindOfMime, mediaInfo, normalizeMime, resolveType } from "../../services/media";
import { insertFile, type FileRow } from "../../stores/files";
import { fileCreateOpId, newOperation } from "../../stores/operations";
import { viewContext } from "../../views/context";
import { renderFile } from "../../views/file";
import {
  QUOTA,
  CreateFields,
  parseWith,
  boolField,
  jsonField,
  readJson,
  requireTypeScope,
  fileReservation,
  publishFile,
  publishSigned,
  selfView,
  checkSize,
  checkQuota,
} from "./common";
import type { C } from "./common";
import { keepUpload, receiveUpload } from "./upload";
import { prepareRaw } from "../../services/raw-core";

// POST /files: a complete file from a multipart upload, or a placeholder from JSON (its content comes later
// through PUT /files/{id}/content, content.ts).

export function unsupported(): never {
  throw new ApiError(415, "POST /files takes multipart/form-data (a file with 'content') or application/json (a placeholder)");
}

// ---- create -----------------------------------------------------------------------------------

export async function createComplete(c: C) {
  const user = c.var.auth!.user!;
  const upload = await receiveUpload(c, user.id, LIMITS.file.max_size_bytes, "'content'");
  return keepUpload(c, upload, async () => {
    const { fields: parts, filePart: content, stored, source } = upload;
    if (!content || content.filename === undefined) throw ApiError.badRequest("'content' is required: a file part with the file's bytes");
    if (hasBadText(content.filename)) throw badTextError("content.filename");
    const unknown = [...parts.keys()].find((k) => !["type", "kind", "name", "mime_type", "is_public", "raw"].includes(k));
    if (unknown) throw ApiError.badRequest(`'${unknown}' is not a field of a file upload`);
    const text = (name: string) => parts.get(name);
    const fields = parseWith(CreateFields, {
      type: text("type"),
      kind: text("kind"),
      name: text("name"),
      mime_type: text("mime_type") || undefined,
      is_public: boolField(text("is_public"), "is_public"),
      raw: jsonField(text("raw"), "raw"),
    });
    requireTypeScope(c, fields.type);
    const size = stored.size;
    checkSize(size, fields.kind ?? "other");
    if (!size) throw ApiError.badRequest("'content' is empty");
    const { kind, mimeType, detected } = await resolveType({ kind: fields.kind, mimeType: fields.mime_type }, source);
    checkSize(size, kind);
    checkQuota(user.storageUsed, size);
    const info = await mediaInfo(kind, mimeType, detected, source);
    const at = now(c);
    const name = fields.name ?? [...(content.filename ?? "")].slice(0, MORE_LIMITS.fileNameMaxLength).join("");
    const toMake = keysToMake({ kind, mimeType, mediaInfo: info });
    const created = await insertFile(
      c.var.db,
      {
        userId: user.id,
        appId: c.var.auth!.app.id,
        kind,
        type: fields.type,
        name,
        mimeType,
        size,
        sha256: stored.sha256,
        isComplete: true,
        isPublic: fields.is_public ?? false,
        storageKey: stored.key,
        fileToken: randomToken(24),
        fileTokenRead: randomToken(24),
        mediaInfo: info,
        raw: await prepareRaw(c, fields.raw ?? null, "file"),
        createdAt: at,
        derivedPendingSince: toMake.length ? at : null,
      },
      QUOTA,
      [],
      fileReservation(c, user.id),
    );
    if (!created) throw new ApiError(507, "the storage quota is exceeded");
    const { seq, ...file } = created;
    const row: FileRow = { file, user: selfView(c), app: c.var.auth!.app, derived: [] };
    await signUrls(c, [row]);
    publishFile(c, row, false, seq);
    if (toMake.length) makeDerivedLater(c, file.id, publishSigned(c));
    return ok(c, renderFile(row, viewContext(c), { fileToken: true, raw: fields.raw !== undefined }), {}, 201);
  });
}

export async function createPlaceholder(c: C) {
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
  const created = await insertFile(
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
      raw: await prepareRaw(c, fields.raw ?? null, "file"),
      createdAt: at,
    },
    QUOTA,
    [newOperation(c.var.db, { id: opId, type: "file_create", userId: user.id, createdAt: at })],
    fileReservation(c, user.id),
  );
  if (!created) throw new ApiError(507, "the storage quota is exceeded");
  const { seq, ...file } = created;
  const row: FileRow = { file, user: selfView(c), app: c.var.auth!.app, derived: [] };
  publishFile(c, row, false, seq);
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

// ---- deletes ----------------------------------------------------------------------------------
