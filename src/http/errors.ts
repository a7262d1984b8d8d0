import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The closed list of error statuses the API answers with (decisions §1). */
const REASONS = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  507: "Insufficient Storage",
} as const;

export type ErrorCode = keyof typeof REASONS;

/** An error that becomes the envelope `{meta: {code, error_message}}` with HTTP status `code`. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    detail?: string,
    readonly extraMeta: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ? `${REASONS[code]}: ${detail}` : REASONS[code]);
  }

  get status(): ContentfulStatusCode {
    return this.code as ContentfulStatusCode;
  }

  static badRequest = (detail: string) => new ApiError(400, detail);
  static unauthorized = (detail = "a valid access token is required") => new ApiError(401, detail);
  static forbidden = (detail: string) => new ApiError(403, detail);
  static notFound = (detail = "no such object") => new ApiError(404, detail);
}

/** The realm of the `WWW-Authenticate` challenges (RFC 9110 §11.6.1: every 401 carries one). */
export const AUTH_REALM = "api";

/**
 * The challenge of a 401 from a Bearer-token endpoint (RFC 6750 §3): `error="invalid_token"`
 * only when the request sent a token, since a request without one gets no error code.
 */
export const bearerChallenge = (tokenSent: boolean) => `Bearer realm="${AUTH_REALM}"` + (tokenSent ? `, error="invalid_token"` : "");

/** The challenge of a 401 from the OAuth token endpoint: client authentication is HTTP Basic (RFC 6749 §2.3.1). */
export const BASIC_CHALLENGE = `Basic realm="${AUTH_REALM}"`;

/** Message naming the field for a failed zod validation, e.g. `'count' expected number`. */
export function describeIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `'${i.path.map(printable).join(".")}' ${lower(i.message)}` : lower(i.message)))
    .join("; ");
}

const lower = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
/** A field name as shown in an error: a NUL or an unpaired surrogate (a key that is itself bad text) as `?`, at most 64 characters. */
export const printable = (k: PropertyKey) =>
  String(k)
    .replace(/[\u0000\p{Cs}]/gu, "?")
    .slice(0, 64);
