import { iso } from "../http/time";
import { contentUrl, type FileUrls, type SignedUrl } from "../services/file-urls";
import type { AudioInfo, ImageInfo, VideoInfo } from "../services/media-info";
import type { DerivedRecord, FileRecord } from "../stores/files";
import { escapeAttr } from "../text/process";
import { fileFields } from "./file";

// What a raw replacement value becomes (object-metadata's `+io.pnut.core.file` and
// `+io.pnut.core.poll`, io.pnut → io.example): the file as an oEmbed, a URL or its metadata, and
// the poll notice. Never the writer's `file_token`: others read a private file through the
// `file_token_read` put here.

/** A file with its derived files and signed URLs (services/file-urls.ts `signUrls`). */
export interface EmbeddableFile {
  file: FileRecord;
  derived: DerivedRecord[];
  urls?: FileUrls;
}

/** The derived file the oEmbed's thumbnail comes from (the reference's 200×200 thumbnail). */
const THUMBNAIL_KEY = "core_image_200s";
const THUMBNAIL_SIZE = 200;

const urlFields = (u: SignedUrl | undefined, origin: string) => (u ? { url: contentUrl(origin, u.token), url_expires_at: iso(u.expiresAt) } : {});

/** Fields every format carries: which file, and the token others read it with. */
const fileRef = (f: FileRecord) => ({ file_id: String(f.id), file_token_read: f.fileTokenRead });

/** The `url` format: the file's id, read token and current content URL. */
export function fileUrlEmbed(e: EmbeddableFile, origin: string) {
  return { ...fileRef(e.file), ...urlFields(e.urls?.content, origin) };
}

/** The `metadata` format: the File object's own fields (not its user, client, raw or `file_token`). */
export function fileMetadataEmbed(e: EmbeddableFile, origin: string) {
  const f = e.file;
  return {
    ...fileRef(f),
    ...fileFields(f),
    ...urlFields(e.urls?.content, origin),
    ...(f.mediaInfo && f.kind !== "other" ? { [`${f.kind}_info`]: f.mediaInfo } : {}),
    derived_files: Object.fromEntries(
      e.derived.map((d) => [
        d.key,
        {
          ...urlFields(e.urls?.derived[d.key], origin),
          ...(d.mimeType ? { mime_type: d.mimeType } : {}),
          name: d.name,
          sha256: d.sha256,
          size: d.size,
          ...(d.imageInfo ? { image_info: d.imageInfo } : {}),
        },
      ]),
    ),
  };
}

/**
 * The thumbnail of an image: the image itself when it fits in 200×200 (better than the server's
 * square made from it, and the same whether or not that is made yet), else its 200×200 derived file.
 */
function thumbnail(e: EmbeddableFile, origin: string) {
  const info = e.file.mediaInfo as ImageInfo | null;
  const own = e.urls?.content;
  if (e.file.kind === "image" && info && own && info.width <= THUMBNAIL_SIZE && info.height <= THUMBNAIL_SIZE) {
    return { thumbnail_url: contentUrl(origin, own.token), thumbnail_width: info.width, thumbnail_height: info.height };
  }
  const d = e.derived.find((x) => x.key === THUMBNAIL_KEY);
  const dUrl = e.urls?.derived[THUMBNAIL_KEY];
  const dInfo = d?.imageInfo as ImageInfo | null | undefined;
  if (d && dUrl && dInfo) return { thumbnail_url: contentUrl(origin, dUrl.token), thumbnail_width: dInfo.width, thumbnail_height: dInfo.height };
  return {};
}

const timing = (i: AudioInfo) => ({
  duration: i.duration,
  ...(i.duration_string ? { duration_string: i.duration_string } : {}),
  ...(i.bitrate != null ? { bitrate: i.bitrate } : {}),
});

/**
 * The `oembed` format (the reference's `photo`, `video` or `audio` oEmbed of an image, video or
 * audio file), or null for a file of kind `other` or one without its media information.
 */
export function fileOembed(e: EmbeddableFile, origin: string): Record<string, unknown> | null {
  const f = e.file;
  const info = f.mediaInfo as (ImageInfo & VideoInfo) | null;
  if (!info || f.kind === "other" || !e.urls?.content) return null;
  const base = { version: "1.0", title: f.name, ...fileRef(f), ...urlFields(e.urls.content, origin), provider_url: origin };
  if (f.kind === "image") return { ...base, type: "photo", width: info.width, height: info.height, ...thumbnail(e, origin) };
  if (f.kind === "audio") return { ...base, type: "audio", ...timing(info) };
  const url = contentUrl(origin, e.urls.content.token);
  const thumb = thumbnail(e, origin) as { thumbnail_url?: string };
  // The reference's default html of a video oEmbed: a <video> tag with an iframe fallback.
  const size = `width="${info.width}" height="${info.height}"`;
  const poster = thumb.thumbnail_url ? ` poster="${escapeAttr(thumb.thumbnail_url)}"` : "";
  const html = `<video ${size}${poster} src="${escapeAttr(url)}" controls><iframe ${size} src="${escapeAttr(url)}"></iframe></video>`;
  return { ...base, type: "video", width: info.width, height: info.height, ...timing(info), html, ...thumb };
}

/** A poll as the notice the reference attaches: `{poll_token, poll_id, id, prompt, closed_at, options[{text, position}]}`. */
export function pollNotice(poll: { id: number; pollToken: string; prompt: string; closedAt: number }, options: { text: string; position: number }[]) {
  return {
    poll_token: poll.pollToken,
    // The reference's field table names `poll_id`, its example `id`: both, so either reading works.
    poll_id: String(poll.id),
    id: String(poll.id),
    prompt: poll.prompt,
    closed_at: iso(poll.closedAt),
    options: options.map((o) => ({ text: o.text, position: o.position })),
  };
}
