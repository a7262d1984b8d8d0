import type { Context } from "hono";
import { randomToken } from "../auth/crypto";
import { ApiError } from "../http/errors";
import type { AppEnv } from "../http/types";
import type { ImageKind, StoredImage } from "../stores/profile";
import { canDecode, fitWithin, scaleTo, MAX_DECODE_PIXELS } from "./image-codec";
import { detect, imageInfo } from "./media";
import { parseMultipart, readBody } from "./uploads";

// Avatar and cover images: read from a multipart upload or downloaded from `from_url`, checked
// with the image rules of files (the type is read from the bytes), stored in R2 under `images/`
// and served (immutable) by GET /v1/images/{key}.

const MiB = 1024 * 1024;

/** The rules of each image (the public reference's profile endpoints). */
export const IMAGE_RULES: Record<ImageKind, { maxBytes: number; minWidth: number; minHeight: number; describe: string }> = {
  avatar: { maxBytes: 2 * MiB, minWidth: 1, minHeight: 1, describe: "a JPEG, PNG or GIF image smaller than 2 MiB" },
  cover: { maxBytes: 4 * MiB, minWidth: 960, minHeight: 223, describe: "a JPEG, PNG or GIF image smaller than 4 MiB, at least 960 px wide and 223 px high" },
};

const FORMATS = new Set(["png", "jpeg", "gif"]);
/** Room for the other parts and headers of a multipart upload. */
export const IMAGE_MULTIPART_OVERHEAD = 16 * 1024;
const IMAGE_PREFIX = "images/";

/** The bytes of an upload: the multipart part named after the image, or the image at a JSON body's `from_url`. */
async function uploadedBytes(c: Context<AppEnv>, kind: ImageKind): Promise<Uint8Array> {
  const limit = IMAGE_RULES[kind].maxBytes;
  const type = c.req.header("content-type") ?? "";
  if (/^multipart\/form-data\b/i.test(type)) {
    const parts = parseMultipart(await readBody(c.req.raw, limit + IMAGE_MULTIPART_OVERHEAD, `the ${kind} upload`), type);
    const part = parts.get(kind);
    if (!part) throw ApiError.badRequest(`'${kind}' is required: a file part with the image`);
    return part.data;
  }
  if (/^application\/json\b/i.test(type)) {
    const text = new TextDecoder().decode(await readBody(c.req.raw, 16 * 1024));
    let body: unknown;
    try {
      body = JSON.parse(text || "{}");
    } catch {
      throw ApiError.badRequest("malformed JSON in request body");
    }
    const url = body && typeof body === "object" ? (body as { from_url?: unknown }).from_url : undefined;
    if (typeof url !== "string") throw ApiError.badRequest("'from_url' is required: the URL of an image to download");
    return download(url, limit);
  }
  throw new ApiError(415, `this endpoint takes multipart/form-data (a file part '${kind}') or application/json (with 'from_url')`);
}

/** Downloads a public http(s) image, at most `limit` bytes. */
async function download(url: string, limit: number): Promise<Uint8Array> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw ApiError.badRequest("'from_url' must be an absolute http or https URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw ApiError.badRequest("'from_url' must be an absolute http or https URL");
  let res: Response;
  try {
    res = await fetch(parsed.toString(), { redirect: "follow", headers: { Accept: "image/*" } });
  } catch {
    throw ApiError.badRequest("'from_url' could not be downloaded");
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw ApiError.badRequest(`'from_url' could not be downloaded (HTTP ${res.status})`);
  }
  try {
    return await readBody(res as unknown as Request, limit, "the image at 'from_url'");
  } catch (e) {
    if (e instanceof ApiError) throw ApiError.badRequest(`the image at 'from_url' is larger than ${limit} bytes`);
    throw ApiError.badRequest("'from_url' could not be downloaded");
  }
}

/**
 * Reads, checks and stores an uploaded avatar or cover. An image of the wrong type, size or
 * dimensions is a 400 naming the field (413 for an upload over the limit).
 */
export async function storeProfileImage(c: Context<AppEnv>, kind: ImageKind, origin: string): Promise<NonNullable<StoredImage>> {
  const rules = IMAGE_RULES[kind];
  const bytes = await uploadedBytes(c, kind);
  if (!bytes.length) throw ApiError.badRequest(`'${kind}' is empty`);
  if (bytes.length >= rules.maxBytes) throw new ApiError(413, `'${kind}' must be ${rules.describe}`);
  const found = await detect(bytes);
  if (!found.format || !FORMATS.has(found.format)) throw ApiError.badRequest(`'${kind}' must be ${rules.describe}; the content is ${found.mime}`);
  const { width, height } = imageInfo(bytes, found.mime);
  if (width < rules.minWidth || height < rules.minHeight) {
    throw ApiError.badRequest(`'${kind}' must be ${rules.describe}; the image is ${width}x${height} px`);
  }
  // Larger images could not be scaled for `w`/`h` (image-codec.ts).
  if (width * height > MAX_DECODE_PIXELS) {
    throw ApiError.badRequest(`'${kind}' must be at most ${MAX_DECODE_PIXELS / 1e6} megapixels; the image is ${width}x${height} px`);
  }
  const key = randomToken(18);
  await c.var.files.put(IMAGE_PREFIX + key, bytes, { httpMetadata: { contentType: found.mime } });
  return { url: `${origin}/v1/images/${key}`, width, height };
}

/** The R2 key of an image URL this server issued (null for any other URL). */
function keyOf(url: string | null): string | null {
  const m = url ? /\/v1\/images\/([A-Za-z0-9_-]{1,64})$/.exec(url) : null;
  return m ? IMAGE_PREFIX + m[1] : null;
}

/** Removes a replaced image's content and its scaled copies after the response (a failure only leaves unreferenced objects). */
export function discardProfileImage(c: Context<AppEnv>, url: string | null): void {
  const key = keyOf(url);
  if (!key) return;
  const removeAll = async () => {
    await c.var.files.delete(key);
    let cursor: string | undefined;
    do {
      const page = await c.var.files.list({ prefix: `${key}/`, cursor });
      if (page.objects.length) await c.var.files.delete(page.objects.map((o) => o.key));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  };
  c.executionCtx.waitUntil(removeAll().catch((e) => console.error(JSON.stringify({ msg: "replaced profile image not removed", key, error: String(e) }))));
}

/**
 * An image's R2 object, for GET /v1/images/{key}: as stored, or scaled down to width `w` (else
 * height `h`; the aspect kept, never larger than stored). A scaled image is made once and stored
 * beside the original under the size asked (`images/{key}/w{w}` or `h{h}`, removed with it), so a
 * repeated request is one R2 read; an image over the decode limit is served as stored.
 */
export async function readProfileImage(c: Context<AppEnv>, key: string, size: { w?: number; h?: number } = {}) {
  const scaledKey = size.w ? `${IMAGE_PREFIX}${key}/w${size.w}` : size.h ? `${IMAGE_PREFIX}${key}/h${size.h}` : null;
  const cached = scaledKey ? await c.var.files.get(scaledKey) : null;
  if (cached) return cached;
  const original = await c.var.files.get(IMAGE_PREFIX + key);
  if (!original || !scaledKey) return original;
  const bytes = new Uint8Array(await original.arrayBuffer());
  const mime = original.httpMetadata?.contentType ?? "";
  const stored = { body: bytes, httpEtag: original.httpEtag, httpMetadata: original.httpMetadata };
  const { width, height } = imageInfo(bytes, mime);
  const target = size.w ? fitWithin(width, height, size.w, Infinity) : fitWithin(width, height, Infinity, size.h!);
  if ((target.width === width && target.height === height) || !canDecode(mime, width, height)) return stored;
  const scaled = scaleTo(bytes, mime, target.width, target.height);
  const put = await c.var.files.put(scaledKey, scaled.bytes, { httpMetadata: { contentType: scaled.mimeType } });
  return { body: scaled.bytes, httpEtag: put.httpEtag, httpMetadata: { contentType: scaled.mimeType } };
}
