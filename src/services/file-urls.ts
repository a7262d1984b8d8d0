import type { Context } from "hono";
import { timingSafeEqual } from "../auth/crypto";
import { FILE_URLS } from "../config";
import { ApiError } from "../http/errors";
import { now } from "../http/time";
import type { Db } from "../db";
import type { AppEnv } from "../http/types";
import { getContentTarget, type FileRow } from "../stores/files";
import { encodeToken, parseToken, periodExpiry, signGrant, signingKey, verifyGrant, type UrlGrant } from "./file-url-signing";

/**
 * Expiring content links (decisions §10). A file's `url` is `{origin}/v1/files/content/{token}`
 * where the token is signed, not stored (./file-url-signing.ts): issuing and renewing URLs
 * writes nothing, and the content route checks the signature, the expiry against the request
 * clock (`now(c)`, so tests move time) and the file's current row. `url_short` is a stable link
 * for public files that redirects to a current `url`.
 */

/** A signed URL of a file's content or of a derived file, as rendered. */
export interface SignedUrl {
  token: string;
  expiresAt: number;
}

/** The signed URLs of a file row: its content's (complete files only) and its derived files' by key. */
export interface FileUrls {
  content?: SignedUrl;
  derived: Record<string, SignedUrl>;
}

/**
 * Signs the current `url`s of files and of their derived files onto the rows (`row.urls`), for
 * rendering: each URL is the one of its period (the same until it expires, then the next), so
 * an expired URL comes back renewed (decisions §10) with no write. `minRemaining` skips to the
 * next period when less than that many seconds are left.
 */
export function signUrls(c: Context<AppEnv>, rows: Pick<FileRow, "file" | "derived" | "urls">[], minRemaining = 0): Promise<void> {
  return signUrlsAt(c.env, c.var.db, now(c), rows, minRemaining);
}

/** `signUrls` outside a request (the stream relay rendering a file event): the clock given. */
export async function signUrlsAt(env: Env, db: Db, at: number, rows: Pick<FileRow, "file" | "derived" | "urls">[], minRemaining = 0): Promise<void> {
  const needed = rows.filter((r) => (r.file.isComplete && r.file.storageKey) || r.derived.length);
  if (!needed.length) return;
  const key = await signingKey(env, db, at);
  const sign = async (grant: UrlGrant, storageKey: string): Promise<SignedUrl> => ({
    token: encodeToken(grant, await signGrant(key, grant, storageKey)),
    expiresAt: grant.expiresAt,
  });
  await Promise.all(
    needed.map(async (row) => {
      const f = row.file;
      const urls: FileUrls = { derived: {} };
      const jobs: Promise<void>[] = [];
      if (f.isComplete && f.storageKey) {
        const grant = { fileId: f.id, key: null, expiresAt: periodExpiry(f.createdAt, at, minRemaining) };
        jobs.push(sign(grant, f.storageKey).then((u) => void (urls.content = u)));
      }
      for (const d of row.derived) {
        const grant = { fileId: f.id, key: d.key, expiresAt: periodExpiry(d.createdAt, at, minRemaining) };
        jobs.push(sign(grant, d.storageKey).then((u) => void (urls.derived[d.key] = u)));
      }
      await Promise.all(jobs);
      row.urls = urls;
    }),
  );
}

export const contentUrl = (origin: string, token: string) => `${origin}/v1/files/content/${token}`;

/** The short link of a public file: stable, not guessable from the id alone. */
export const shortCode = (fileId: number, fileTokenRead: string) => `${fileId.toString(36)}-${fileTokenRead.slice(0, 8)}`;
export const shortUrl = (origin: string, fileId: number, fileTokenRead: string) => `${origin}/v1/f/${shortCode(fileId, fileTokenRead)}`;

/** Parses a short code into the file id and the read-token prefix it must match; null if malformed. */
export function parseShortCode(code: string): { fileId: number; check: string } | null {
  const m = /^([0-9a-z]{1,12})-([A-Za-z0-9_-]{8})$/.exec(code);
  if (!m) return null;
  const fileId = parseInt(m[1], 36);
  return Number.isSafeInteger(fileId) ? { fileId, check: m[2] } : null;
}

export const shortCodeMatches = (check: string, fileTokenRead: string) => timingSafeEqual(check, fileTokenRead.slice(0, 8));

const safeName = (name: string) => name.replace(/[\\"\r\n]/g, "_");

/**
 * Serves the content behind a signed URL: 403 when the token is not ours, has expired, or no
 * longer matches the content (replaced); 404 when the file (or derived file) is gone. One
 * database read (the file's current row). Honours `Range` for audio and video players.
 */
export async function serveContent(c: Context<AppEnv>, token: string): Promise<Response> {
  const claimed = parseToken(token);
  const fresh = "GET /v1/files/{file_id} gives a current 'url'";
  if (!claimed) throw ApiError.forbidden(`this file URL is not valid; ${fresh}`);
  const at = now(c);
  if (claimed.expiresAt <= at) throw ApiError.forbidden(`this file URL has expired; ${fresh}`);
  const [target, key] = await Promise.all([getContentTarget(c.var.db, claimed.fileId, claimed.key), signingKey(c.env, c.var.db, at)]);
  if (!target) throw ApiError.notFound("the file's content no longer exists");
  if (!(await verifyGrant(key, claimed, target.storageKey))) {
    throw ApiError.forbidden(`this file URL is not valid (a wrong signature, or the content was replaced since); ${fresh}`);
  }
  const range = parseRange(c.req.header("range"), target.size);
  const object = c.req.method === "HEAD" ? await c.var.files.head(target.storageKey) : await c.var.files.get(target.storageKey, range ? { range } : undefined);
  if (!object) throw ApiError.notFound("the file's content no longer exists");
  const body = "body" in object ? (object as R2ObjectBody) : null;
  const headers = new Headers();
  headers.set("Content-Type", target.mimeType ?? "application/octet-stream");
  headers.set("Content-Disposition", `inline; filename="${safeName(target.name)}"; filename*=UTF-8''${encodeURIComponent(target.name)}`);
  headers.set("Cache-Control", `private, max-age=${Math.min(FILE_URLS.cacheMaxAgeSeconds, claimed.expiresAt - at)}`);
  headers.set("Accept-Ranges", "bytes");
  headers.set("X-Content-Type-Options", "nosniff");
  if (target.sha256) headers.set("ETag", `"${target.sha256}"`);
  if (range) {
    headers.set("Content-Range", `bytes ${range.offset}-${range.offset + range.length - 1}/${target.size}`);
    headers.set("Content-Length", String(range.length));
    return new Response(body?.body ?? null, { status: 206, headers });
  }
  headers.set("Content-Length", String(object.size));
  return new Response(body?.body ?? null, { status: 200, headers });
}

/**
 * A single satisfiable `bytes=` range (`a-b`, `a-` or `-n`) as offset and length; anything else
 * (several ranges, junk, out of bounds) is ignored and the whole content served, as HTTP allows.
 */
export function parseRange(header: string | undefined, size: number): { offset: number; length: number } | null {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === "" && m[2] === "") || size === 0) return null;
  if (m[1] === "") {
    const length = Math.min(Number(m[2]), size);
    return length > 0 ? { offset: size - length, length } : null;
  }
  const offset = Number(m[1]);
  const last = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  return offset < size && last >= offset ? { offset, length: last - offset + 1 } : null;
}
