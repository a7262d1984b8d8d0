import type { Context } from "hono";
import { randomToken, timingSafeEqual } from "../auth/crypto";
import { ApiError } from "../http/errors";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import { saveUrlTokens, type FileRow } from "../stores/files";

/**
 * Expiring content links (decisions §10). A file's `url` is `{origin}/v1/files/content/{token}`;
 * the token lives in KV (`file-url:{token}`) with what it serves and when it expires. The
 * content route compares that recorded expiry with the request clock (`now(c)`, so tests move
 * time); the KV TTL only cleans up. `url_short` is a stable link for public files that
 * redirects to a fresh `url`.
 */

/** How long a `url` serves its content. */
export const FILE_URL_LIFETIME_SECONDS = 60 * 60;
/** KV keeps an entry a little past its expiry (and never less than KV's minimum of 60 s). */
const KV_GRACE_SECONDS = 60;

const kvKey = (token: string) => `file-url:${token}`;

/** What a URL token serves. */
export interface UrlTarget {
  storageKey: string;
  mimeType: string | null;
  name: string;
  sha256: string | null;
  size: number;
}

interface StoredTarget extends UrlTarget {
  expiresAt: number;
}

export interface IssuedUrl {
  token: string;
  expiresAt: number;
}

/** Issues a new URL token for content, valid from `at` for FILE_URL_LIFETIME_SECONDS. */
export async function issueUrl(kv: KVNamespace, target: UrlTarget, at: number): Promise<IssuedUrl> {
  const token = randomToken(24);
  const expiresAt = at + FILE_URL_LIFETIME_SECONDS;
  const value: StoredTarget = { ...target, expiresAt };
  await kv.put(kvKey(token), JSON.stringify(value), { expirationTtl: Math.max(60, FILE_URL_LIFETIME_SECONDS + KV_GRACE_SECONDS) });
  return { token, expiresAt };
}

/** Forgets URL tokens (content deleted or replaced); best effort, the TTL cleans up anyway. */
export async function revokeUrls(kv: KVNamespace, tokens: (string | null | undefined)[]): Promise<void> {
  await Promise.all(tokens.filter((t): t is string => !!t).map((t) => kv.delete(kvKey(t)).catch(() => {})));
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
 * Serves the content behind a URL token: 403 once the token has expired (or is unknown),
 * 404 if the content is gone. Honours `Range` for audio and video players.
 */
export async function serveContent(c: Context<AppEnv>, token: string): Promise<Response> {
  const raw = /^[A-Za-z0-9_-]{16,64}$/.test(token) ? await c.env.KV.get(kvKey(token)) : null;
  const target = raw ? (JSON.parse(raw) as StoredTarget) : null;
  const at = now(c);
  if (!target || target.expiresAt <= at) {
    throw ApiError.forbidden("this file URL has expired; GET /v1/files/{file_id} gives a fresh 'url'");
  }
  const range = parseRange(c.req.header("range"), target.size);
  const object = c.req.method === "HEAD" ? await c.env.FILES.head(target.storageKey) : await c.env.FILES.get(target.storageKey, range ? { range } : undefined);
  if (!object) throw ApiError.notFound("the file's content no longer exists");
  const body = "body" in object ? (object as R2ObjectBody) : null;
  const headers = new Headers();
  headers.set("Content-Type", target.mimeType ?? "application/octet-stream");
  headers.set("Content-Disposition", `inline; filename="${safeName(target.name)}"; filename*=UTF-8''${encodeURIComponent(target.name)}`);
  headers.set("Cache-Control", `private, max-age=${Math.max(0, target.expiresAt - at)}`);
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

/**
 * Renews the expired `url`s of files and of their derived files (decisions §10: GET renews an
 * expired url and every embedded reference), in place: new KV tokens in parallel, one
 * database batch. `minRemaining` renews URLs with less than that many seconds left.
 */
export async function renewExpiredUrls(c: Context<AppEnv>, rows: FileRow[], minRemaining = 0): Promise<void> {
  const at = now(c);
  const stale = (token: string | null, expiresAt: number | null) => !token || expiresAt == null || expiresAt - at <= minRemaining;
  const updates: { fileId: number; key: string | null; token: string; expiresAt: number }[] = [];
  const jobs: Promise<void>[] = [];
  for (const row of rows) {
    const f = row.file;
    if (f.isComplete && f.storageKey && stale(f.urlToken, f.urlExpiresAt)) {
      const target = { storageKey: f.storageKey, mimeType: f.mimeType, name: f.name, sha256: f.sha256, size: f.size };
      jobs.push(
        issueUrl(c.env.KV, target, at).then((u) => {
          f.urlToken = u.token;
          f.urlExpiresAt = u.expiresAt;
          updates.push({ fileId: f.id, key: null, ...u });
        }),
      );
    }
    for (const d of row.derived) {
      if (!stale(d.urlToken, d.urlExpiresAt)) continue;
      const target = { storageKey: d.storageKey, mimeType: d.mimeType, name: d.name, sha256: d.sha256, size: d.size };
      jobs.push(
        issueUrl(c.env.KV, target, at).then((u) => {
          d.urlToken = u.token;
          d.urlExpiresAt = u.expiresAt;
          updates.push({ fileId: f.id, key: d.key, ...u });
        }),
      );
    }
  }
  await Promise.all(jobs);
  await saveUrlTokens(c.var.db, updates);
}
