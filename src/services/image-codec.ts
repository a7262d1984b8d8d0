import { PhotonImage, SamplingFilter, crop, resize } from "@cf-wasm/photon";

// Decoding, scaling and encoding of GIF, JPEG and PNG images inside the Worker, with Photon
// (@cf-wasm/photon: the photon-rs image library compiled to WebAssembly, packaged for workerd).
// The same code runs in production and in the Workers test pool; docs/contract-choices/files.md says
// why this and not the Images binding.
//
// Photon keeps one WebAssembly instance per isolate, and its linear memory only grows: decoding an
// image takes about 11 bytes per pixel at the peak (the decoded pixels and two RGBA copies), and
// that memory stays with the isolate (128 MB in all). So nothing larger than MAX_DECODE_PIXELS is
// ever decoded: 6 megapixels, about 66 MB at the peak.

export const MAX_DECODE_PIXELS = 6_000_000;

/** The image types decoded here, and the type each is written back as (Photon writes no GIF). */
const OUTPUT: Record<string, "image/png" | "image/jpeg"> = { "image/png": "image/png", "image/jpeg": "image/jpeg", "image/gif": "image/png" };
const JPEG_QUALITY = 85;

export interface EncodedImage {
  bytes: Uint8Array<ArrayBuffer>;
  mimeType: string;
  width: number;
  height: number;
}

/** Whether an image of this type and size may be decoded. */
export const canDecode = (mimeType: string, width: number, height: number) =>
  mimeType in OUTPUT && width > 0 && height > 0 && width * height <= MAX_DECODE_PIXELS;

/** The largest size of the same aspect ratio within `maxW`×`maxH` (never larger than the image). */
export function fitWithin(width: number, height: number, maxW: number, maxH: number): { width: number; height: number } {
  const s = Math.min(1, maxW / width, maxH / height);
  return { width: Math.max(1, Math.round(width * s)), height: Math.max(1, Math.round(height * s)) };
}

/** Runs `work` on the decoded image and frees every Photon image made on the way (wasm memory is not garbage collected). */
function withDecoded(bytes: Uint8Array, mimeType: string, work: (img: PhotonImage, keep: (i: PhotonImage) => PhotonImage) => PhotonImage): EncodedImage {
  const made: PhotonImage[] = [];
  const keep = (i: PhotonImage) => (made.push(i), i);
  try {
    const out = work(keep(PhotonImage.new_from_byteslice(bytes)), keep);
    const type = OUTPUT[mimeType] ?? "image/png";
    // wasm-bindgen copies the bytes out into a plain ArrayBuffer.
    const encoded = (type === "image/jpeg" ? out.get_bytes_jpeg(JPEG_QUALITY) : out.get_bytes()) as Uint8Array<ArrayBuffer>;
    return { bytes: encoded, mimeType: type, width: out.get_width(), height: out.get_height() };
  } finally {
    for (const i of made) i.free();
  }
}

/** The image scaled to exactly `width`×`height`. */
export function scaleTo(bytes: Uint8Array, mimeType: string, width: number, height: number): EncodedImage {
  return withDecoded(bytes, mimeType, (img, keep) => keep(resize(img, width, height, SamplingFilter.Triangle)));
}

/**
 * A `size`×`size` square of the image: scaled so that its shorter side is `size` (up or down),
 * then the middle of the longer side cut out. Scaling first keeps the big copy out of the crop.
 */
export function squareOf(bytes: Uint8Array, mimeType: string, size: number): EncodedImage {
  return withDecoded(bytes, mimeType, (img, keep) => {
    const w = img.get_width();
    const h = img.get_height();
    const s = size / Math.min(w, h);
    const sw = Math.max(size, Math.round(w * s));
    const sh = Math.max(size, Math.round(h * s));
    const scaled = keep(resize(img, sw, sh, SamplingFilter.Triangle));
    const x = Math.floor((sw - size) / 2);
    const y = Math.floor((sh - size) / 2);
    return keep(crop(scaled, x, y, x + size, y + size));
  });
}
