import { UPLOAD_STREAMING } from "../config";
import type { ContentSource } from "./content-source";

// MP4 / QuickTime boxes: durations, track kinds and video sizes, read from the `moov` box.

interface ImageSize {
  width: number;
  height: number;
}

export interface Mp4Info {
  duration: number | null;
  hasVideo: boolean;
  video: ImageSize | null;
}

/** Reads `moov/mvhd` (duration) and each `trak`'s `tkhd` (size) and `mdia/hdlr` (track kind). */
export function readMp4(bytes: Uint8Array): Mp4Info | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const moov = boxes(view, 0, bytes.length).find((b) => b.type === "moov");
  if (!moov) return null;
  let duration: number | null = null;
  let video: ImageSize | null = null;
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

/**
 * The `moov` box of MP4 content (with its header), found by walking the top-level boxes with
 * reads of their headers only, so `mdat` is never read; null when there is none (or it is
 * larger than `UPLOAD_STREAMING.mp4MoovMaxBytes`). `readMp4` reads the result.
 */
export async function mp4Moov(src: ContentSource): Promise<Uint8Array | null> {
  let pos = 0;
  for (let i = 0; i < 64 && pos + 8 <= src.size; i++) {
    const header = await src.range(pos, 16);
    if (header.length < 8) return null;
    const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
    let size = view.getUint32(0);
    if (size === 1) size = header.length >= 16 ? Number(view.getBigUint64(8)) : 0;
    else if (size === 0) size = src.size - pos;
    if (size < 8) return null;
    if (fourcc(view, 4) === "moov") return size > UPLOAD_STREAMING.mp4MoovMaxBytes ? null : src.range(pos, size);
    pos += size;
  }
  return null;
}
