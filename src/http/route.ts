import { OpenAPIHono, createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { requireAccess, type Access } from "../auth/access";
import { BODY_LIMITS, IDEMPOTENCY } from "../config";
import { limitBody } from "./body-limit";
import { assertCleanInput } from "./clean-text";
import { ApiError, describeIssues } from "./errors";
import { errorExamples, operationErrorExamples, requestExamples } from "./examples";
import type { AppEnv } from "./types";

/**
 * A router for one resource; validation failures become 400 envelopes naming the field, and so
 * does text with a NUL or an unpaired surrogate anywhere in a validated body or query (src/http/clean-text.ts).
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw ApiError.badRequest(describeIssues(result.error.issues));
      if (result.target !== "header" && result.target !== "cookie") assertCleanInput(result.data);
    },
  });
}

/** 415 for a JSON endpoint called without `Content-Type: application/json`. */
export const requireJson: MiddlewareHandler<AppEnv> = async (c, next) => {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError(415, "this endpoint takes a JSON body with 'Content-Type: application/json'");
  }
  await next();
};

/** As `requireJson`, for an optional JSON body: a request without a body passes. */
export const requireJsonIfBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  const hasBody =
    c.req.header("content-type") !== undefined || Number(c.req.header("content-length") ?? 0) > 0 || c.req.header("transfer-encoding") !== undefined;
  return hasBody ? requireJson(c, next) : next();
};

type RouteInput = Omit<RouteConfig, "middleware" | "security"> & {
  operationId?: string;
  /** Largest request body in bytes (default `BODY_LIMITS.json`); routes that take files declare theirs. */
  bodyLimit?: number;
};

/**
 * Declares a route: its OpenAPI description, validation schemas, who may call it and how large
 * its body may be. The body limit, the access rule and the JSON content-type check run as route
 * middleware before validation (so no body is parsed past its limit).
 * What every operation of the document has is added here: a stable `operationId` (from the
 * method and path unless given), `security` from the access rule, the 429 and the rate-limit
 * headers, and a `default` error response where no 2xx exists (WebSocket upgrades, redirects).
 */
export function defineRoute<const R extends RouteInput>(access: Access, { bodyLimit, ...r }: R) {
  const body = r.request?.body?.content;
  const jsonOnly = !!body && Object.keys(body).length === 1 && "application/json" in body;
  const limit = bodyLimit ?? BODY_LIMITS.json;
  const jsonCheck = r.request?.body?.required === false ? requireJsonIfBody : requireJson;
  const middleware: MiddlewareHandler<AppEnv>[] = [limitBody(limit), requireAccess(access), ...(jsonOnly ? [jsonCheck] : [])];
  const keyed = takesIdempotencyKey(access, r.method, r.path);
  const operationId = r.operationId ?? operationIdFor(r.method, r.path);
  return createRoute({
    ...r,
    ...(r.request?.body ? { request: { ...r.request, body: withExamples(r.request.body, operationId) } } : {}),
    operationId,
    middleware,
    security: securityFor(access, r.path),
    ...(keyed ? { parameters: [...(r.parameters ?? []), { $ref: "#/components/parameters/IdempotencyKey" }] } : {}),
    responses: standardResponses(access, r.path, { ...r.responses, ...(keyed ? { 409: IDEMPOTENCY_CONFLICT } : {}) }, operationId),
    "x-access": access,
    "x-body-limit": limit,
  } as Omit<R, "bodyLimit"> & { middleware: MiddlewareHandler<AppEnv>[] });
}

type RequestBody = NonNullable<NonNullable<RouteInput["request"]>["body"]>;

/**
 * The body's media types with the operation's example (src/http/examples.ts `requestExamples`), so
 * "Try it out" on /v1/docs sends something that works instead of the viewer's filler. Multipart
 * is left as declared: its file fields have no example; a route's own example stays.
 */
function withExamples(body: RequestBody, operationId: string): RequestBody {
  const example = requestExamples[operationId];
  if (!example) return body;
  const content = Object.fromEntries(
    Object.entries(body.content).map(([type, media]) =>
      type === "multipart/form-data" || !media || "example" in media || "examples" in media ? [type, media] : [type, { ...media, ...example }],
    ),
  );
  return { ...body, content };
}

/** POSTs that may carry a token take `Idempotency-Key` (src/middleware/idempotency.ts). */
const takesIdempotencyKey = (access: Access, method: string, path: string) =>
  method.toLowerCase() === "post" && access.token !== "admin" && !readsNoToken(path);

/** `get /users/{user_id}/posts` → `getUsersByUserIdPosts`: stable, unique and URL-safe. */
export function operationIdFor(method: string, path: string): string {
  const pascal = (s: string) =>
    s
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join("");
  const segments = path
    .split("/")
    .filter(Boolean)
    .map((s) => (s.startsWith("{") ? `By${pascal(s)}` : pascal(s)));
  return method.toLowerCase() + segments.join("");
}

/**
 * Routes that read no token: the OAuth endpoints (their credentials are in the body or the
 * consent form) and the health check, which runs ahead of authentication.
 */
const readsNoToken = (path: string) => path.startsWith("/oauth/") || path === "/health";
/** Not counted by the rate limiter (src/middleware/rate-limit.ts, src/app.ts). */
const notRateLimited = (access: Access, path: string) => access.token === "admin" || path === "/health";

function securityFor(access: Access, path: string) {
  if (access.token === "admin") return [{ admin: [] }];
  if (access.token === "none") return readsNoToken(path) ? [] : [{}, { bearer: [] }, { oauth2: [] }];
  const scopes = access.scope ? [access.scope] : [];
  return [{ bearer: scopes }, { oauth2: scopes }];
}

/** Names of the rate-limit headers, registered once as components (see `registerOpenApiComponents`). */
const RATE_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] as const;
const headerRefs = (names: readonly string[]) => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

type Responses = RouteInput["responses"];

function standardResponses(access: Access, path: string, given: Responses, operationId: string): Responses {
  const limited = !notRateLimited(access, path);
  const out: Responses = {};
  for (const [status, response] of Object.entries(given)) {
    const success = /^2\d\d$/.test(status) && !("$ref" in response);
    out[status] = limited && success ? { ...response, headers: { ...headerRefs(RATE_HEADERS), ...(response.headers as object) } } : response;
  }
  if (limited) {
    // A route's own meaning of 429 (e.g. a stream key's connection limit) stays, with the rate limits added.
    const own = (given[429] as { description?: string } | undefined)?.description;
    const description = own && own !== ErrorEnvelope.description ? `${own} Also: ${RATE_LIMITED}` : RATE_LIMITED;
    out[429] = { ...ErrorEnvelope, description, headers: headerRefs([...RATE_HEADERS, "Retry-After"]) };
  }
  if (!Object.keys(out).some((s) => /^2\d\d$/.test(s))) {
    out.default = { ...ErrorEnvelope, description: "Any other status is an error envelope (e.g. 400 for a bad request, 500 with `error_id`)." };
  }
  for (const [status, response] of Object.entries(out)) out[status] = withErrorExample(status, response, operationId);
  return out;
}

/**
 * An error response gets the example of its status (src/http/examples.ts): the operation's own
 * (`operationErrorExamples`, for replies that are not the plain envelope), else the envelope's.
 */
function withErrorExample(status: string, response: Responses[string], operationId: string) {
  if ("$ref" in response) return response;
  const json = response.content?.["application/json"];
  const own = operationErrorExamples[operationId]?.[status];
  const example = own ?? (json?.schema === ErrorSchema ? errorExamples[status] : undefined);
  if (!json || "example" in json || !example) return response;
  return { ...response, content: { ...response.content, "application/json": { ...json, example } } };
}

const RATE_LIMITED =
  "Too Many Requests: a rate-limit bucket is exhausted, or the caller is banned. The caller is banned for 600 seconds; " +
  "`meta.retry_in` and `Retry-After` say how many seconds are left.";

/** The shared components `defineRoute` refers to: the rate-limit headers and the `Idempotency-Key` parameter. */
export function registerOpenApiComponents(registry: OpenAPIHono["openAPIRegistry"]) {
  registry.registerComponent("parameters", "IdempotencyKey", {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      `A key (1 to ${IDEMPOTENCY.keyMaxLength} printable ASCII characters, e.g. a UUID) that makes a retry safe: the same key with the same request ` +
      `within ${IDEMPOTENCY.windowSeconds / 3600} hours returns the first response (with \`Idempotent-Replayed: true\`) and creates nothing. ` +
      "Per user (or per app for app tokens); ignored without a token.",
    schema: { type: "string", minLength: 1, maxLength: IDEMPOTENCY.keyMaxLength },
    example: "5d1f3a3e-8c1b-4b8e-9d0e-2f6a7c1b9e42",
  });
  const seconds = { type: "integer", minimum: 0 } as const;
  const headers: Record<string, { description: string; schema: typeof seconds; example: number }> = {
    "X-RateLimit-Limit": { description: "Requests the caller's bucket allows per window.", schema: seconds, example: 5000 },
    "X-RateLimit-Remaining": { description: "Requests left in the current window.", schema: seconds, example: 4999 },
    "X-RateLimit-Reset": { description: "Seconds until the bucket takes requests again.", schema: seconds, example: 3600 },
    "Retry-After": { description: "Seconds left of the ban (600 when it starts).", schema: seconds, example: 600 },
  };
  for (const [name, header] of Object.entries(headers)) registry.registerComponent("headers", name, header);
}

/** An id path or query parameter: integers only (decisions §1: anything else is 400). */
export const idString = (what = "id") =>
  z
    .string()
    .regex(/^\d{1,18}$/, { message: `must be an integer ${what}` })
    .openapi({ description: `The ${what} (an integer)`, example: "1" });

/** A user reference in a path: an integer id, `me`, or `@username`. */
export const userRef = z
  .string()
  .regex(/^(\d{1,18}|me|@[A-Za-z0-9_]{1,20})$/, { message: "must be an integer id, 'me' or '@username'" })
  .openapi({ description: "The user: an integer id, `me` (the token's user) or `@username`", example: "@ada" });

/**
 * A success response: the envelope around `data`. `example` is the `data` of an example
 * response (shown on the reference page); `meta` adds fields to its `meta` (default code 200).
 */
export const Envelope = <T extends z.ZodTypeAny>(data: T, description: string, example?: unknown, meta: Record<string, unknown> = {}) => ({
  content: {
    "application/json": {
      schema: z.object({ meta: z.object({ code: z.number() }).passthrough(), data }),
      ...(example === undefined ? {} : { example: { meta: { code: 200, ...meta }, data: example } }),
    },
  },
  description,
});

const ErrorSchema = z
  .object({ meta: z.object({ code: z.number(), error_message: z.string(), error_id: z.string().optional(), retry_in: z.number().optional() }) })
  .openapi("Error");

export const ErrorEnvelope = {
  content: { "application/json": { schema: ErrorSchema } },
  description: "Error envelope",
};

/** Standard error responses to list on a route. */
export const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorEnvelope]));

const IDEMPOTENCY_CONFLICT = {
  ...ErrorEnvelope,
  description:
    "Conflict: the `Idempotency-Key` was already used for another request (method, path, query or body), " +
    "its first request is still in progress, or it was interrupted before answering (check whether the object was created, then use a new key).",
};
