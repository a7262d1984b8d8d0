import type { Context } from "hono";
import type { AppEnv } from "../http/types";
import { MORE_LIMITS } from "../config";
import { getFileRow, setDerivedPending, upsertDerived, type DerivedRecord, type FileRecord, type FileRow } from "../stores/files";
import { canDecode, fitWithin, squareOf, scaleTo, type EncodedImage } from "./image-codec";
import { newStorageKey } from "./uploads";

// The reserved derived files of GIF, JPEG and PNG uploads (the reference's "derivative images"):
// `core_image_200s`, a 200×200 thumbnail (the middle square, scaled), and `core_image_960r`, the
// image within 640×960 (scaled down when larger, else a copy of the original). They are made after
// the response (waitUntil): the upload's write sets `derived_pending_since`, the File object shows
// `derived_files_pending: true` until they are written (or for PENDING_SECONDS at most, should the
// work be cut off), and a `file` event carries the file with them. A key the client uploaded itself
// is kept; images over the decode limit (image-codec.ts) get none.

export const THUMBNAIL_KEY = "core_image_200s";
export const FIT_KEY = "core_image_960r";
export const THUMBNAIL_SIZE = 200;
export const FIT_BOX = { width: 640, height: 960 };
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif"]);
/** After this, a pending mark left by work that was cut off no longer shows. */
export const PENDING_SECONDS = 300;

type ImageSize = { width: number; height: number };

const imageSizeOf = (f: Pick<FileRecord, "kind" | "mimeType" | "mediaInfo">): ImageSize | null => {
  const info = f.mediaInfo as Partial<ImageSize> | null;
  if (f.kind !== "image" || !f.mimeType || !IMAGE_TYPES.has(f.mimeType) || !info?.width || !info?.height) return null;
  return { width: info.width, height: info.height };
};

/** The reserved keys the server makes for a file with this content, leaving out keys the file already has. */
export function keysToMake(f: Pick<FileRecord, "kind" | "mimeType" | "mediaInfo">, existing: string[] = []): string[] {
  const size = imageSizeOf(f);
  if (!size || !canDecode(f.mimeType!, size.width, size.height)) return [];
  return [THUMBNAIL_KEY, FIT_KEY].filter((k) => !existing.includes(k));
}

/** Whether the File object says its reserved derived files are still being made. */
export const derivedPending = (f: Pick<FileRecord, "derivedPendingSince">, at: number) =>
  f.derivedPendingSince != null && at - f.derivedPendingSince < PENDING_SECONDS;

/**
 * Makes the reserved derived files of a just completed file after the response. `onDone` gets the
 * file as it is then (to publish it). Failures are logged; the pending mark is cleared either way.
 */
export function makeDerivedLater(c: Context<AppEnv>, fileId: number, onDone: (row: FileRow) => Promise<void> | void): void {
  const db = c.var.db;
  c.executionCtx.waitUntil(
    (async () => {
      try {
        const row = await getFileRow(db, fileId, null);
        if (!row) return;
        const made = await makeDerived(c, row);
        await setDerivedPending(db, fileId, null);
        if (made) {
          const after = await getFileRow(db, fileId, null);
          if (after) await onDone(after);
        }
      } catch (e) {
        console.error(JSON.stringify({ msg: "derived images not made", fileId, error: String(e) }));
        await setDerivedPending(db, fileId, null).catch(() => {});
      }
    })(),
  );
}

/** Makes and stores the missing reserved derived files of `row`; whether any was written. */
async function makeDerived(c: Context<AppEnv>, row: FileRow): Promise<boolean> {
  const f = row.file;
  const keys = keysToMake(
    f,
    row.derived.map((d) => d.key),
  );
  if (!keys.length || !f.storageKey) return false;
  const object = await c.var.files.get(f.storageKey);
  if (!object) return false;
  const original = new Uint8Array(await object.arrayBuffer()) as Uint8Array<ArrayBuffer>;
  const size = imageSizeOf(f)!;
  let written = false;
  for (const key of keys) {
    const image = key === THUMBNAIL_KEY ? squareOf(original, f.mimeType!, THUMBNAIL_SIZE) : fitted(original, f.mimeType!, size);
    written = (await store(c, f, key, image)) || written;
  }
  return written;
}

/** `core_image_960r`: scaled down into 640×960, or the original bytes when they already fit. */
function fitted(original: Uint8Array<ArrayBuffer>, mimeType: string, size: ImageSize): EncodedImage {
  const fit = fitWithin(size.width, size.height, FIT_BOX.width, FIT_BOX.height);
  if (fit.width === size.width && fit.height === size.height) return { bytes: original, mimeType, ...size };
  return scaleTo(original, mimeType, fit.width, fit.height);
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Stores one derived image like an uploaded one (counted in the owner's storage); false when it does not fit or the key was taken meanwhile. */
async function store(c: Context<AppEnv>, f: FileRecord, key: string, image: EncodedImage): Promise<boolean> {
  const storageKey = newStorageKey(f.userId);
  await c.var.files.put(storageKey, image.bytes, { httpMetadata: { contentType: image.mimeType } });
  const ext = image.mimeType === "image/jpeg" ? "jpg" : image.mimeType === "image/gif" ? "gif" : "png";
  const record: DerivedRecord = {
    fileId: f.id,
    key,
    name: `${key}.${ext}`,
    mimeType: image.mimeType,
    size: image.bytes.length,
    sha256: await sha256Hex(image.bytes),
    storageKey,
    imageInfo: { width: image.width, height: image.height },
    createdAt: Math.floor(Date.now() / 1000),
  };
  const ok = await upsertDerived(c.var.db, f, record, undefined, { quota: MORE_LIMITS.storageQuotaBytes, maxDerived: MORE_LIMITS.derivedFilesPerFile });
  if (!ok) await c.var.files.delete(storageKey).catch(() => {});
  return ok;
}
