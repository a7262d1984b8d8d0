import { base64url, randomToken, timingSafeEqual } from "../auth/crypto";
import { FILE_URLS } from "../config";
import type { Db } from "../db";
import { readOrCreateUrlSecret } from "../stores/file-url-secret";

// Signed file URLs: a `url` carries what it grants (reading one file's content, or one derived
// file's), until when, and an HMAC-SHA256 over that and the content's storage key. Issuing or
// renewing one writes nothing and it is valid at every location at once; the content route
// checks it against the file's current row, so a deleted file or replaced content (a new
// storage key) no longer matches.
//
// Token: `{file id, base 36}.{expiry, unix seconds in base 36}.{signature, base64url}` and, for
// a derived file, `.{derived key}` (last: keys may contain dots).

/** What a URL grants: reading the content of a file (`key` null) or of one of its derived files, until `expiresAt`. */
export interface UrlGrant {
  fileId: number;
  key: string | null;
  expiresAt: number;
}

/** A token as parsed, its signature not yet checked. */
export interface ParsedToken extends UrlGrant {
  signature: string;
}

const SIGNATURE_CHARS = Math.ceil((FILE_URLS.signatureBytes * 4) / 3);
const BASE36 = /^[0-9a-z]{1,12}$/;
const SIGNATURE = new RegExp(`^[A-Za-z0-9_-]{${SIGNATURE_CHARS}}$`);
const DERIVED_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/** The token of a signed grant. */
export function encodeToken(grant: UrlGrant, signature: string): string {
  const base = `${grant.fileId.toString(36)}.${grant.expiresAt.toString(36)}.${signature}`;
  return grant.key === null ? base : `${base}.${grant.key}`;
}

/** The grant a token claims, or null when it is not one of ours in shape. */
export function parseToken(token: string): ParsedToken | null {
  const [id, exp, signature, ...rest] = token.split(".");
  const key = rest.length ? rest.join(".") : null;
  if (!BASE36.test(id) || !BASE36.test(exp ?? "") || !SIGNATURE.test(signature ?? "")) return null;
  if (key !== null && !DERIVED_KEY.test(key)) return null;
  const fileId = parseInt(id, 36);
  const expiresAt = parseInt(exp, 36);
  if (!Number.isSafeInteger(fileId) || !Number.isSafeInteger(expiresAt)) return null;
  return { fileId, key, expiresAt, signature };
}

/**
 * When a URL issued at `at` expires: URLs run in periods of FILE_URLS.lifetimeSeconds from
 * `anchor` (the creation of the file or derived file), and a URL ends with its period. So the
 * same URL comes back on every read until it expires (nothing needs to remember it), and the
 * next read after that gets the next period's. `minRemaining` skips to the next period when
 * less is left.
 */
export function periodExpiry(anchor: number, at: number, minRemaining = 0, lifetime: number = FILE_URLS.lifetimeSeconds): number {
  const periods = Math.max(1, Math.floor((at + minRemaining - anchor) / lifetime) + 1);
  return anchor + periods * lifetime;
}

const enc = new TextEncoder();

/** What the signature covers: the grant, what it allows, and the content it points at now. */
const signedText = (g: UrlGrant, storageKey: string) => `file-url/1\nread\n${g.fileId}\n${g.key ?? ""}\n${g.expiresAt}\n${storageKey}`;

/** The signature of a grant over content stored at `storageKey`. */
export async function signGrant(key: CryptoKey, grant: UrlGrant, storageKey: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", key, enc.encode(signedText(grant, storageKey)));
  return base64url(new Uint8Array(mac, 0, FILE_URLS.signatureBytes));
}

/** Whether a parsed token was signed by us for the content now at `storageKey` (constant-time compare). */
export async function verifyGrant(key: CryptoKey, token: ParsedToken, storageKey: string): Promise<boolean> {
  return timingSafeEqual(await signGrant(key, token, storageKey), token.signature);
}

/** An HMAC-SHA256 key from a secret string. */
export const importSigningKey = (secret: string): Promise<CryptoKey> =>
  crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);

/** Per isolate: the imported signing key for the current secret (importKey is async). */
let cached: { secret: string | undefined; key: Promise<CryptoKey> } | undefined;

/**
 * The key that signs and checks file URLs, kept per isolate: the FILE_URL_SECRET secret when it
 * is set (changing it invalidates every URL issued with the old one: clients re-read the file),
 * else a key generated once and kept in the database (one read per isolate; the first isolate
 * ever also writes it), so a fresh install and the tests need no configuration.
 */
export function signingKey(env: { FILE_URL_SECRET?: string }, db: Db, at: number): Promise<CryptoKey> {
  const secret = env.FILE_URL_SECRET?.trim() || undefined;
  if (cached && cached.secret === secret) return cached.key;
  const key = secret ? importSigningKey(secret) : readOrCreateUrlSecret(db, randomToken(32), at).then(importSigningKey);
  const entry = { secret, key };
  cached = entry;
  // A failed database read is not kept: the next request tries again.
  key.catch(() => {
    if (cached === entry) cached = undefined;
  });
  return key;
}
