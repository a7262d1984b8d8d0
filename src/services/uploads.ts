import { randomToken } from "../auth/crypto";
import { ApiError } from "../http/errors";

/**
 * Reading upload bodies without holding more than the limit: the declared Content-Length is
 * checked before anything is read, and a body without one is counted as it streams in.
 */

const tooLarge = (limit: number, what: string) => new ApiError(413, `${what} is larger than ${limit} bytes`);

/** The whole body, at most `limit` bytes (413 beyond, before reading when Content-Length says so). */
export async function readBody(req: Request, limit: number, what = "the request body"): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit, what);
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit, what);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const ch of chunks) {
    out.set(ch, at);
    at += ch.byteLength;
  }
  return out;
}

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  /** A view into the body: parts are not copied. */
  data: Uint8Array;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Where `needle` first occurs in `hay` at or after `from`, or -1. */
export function indexOf(hay: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0];
  for (let i = hay.indexOf(first, from); i !== -1 && i + needle.length <= hay.length; i = hay.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

/**
 * Parses a multipart/form-data body (RFC 7578) into its parts, keyed by field name (the first
 * part of a name wins). File parts stay views into the body, so a large upload is held once.
 */
export function parseMultipart(body: Uint8Array, contentType: string): Map<string, Part> {
  const delimiter = enc.encode(`--${boundaryOf(contentType)}`);
  const parts = new Map<string, Part>();
  let pos = indexOf(body, delimiter, 0);
  if (pos < 0) throw ApiError.badRequest("malformed multipart body");
  for (;;) {
    pos += delimiter.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break; // closing delimiter "--"
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++;
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a) throw ApiError.badRequest("malformed multipart body");
    pos += 2;
    const headerEnd = indexOf(body, enc.encode("\r\n\r\n"), pos);
    if (headerEnd < 0) throw ApiError.badRequest("malformed multipart body");
    const headers = dec.decode(body.subarray(pos, headerEnd)).split("\r\n");
    const next = indexOf(body, enc.encode(`\r\n${dec.decode(delimiter)}`), headerEnd + 4);
    if (next < 0) throw ApiError.badRequest("malformed multipart body: no closing boundary");
    const part = partHeaders(headers);
    if (part && !parts.has(part.name)) parts.set(part.name, { ...part, data: body.subarray(headerEnd + 4, next) });
    pos = next + 2;
  }
  return parts;
}

/** The boundary of a multipart Content-Type (400 without one). */
export function boundaryOf(contentType: string): string {
  const boundary = /boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  if (!boundary) throw ApiError.badRequest("the multipart body has no boundary");
  return boundary[1] ?? boundary[2];
}

export type PartHeaders = Omit<Part, "data">;

/** Name, file name and type of a part, from its header lines (null without a name). */
export function partHeaders(lines: string[]): PartHeaders | null {
  let name: string | undefined;
  let filename: string | undefined;
  let contentType: string | undefined;
  for (const line of lines) {
    const i = line.indexOf(":");
    if (i < 0) continue;
    const key = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    if (key === "content-disposition") {
      name = param(value, "name");
      const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(value)?.[1];
      filename = star ? safeDecode(star) : param(value, "filename");
    } else if (key === "content-type") contentType = value;
  }
  return name === undefined ? null : { name, filename, contentType };
}

function param(header: string, key: string): string | undefined {
  const m = new RegExp(`(?:^|;)\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, "i").exec(header);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2];
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Text of a non-file field. */
export const partText = (p: Part | undefined) => (p ? dec.decode(p.data) : undefined);

/** A new object key in the R2 bucket for a user's content. */
export const newStorageKey = (userId: number) => `u/${userId}/${randomToken(18)}`;
