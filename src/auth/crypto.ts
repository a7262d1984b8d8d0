const enc = new TextEncoder();

const hex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");

/** Bytes as unpadded base64url (RFC 4648 §5): URL-safe as they are. */
export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** A random URL-safe secret (access tokens, client secrets, resource tokens). */
export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** SHA-256 hex: how tokens and secrets are stored. */
export async function sha256Hex(value: string | ArrayBuffer | Uint8Array): Promise<string> {
  const data = typeof value === "string" ? enc.encode(value) : value;
  return hex(await crypto.subtle.digest("SHA-256", data));
}

/** Per isolate (see bearerHash): digests of recently seen bearer tokens. */
const tokenHashes = new Map<string, string>();

/**
 * The SHA-256 of a bearer token, as stored. Kept per isolate for the tokens it saw recently: the
 * limiter and authentication both need it on every request, and a digest is an async round
 * through WebCrypto.
 */
export async function bearerHash(token: string): Promise<string> {
  let hash = tokenHashes.get(token);
  if (hash === undefined) {
    hash = await sha256Hex(token);
    if (tokenHashes.size >= 10_000) tokenHashes.clear();
    tokenHashes.set(token, hash);
  }
  return hash;
}

/** The most Workers' WebCrypto allows, and the default. */
const MAX_PBKDF2_ITERATIONS = 100_000;

/**
 * Password hash as `pbkdf2$iterations$salt$hash`. The cost comes from the PASSWORD_ITERATIONS
 * variable (default and maximum 100,000; the test runner lowers it so that hundreds of test
 * users do not dominate the suite's time); verification reads it back from the hash.
 */
export async function hashPassword(password: string, configured?: string): Promise<string> {
  const n = Number(configured);
  const iterations = Number.isInteger(n) && n >= 1 && n <= MAX_PBKDF2_ITERATIONS ? n : MAX_PBKDF2_ITERATIONS;
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await pbkdf2(password, salt, iterations);
  return `pbkdf2$${iterations}$${hex(salt.buffer)}$${hash}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iterations, saltHex, expected] = stored.split("$");
  if (scheme !== "pbkdf2" || !saltHex || !expected) return false;
  const salt = new Uint8Array(saltHex.match(/../g)!.map((h) => parseInt(h, 16)));
  return timingSafeEqual(await pbkdf2(password, salt, Number(iterations)), expected);
}

/** Constant-time comparison of two strings of hex or secrets. */
export function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

async function pbkdf2(password: string, salt: Uint8Array, iterations: number): Promise<string> {
  const key = await crypto.subtle.importKey("raw", enc.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, 256);
  return hex(bits);
}
