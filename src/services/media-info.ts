import { imageSize } from "image-size";
import { parseBuffer, parseWebStream } from "music-metadata";
import { UPLOAD_STREAMING } from "../config";
import { ApiError } from "../http/errors";
import { bufferSource, type ContentSource } from "./content-source";
import type { Detected, Kind } from "./media";
import { mp4Moov, readMp4 } from "./mp4";

// Media information of uploaded content: image sizes from its first bytes, durations and
// bitrates read through the content as a stream (never a buffer of a whole large file).

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

/** Image size from the first bytes, or from further in when they are not enough (large EXIF or ICC blocks). */
export async function imageInfoOf(src: ContentSource, mime = "an image"): Promise<ImageInfo> {
  try {
    return imageInfo(src.head, mime);
  } catch (e) {
    if (src.head.length >= src.size) throw e;
    return imageInfo(await src.range(0, UPLOAD_STREAMING.imageProbeBytes), mime);
  }
}

/** audio_info / image_info / video_info of content of a table type; null for kind `other`. */
export async function mediaInfo(kind: Kind, mimeType: string, d: Detected, content: Uint8Array | ContentSource): Promise<MediaInfo | null> {
  const src = content instanceof Uint8Array ? bufferSource(content) : content;
  if (kind === "image") return imageInfoOf(src, mimeType);
  if (kind === "other") return null;
  const mp4 = d.format === "mp4" ? async () => readMp4((await mp4Moov(src)) ?? new Uint8Array(0)) : async () => null;
  if (kind === "video" && d.format === "mp4") {
    const info = await mp4();
    if (!info || !info.video || info.duration == null) throw unreadable(mimeType);
    return timed(info.duration, null, src.size, { width: info.video.width, height: info.video.height });
  }
  const fileInfo = { mimeType: mimeType === "video/mpeg" ? "video/mp4" : mimeType, size: src.size };
  const options = { duration: true, skipCovers: true };
  let meta: Awaited<ReturnType<typeof parseBuffer>> | null;
  try {
    // Content held whole is parsed as a buffer; larger content streams through the parser.
    meta = src.head.length >= src.size ? await parseBuffer(src.head, fileInfo, options) : await parseWebStream(await src.stream(), fileInfo, options);
  } catch {
    meta = null;
  }
  let duration = meta?.format.duration;
  // An MP4 recorded as audio may hold video tracks music-metadata does not time: read `mvhd`.
  if ((duration == null || !Number.isFinite(duration)) && d.format === "mp4") duration = (await mp4())?.duration ?? undefined;
  if (!meta || duration == null || !Number.isFinite(duration)) throw unreadable(mimeType);
  if (kind === "audio") return timed(duration, meta.format.bitrate ?? null, src.size);
  const video = meta.format.trackInfo.find((t) => t.video?.pixelWidth && t.video?.pixelHeight)?.video;
  if (!video) throw unreadable(mimeType);
  return timed(duration, meta.format.bitrate ?? null, src.size, { width: video.pixelWidth!, height: video.pixelHeight! });
}

function timed(duration: number, bitrate: number | null, size: number, dims?: ImageInfo): AudioInfo | VideoInfo {
  const kbps = bitrate && Number.isFinite(bitrate) ? bitrate / 1000 : duration > 0 ? (size * 8) / duration / 1000 : 0;
  return { duration: Math.round(duration), duration_string: durationString(duration), bitrate: Math.round(kbps), ...dims };
}
