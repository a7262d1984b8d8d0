import chardet from "chardet";
import { fileTypeFromBuffer } from "file-type";
import { ApiError } from "../http/errors";
import { bufferSource, type ContentSource } from "./content-source";
import { mp4Moov, readMp4 } from "./mp4";

export { readMp4 } from "./mp4";
export { durationString, imageInfo, imageInfoOf, mediaInfo, type AudioInfo, type ImageInfo, type MediaInfo, type VideoInfo } from "./media-info";

/**
 * Mime types, kinds and media information of uploaded content (api.md "Mime types" rules 1–7).
 * Everything is decided from the content's bytes (file-type, chardet; MP4 boxes in mp4.ts; media
 * information in media-info.ts), never from a file name.
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

const sourceOf = (content: Uint8Array | ContentSource) => (content instanceof Uint8Array ? bufferSource(content) : content);

/**
 * Detects the type of content from its first bytes (an MP4's tracks from its `moov` box,
 * wherever it is). Unknown binary is `application/octet-stream`.
 */
export async function detect(content: Uint8Array | ContentSource): Promise<Detected> {
  const src = sourceOf(content);
  const bytes = src.head;
  const found = bytes.length ? await fileTypeFromBuffer(bytes) : undefined;
  const format = found ? (FORMAT_OF[found.mime] ?? null) : null;
  if (format === "mp4") {
    const moov = await mp4Moov(src);
    const hasVideo = (moov && readMp4(moov)?.hasVideo) ?? found!.mime.startsWith("video/");
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
export async function resolveType(input: TypeInput, content: Uint8Array | ContentSource): Promise<{ kind: Kind; mimeType: string; detected: Detected }> {
  const src = sourceOf(content);
  const field = input.mimeField ?? "mime_type";
  const given = input.mimeType !== undefined ? normalizeMime(input.mimeType, field) : undefined;
  const detected = await detect(src);
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
  const charset = isTextType(base) ? (detectCharset(src.head, src.size) ?? given?.charset) : undefined;
  return { kind, mimeType: charset ? `${base}; charset=${charset}` : base, detected };
}

/** Text encoding of content (rule 7) from its first bytes, lowercase, e.g. `utf-8`; null when it cannot tell. */
export function detectCharset(bytes: Uint8Array, size = bytes.length): string | null {
  if (!bytes.length) return null;
  const sample = bytes.subarray(0, 64 * 1024);
  try {
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(sample.length < size ? trimUtf8(sample) : sample);
    return "utf-8";
  } catch {
    const guess = chardet.detect(sample);
    return guess ? guess.toLowerCase() : null;
  }
}

/** Drops a UTF-8 sequence cut at the end of a sample, so a valid file is not misjudged. */
function trimUtf8(b: Uint8Array): Uint8Array {
  const end = b.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const byte = b[end - i];
    if ((byte & 0xc0) === 0xc0) return b.subarray(0, end - i); // lead byte of a cut sequence
    if ((byte & 0x80) === 0) break;
  }
  return b;
}
