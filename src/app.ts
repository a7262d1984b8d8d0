import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { authenticate } from "./auth/authenticate";
import { rateLimit } from "./middleware/rate-limit";
import { oauthErrorFields } from "./auth/oauth";
import { ApiError, bearerChallenge } from "./http/errors";
import { boundBody } from "./http/body-limit";
import { registerOpenApiComponents } from "./http/route";
import type { AppEnv } from "./http/types";
import { BOOKMARK_HEADER } from "./db";
import { provideServices } from "./middleware/services";
import { updatePresence } from "./middleware/update-presence";
import { generalParams } from "./middleware/general-params";
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER, idempotency } from "./middleware/idempotency";
import { streamSubscription } from "./middleware/stream-subscription";
import { oauthRouter } from "./routes/oauth";
import { sysRouter } from "./routes/sys";
import { usersRouter } from "./routes/users";
import { adminRouter } from "./routes/admin";
import { presenceRouter } from "./routes/presence";
import { pollsRouter } from "./routes/polls";
import { streamsRouter } from "./routes/streams";
import { postsRouter } from "./routes/posts";
import { filesRouter } from "./routes/files";
import { messagesRouter } from "./routes/messages";
import { channelsRouter } from "./routes/channels";
import { feedsRouter } from "./routes/feeds";
import { docsRoutes } from "./routes/sys/docs";
import { healthRoutes } from "./routes/sys/health";

/**
 * The resource routers (src/routes/<resource>/), mounted under /v1 in this order. Order matters where a
 * literal path segment could be read as a parameter: within a resource its index mounts the literal
 * routes first (`/users/search` before `/users/{user_id}`, `/posts/search` before `/posts/{post_id}`), and
 * messages (`/channels/messages`, `/channels/{id}/messages/…`) come before channels (`/channels/{channel_id}`).
 */
const ROUTERS = [
  oauthRouter,
  sysRouter,
  usersRouter,
  adminRouter,
  presenceRouter,
  pollsRouter,
  streamsRouter,
  postsRouter,
  filesRouter,
  messagesRouter,
  channelsRouter,
  feedsRouter,
];

/** Renders any thrown error as the error envelope; unknown errors are a logged 500 with an error_id. */
function errorResponse(err: unknown, c: Context<AppEnv>): Response {
  let status: number;
  let message: string;
  let meta: Record<string, unknown> = {};
  let headers: Record<string, string> = {};
  if (err instanceof ApiError) {
    ({ code: status, message } = err);
    meta = err.extraMeta;
    headers = err.headers;
  } else if (err instanceof HTTPException && err.status < 500) {
    status = err.status;
    message = /json/i.test(err.message) ? "Bad Request: malformed JSON in request body" : `Bad Request: ${err.message || "invalid request"}`;
    if (status === 413) message = "Payload Too Large: the body is larger than this endpoint accepts";
  } else {
    status = 500;
    const errorId = crypto.randomUUID();
    console.error(JSON.stringify({ error_id: errorId, path: c.req.path, error: String(err), stack: (err as Error)?.stack }));
    message = "Internal Server Error";
    meta = { error_id: errorId };
  }
  // The OAuth token endpoint answers in OAuth's own error format (with `meta` as well).
  const oauth = c.req.path === "/v1/oauth/access_token" && status < 500 ? oauthErrorFields(err, status, message) : {};
  // Fields other steps added to this request's meta (e.g. `updated_presence`) stay on errors too.
  const extra = status < 500 ? c.get("extraMeta") : undefined;
  const res = c.json({ ...oauth, meta: { code: status, error_message: message, ...extra, ...meta } }, status as 400);
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
  // Every 401 says how to authenticate; the token endpoint's own (Basic) challenge comes with its OAuthError.
  if (status === 401 && !res.headers.has("WWW-Authenticate")) {
    const tokenSent = c.req.header("authorization") !== undefined || c.req.query("access_token") !== undefined;
    res.headers.set("WWW-Authenticate", bearerChallenge(tokenSent));
  }
  return res;
}

/** `X-Pretty-Json` with any value: indent the JSON (decisions §1). */
async function prettyJson(c: Context<AppEnv>, next: () => Promise<void>) {
  await next();
  if (c.req.header("x-pretty-json") === undefined) return;
  if (!c.res.headers.get("content-type")?.startsWith("application/json")) return;
  const body = JSON.stringify(await c.res.clone().json(), null, 2);
  c.res = new Response(body, c.res);
}

/**
 * The methods the mounted routes serve at a path, to tell 405 from 404. Paths come without a
 * trailing slash (the app is not strict), so patterns match exactly.
 */
function routeMatcher(app: OpenAPIHono<AppEnv>) {
  let patterns: { re: RegExp; method: string }[] | undefined;
  return (path: string) => {
    patterns ??= app.routes
      .filter((r) => r.method !== "ALL")
      .map((r) => ({ method: r.method, re: new RegExp("^" + r.path.replace(/:[^/]+/g, "[^/]+") + "$") }));
    return [...new Set(patterns.filter((p) => p.re.test(path)).map((p) => p.method))];
  };
}

/**
 * The Worker's HTTP application: where every request enters. The order of the `app.use` calls is
 * the order of the pipeline (docs/architecture.md describes it): CORS, pretty JSON, body bound,
 * health, database handle, rate limits, authentication, general parameters, idempotency,
 * update_presence, stream subscription; each route then checks its access rule and validates its
 * input; handlers read through the stores.
 */
export function createApp() {
  // Not strict: `/v1/token/` is `/v1/token` for every method (no redirect, so bodies survive).
  const app = new OpenAPIHono<AppEnv>({ strict: false });
  app.use(
    "*",
    cors({
      origin: "*",
      allowHeaders: ["Authorization", "Content-Type", "X-Pretty-Json", IDEMPOTENCY_HEADER, BOOKMARK_HEADER],
      allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      exposeHeaders: [
        "X-OAuth-Scopes",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "Retry-After",
        "WWW-Authenticate",
        REPLAYED_HEADER,
        BOOKMARK_HEADER,
      ],
      maxAge: 86400,
    }),
  );
  app.use("*", prettyJson);
  // Every body is bounded while it streams; routes set their own limit (defineRoute's `bodyLimit`).
  app.use("*", boundBody);
  // Mounted ahead of the database handle, rate limits and authentication: a health probe uses none of them.
  app.route("/v1", healthRoutes);
  // The per-request services on `c.var`: database handle, file store, bans, rate limiter.
  app.use("*", provideServices);
  // Rate limits run before authentication so that, for reads, they run in parallel with it.
  app.use("/v1/*", rateLimit);
  app.use("/v1/*", authenticate);
  // General parameters of users and posts: a bad value is a 400 before the endpoint runs.
  app.use("/v1/*", generalParams);
  // `Idempotency-Key` on POST: a retried creation replays the first response (after the checks
  // above, which write nothing; before anything that does).
  app.use("/v1/*", idempotency);
  app.use("/v1/*", updatePresence);
  // `?connection_id=` on a subscribable GET subscribes a user stream (decisions §8).
  app.use("/v1/*", streamSubscription);
  for (const router of ROUTERS) app.route("/v1", router);

  // The OpenAPI document of the routes above (/v1/openapi.json) and the reference page (/v1/docs).
  registerOpenApiComponents(app.openAPIRegistry);
  app.route("/v1", docsRoutes(app));

  const allowedMethods = routeMatcher(app);
  app.notFound((c) => {
    const methods = allowedMethods(c.req.path);
    // A method the path does serve (HEAD with GET) is never a 405: that reply would contradict itself.
    const served = methods.includes(c.req.method) || (c.req.method === "HEAD" && methods.includes("GET"));
    if (methods.length && !served) {
      const res = errorResponse(new ApiError(405, `${c.req.method} is not allowed here; use ${methods.join(", ")}`), c);
      res.headers.set("Allow", methods.join(", "));
      return res;
    }
    return errorResponse(ApiError.notFound(`no route for ${c.req.method} ${c.req.path}`), c);
  });
  app.onError(errorResponse);
  return app;
}
