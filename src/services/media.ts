import chardet from "chardet";
import { fileTypeFromBuffer } from "file-type";
import { imageSize } from "image-size";
import { parseBuffer } from "music-metadata";
import { ApiError } from "../http/errors";

/**
 * Mime types, kinds and media information of uploaded content (api.md "Mime types" rules 1–7).
 * Everything is decided from the content's bytes (file-type, music-metadata, image-size,
 * chardet; MP4 boxes read here), never from a file name.
 */

export type Kind = "audio" | "video" | "image" | "other";
export const KINDS = ["audio", "video", "image", "other"] as const;

/** Container formats of the table; `mp4` is audio or video depending on the recorded kind. */
type Format = "mp3" | "mp4" | "wav" | "flac" | "webm" | "png" | "jpeg" | "gif";

interface TableRow {
  kind: Exclude<Kind, "other">;
  format: Format;
  recorded: string;
  accepted: string[];
}

/** The table of api.md "Mime types": recorded type and accepted alternatives per kind. */
export const MIME_TABLE: readonly TableRow[] = [
  { kind: "audio", format: "mp3", recorded: "audio/mpeg", accepted: ["audio/mp3"] },
  { kind: "audio", format: "mp4", recorded: "audio/mp4", accepted: ["audio/m4a", "audio/x-m4a"] },
  { kind: "audio", format: "wav", recorded: "audio/wave", accepted: ["audio/wav", "audio/x-wav", "audio/x-pn-wav"] },
  { kind: "audio", format: "flac", recorded: "audio/flac", accepted: ["audio/x-flac"] },
  { kind: "video", format: "mp4", recorded: "video/mpeg", accepted: ["video/quicktime", "video/m4v", "video/x-m4v", "video/mp4"] },
  { kind: "video", format: "webm", recorded: "video/webm", accepted: [] },
  { kind: "image", format: "png", recorded: "image/png", accepted: [] },
  { kind: "image", format: "jpeg", recorded: "image/jpeg", accepted: ["image/jpg"] },
  { kind: "image", format: "gif", recorded: "image/gif", accepted: [] },
];

const BY_MIME = new Map<string, TableRow>();
for (const row of MIME_TABLE) for (const m of [row.recorded, ...row.accepted]) BY_MIME.set(m, row);

/** Rule 7: types whose text encoding the server detects (a `charset` parameter is recorded). */
const TEXT_TYPES = [
  "application/msword",
  "application/vnd.oasis.opendocument.text",
  "application/rtf",
  "application/xml",
  "application/json",
  "application/javascript",
];
export const isTextType = (base: string) => base.startsWith("text/") || TEXT_TYPES.includes(base);

const MIME_SYNTAX = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/**
 * A client-given mime type, normalized: lowercase, parameters dropped (a `charset` is kept
 * aside), accepted alternatives mapped to the recorded type (rule 6). Invalid syntax → 400.
 */
export function normalizeMime(input: string, field = "mime_type"): { base: string; charset?: string } {
  const [head, ...params] = input.split(";");
  const base = head.trim().toLowerCase();
  if (!MIME_SYNTAX.test(base)) throw ApiError.badRequest(`'${field}' must be a mime type like 'image/png'`);
  const charset = params
    .map((p) => /^\s*charset\s*=\s*"?([A-Za-z0-9._:-]{1,40})"?\s*$/i.exec(p)?.[1])
    .find(Boolean)
    ?.toLowerCase();
  return { base: BY_MIME.get(base)?.recorded ?? base, charset };
}

/** The kind a (normalized) mime type belongs to: the table's kind, or `other` for every other type. */
export const kindOfMime = (base: string): Kind => BY_MIME.get(base)?.kind ?? "other";

/** What the bytes are. `format` is set for the table's formats; `mime` always. */
export interface Detected {
  format: Format | null;
  /** Detected type, as the table records it (mp4: by whether a video track exists). */
  mime: string;
  /** MP4 only: whether the content has a video track. */
  hasVideo?: boolean;
}

const FORMAT_OF: Record<string, Format> = {
  "audio/mpeg": "mp3",
  "audio/wav": "wav",
  "audio/vnd.wave": "wav",
  "audio/x-wav": "wav",
  "audio/flac": "flac",
  "audio/x-flac": "flac",
  "video/mp4": "mp4",
  "audio/mp4": "mp4",
  "audio/x-m4a": "mp4",
  "video/quicktime": "mp4",
  "video/x-m4v": "mp4",
  "video/webm": "webm",
  "audio/webm": "webm",
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/gif": "gif",
};

/** Detects the type of content from its bytes. Unknown binary is `application/octet-stream`. */
export async function detect(bytes: Uint8Array): Promise<Detected> {
  const found = bytes.length ? await fileTypeFromBuffer(bytes) : undefined;
  const format = found ? FORMAT_OF[found.mime] ?? null : null;
  if (format === "mp4") {
    const hasVideo = readMp4(bytes)?.hasVideo ?? found!.mime.startsWith("video/");
    return { format, mime: hasVideo ? "video/mpeg" : "audio/mp4", hasVideo };
  }
  if (format) return { format, mime: MIME_TABLE.find((r) => r.format === format)!.recorded };
  if (found) return { format: null, mime: found.mime };
  return { format: null, mime: looksLikeText(bytes) ? "text/plain" : "application/octet-stream" };
}

function looksLikeText(bytes: Uint8Array): boolean {
  if (!bytes.length) return false;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return true; // UTF-16 BOM
  return !bytes.subarray(0, 8192).includes(0);
}

/** The mime type recorded for detected content under a given kind, or null if the kind does not fit. */
function recordedFor(d: Detected, kind: Kind): string | null {
  if (!d.format) return kind === "other" ? d.mime : null;
  if (d.format === "mp4") {
    if (kind === "audio") return "audio/mp4";
    if (kind === "video") return d.hasVideo ? "video/mpeg" : null;
    return null;
  }
  return kindOfMime(d.mime) === kind ? d.mime : null;
}

export interface TypeInput {
  kind?: Kind;
  /** As the client gave it (not yet normalized). */
  mimeType?: string;
  /** Name of the field the mime type came from, for error messages. */
  mimeField?: string;
}

/**
 * Applies the mime rules to uploaded content: returns the recorded kind and mime type (with a
 * detected `charset` for the text types of rule 7). Every mismatch is a 400 naming the fields.
 * A table type (kind audio, video or image) must also be what the bytes are, because its
 * media information is read from them; other types given by the client are recorded as given.
 */
export async function resolveType(input: TypeInput, bytes: Uint8Array): Promise<{ kind: Kind; mimeType: string; detected: Detected }> {
  const field = input.mimeField ?? "mime_type";
  const given = input.mimeType !== undefined ? normalizeMime(input.mimeType, field) : undefined;
  const detected = await detect(bytes);
  let kind: Kind;
  let base: string;
  if (given) {
    const mimeKind = kindOfMime(given.base);
    if (input.kind && input.kind !== mimeKind) {
      throw ApiError.badRequest(`'${field}' ${given.base} does not match 'kind' ${input.kind} (${given.base} is kind ${mimeKind})`);
    }
    kind = mimeKind; // rule 5 (and rule 2 when both are given)
    base = given.base;
    if (kind !== "other" && recordedFor(detected, kind) !== base) {
      throw ApiError.badRequest(`'content' is ${detected.mime}, not the given '${field}' ${given.base}`);
    }
  } else if (input.kind) {
    // rule 4: detect, and refuse content that is not of the given kind
    const recorded = recordedFor(detected, input.kind);
    if (!recorded) {
      throw ApiError.badRequest(`'content' is ${detected.mime} (kind ${kindOfMime(detected.mime)}), which does not match 'kind' ${input.kind}`);
    }
    kind = input.kind;
    base = recorded;
  } else {
    // rule 3: detect both
    base = detected.mime;
    kind = kindOfMime(base);
  }
  const charset = isTextType(base) ? detectCharset(bytes) ?? given?.charset : undefined;
  return { kind, mimeType: charset ? `${base}; charset=${charset}` : base, detected };
}

/** Text encoding of content (rule 7), lowercase, e.g. `utf-8`; null when it cannot tell. */
export function detectCharset(bytes: Uint8Array): string | null {
  if (!bytes.length) return null;
  const sample = bytes.subarray(0, 64 * 1024);
  try {
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(sample.length < bytes.length ? trimUtf8(sample) : sample);
    return "utf-8";
  } catch {
    const guess = chardet.detect(sample);
    return guess ? guess.toLowerCase() : null;
  }
}

/** Drops a UTF-8 sequence cut at the end of a sample, so a valid file is not misjudged. */
function trimUtf8(b: Uint8Array): Uint8Array {
  let end = b.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const byte = b[end - i];
    if ((byte & 0xc0) === 0xc0) return b.subarray(0, end - i); // lead byte of a cut sequence
    if ((byte & 0x80) === 0) break;
  }
  return b;
}

// ---- media information ----------------------------------------------------------------------

export interface ImageInfo {
  width: number;
  height: number;
}
export interface AudioInfo {
  duration: number;
  duration_string?: string;
  bitrate: number;
}
export interface VideoInfo extends AudioInfo {
  width: number;
  height: number;
}
export type MediaInfo = ImageInfo | AudioInfo | VideoInfo;

/** `hour:minute:second`, e.g. `0:03:07`. */
export function durationString(seconds: number): string {
  const s = Math.round(seconds);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${Math.floor(s / 3600)}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

const unreadable = (mime: string) => ApiError.badRequest(`'content' could not be read as ${mime}`);

/** Image width and height (EXIF-rotated JPEGs report their displayed size). */
export function imageInfo(bytes: Uint8Array, mime = "an image"): ImageInfo {
  try {
    const size = imageSize(bytes);
    if (!size.width || !size.height) throw unreadable(mime);
    const rotated = (size.orientation ?? 1) >= 5;
    return rotated ? { width: size.height, height: size.width } : { width: size.width, height: size.height };
  } catch {
    throw unreadable(mime);
  }
}

/** audio_info / image_info / video_info of content of a table type; null for kind `other`. */
export async function mediaInfo(kind: Kind, mimeType: string, d: Detected, bytes: Uint8Array): Promise<MediaInfo | null> {
  if (kind === "image") return imageInfo(bytes, mimeType);
  if (kind === "other") return null;
  if (kind === "video" && d.format === "mp4") {
    const mp4 = readMp4(bytes);
    if (!mp4 || !mp4.video || mp4.duration == null) throw unreadable(mimeType);
    return timed(mp4.duration, null, bytes.length, { width: mp4.video.width, height: mp4.video.height });
  }
  let meta;
  try {
    meta = await parseBuffer(bytes, { mimeType: mimeType === "video/mpeg" ? "video/mp4" : mimeType, size: bytes.length }, { duration: true, skipCovers: true });
  } catch {
    meta = null;
  }
  let duration = meta?.format.duration;
  // An MP4 recorded as audio may hold video tracks music-metadata does not time: read `mvhd`.
  if ((duration == null || !Number.isFinite(duration)) && d.format === "mp4") duration = readMp4(bytes)?.duration ?? undefined;
  if (!meta || duration == null || !Number.isFinite(duration)) throw unreadable(mimeType);
  if (kind === "audio") return timed(duration, meta.format.bitrate ?? null, bytes.length);
  const video = meta.format.trackInfo.find((t) => t.video?.pixelWidth && t.video?.pixelHeight)?.video;
  if (!video) throw unreadable(mimeType);
  return timed(duration, meta.format.bitrate ?? null, bytes.length, { width: video.pixelWidth!, height: video.pixelHeight! });
}

function timed(duration: number, bitrate: number | null, size: number, dims?: ImageInfo): AudioInfo | VideoInfo {
  const kbps = bitrate && Number.isFinite(bitrate) ? bitrate / 1000 : duration > 0 ? (size * 8) / duration / 1000 : 0;
  return { duration: Math.round(duration), duration_string: durationString(duration), bitrate: Math.round(kbps), ...dims };
}

// ---- MP4 / QuickTime boxes ------------------------------------------------------------------

interface Mp4Info {
  duration: number | null;
  hasVideo: boolean;
  video: ImageInfo | null;
}

/** Reads `moov/mvhd` (duration) and each `trak`'s `tkhd` (size) and `mdia/hdlr` (track kind). */
export function readMp4(bytes: Uint8Array): Mp4Info | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const moov = boxes(view, 0, bytes.length).find((b) => b.type === "moov");
  if (!moov) return null;
  let duration: number | null = null;
  let video: ImageInfo | null = null;
  let hasVideo = false;
  for (const box of boxes(view, moov.start, moov.end)) {
    if (box.type === "mvhd" && box.end - box.start >= 32) {
      const v1 = view.getUint8(box.start) === 1;
      const timescale = view.getUint32(box.start + (v1 ? 20 : 12));
      const units = v1 ? Number(view.getBigUint64(box.start + 24)) : view.getUint32(box.start + 16);
      if (timescale > 0) duration = units / timescale;
    } else if (box.type === "trak") {
      const inner = boxes(view, box.start, box.end);
      const mdia = inner.find((b) => b.type === "mdia");
      const hdlr = mdia && boxes(view, mdia.start, mdia.end).find((b) => b.type === "hdlr");
      const handler = hdlr && hdlr.end - hdlr.start >= 12 ? fourcc(view, hdlr.start + 8) : "";
      if (handler !== "vide") continue;
      hasVideo = true;
      const tkhd = inner.find((b) => b.type === "tkhd");
      if (!tkhd || video) continue;
      const at = tkhd.start + (view.getUint8(tkhd.start) === 1 ? 88 : 76);
      if (at + 8 > tkhd.end) continue;
      const width = Math.round(view.getUint32(at) / 65536);
      const height = Math.round(view.getUint32(at + 4) / 65536);
      if (width && height) video = { width, height };
    }
  }
  return { duration, hasVideo, video };
}

function fourcc(view: DataView, at: number): string {
  return String.fromCharCode(view.getUint8(at), view.getUint8(at + 1), view.getUint8(at + 2), view.getUint8(at + 3));
}

function boxes(view: DataView, start: number, end: number): { type: string; start: number; end: number }[] {
  const out: { type: string; start: number; end: number }[] = [];
  let pos = start;
  while (pos + 8 <= end) {
    let size = view.getUint32(pos);
    const type = fourcc(view, pos + 4);
    let header = 8;
    if (size === 1) {
      if (pos + 16 > end) break;
      size = Number(view.getBigUint64(pos + 8));
      header = 16;
    } else if (size === 0) size = end - pos;
    if (size < header || pos + size > end) break;
    out.push({ type, start: pos + header, end: pos + size });
    pos += size;
  }
  return out;
}
