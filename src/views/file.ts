import { iso } from "../http/time";
import { contentUrl, shortUrl, type SignedUrl } from "../services/file-urls";
import { derivedPending } from "../services/image-derivatives";
import type { DerivedRecord, FileRecord, FileRow } from "../stores/files";
import { renderClientRef } from "./client";
import type { ViewContext } from "./context";
import { embedUser } from "./user";

export interface FileViewOptions {
  /** Show `file_token`: on creation, when given in the query string, or for the owner under a Files scope covering the type. */
  fileToken?: boolean;
  /** Show `file_token_read` although the file is private (the token was given in the query string). */
  fileTokenRead?: boolean;
  /** `include_raw` / `include_file_raw`. */
  raw?: boolean;
  /** Item of a paginated list: carries `pagination_id`. */
  paginated?: boolean;
  isDeleted?: boolean;
}

/** `url` and `url_expires_at` of a signed URL; nothing when the row was not signed (a deleted file). */
const urlFields = (u: SignedUrl | undefined, view: ViewContext) => (u ? { url: contentUrl(view.origin, u.token), url_expires_at: iso(u.expiresAt) } : {});

function renderDerived(d: DerivedRecord, url: SignedUrl | undefined, view: ViewContext) {
  return {
    ...urlFields(url, view),
    ...(d.mimeType ? { mime_type: d.mimeType } : {}),
    name: d.name,
    sha256: d.sha256,
    size: d.size,
    ...(d.imageInfo ? { image_info: d.imageInfo } : {}),
  };
}

/** The File object's own descriptive fields, in its order (also the `metadata` format of an attachment). */
export const fileFields = (f: FileRecord) => ({
  created_at: iso(f.createdAt),
  kind: f.kind,
  type: f.type,
  name: f.name,
  ...(f.mimeType ? { mime_type: f.mimeType } : {}),
  size: f.size,
  ...(f.sha256 ? { sha256: f.sha256 } : {}),
  is_complete: f.isComplete,
  is_public: f.isPublic,
});

/** `attached_to`, only when attached; each list only when not empty (the reference). */
function attachedTo(row: FileRow) {
  const lists = Object.entries(row.attachedTo ?? {}).filter(([, ids]) => ids.length > 0);
  return lists.length ? { attached_to: Object.fromEntries(lists) } : {};
}

/** The File object of api.md. */
export function renderFile(row: FileRow, view: ViewContext, opts: FileViewOptions = {}) {
  const f = row.file;
  const info = f.mediaInfo && f.kind !== "other" ? { [`${f.kind}_info`]: f.mediaInfo } : {};
  return {
    id: String(f.id),
    ...fileFields(f),
    ...(f.isComplete ? urlFields(row.urls?.content, view) : {}),
    ...(f.isPublic && f.isComplete ? { url_short: shortUrl(view.origin, f.id, f.fileTokenRead) } : {}),
    ...(opts.fileToken ? { file_token: f.fileToken } : {}),
    ...(f.isPublic || opts.fileTokenRead ? { file_token_read: f.fileTokenRead } : {}),
    ...info,
    source: renderClientRef(row.app),
    ...embedUser(row.user, row.file.userId, view),
    derived_files: Object.fromEntries(row.derived.map((d) => [d.key, renderDerived(d, row.urls?.derived[d.key], view)])),
    // The reference: the content and its derived files, once complete.
    ...(f.isComplete ? { total_size: f.size + row.derived.reduce((n, d) => n + d.size, 0) } : {}),
    ...attachedTo(row),
    ...(derivedPending(f, view.now) ? { derived_files_pending: true } : {}),
    ...(opts.raw ? { raw: f.raw ?? {} } : {}),
    ...(opts.isDeleted ? { is_deleted: true } : {}),
    ...(opts.paginated ? { pagination_id: String(f.id) } : {}),
  };
}
