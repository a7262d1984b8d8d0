import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../../auth/access";
import { ok } from "../../http/envelope";
import { createRouter, defineRoute, Envelope } from "../../http/route";

/**
 * `GET /v1/health` for uptime checks. The app mounts it ahead of the database handle, rate limits
 * and authentication (src/app.ts), so a probe costs no database call, no Durable Object and no
 * rate-limit bucket: a monitor polling every few seconds can never get itself banned.
 */
export const healthRoutes = createRouter().openapi(
  defineRoute(PUBLIC, {
    method: "get",
    path: "/health",
    tags: ["System"],
    summary: "Health check for uptime monitors: no database, no rate limit",
    description:
      'Answers 200 `{"status": "ok"}` while the Worker serves requests (HEAD works too). It touches neither the ' +
      "database nor a Durable Object and is not rate limited, so it says the Worker is up, not that its storage is.",
    responses: { 200: Envelope(z.object({ status: z.literal("ok") }).openapi("Health"), "The Worker is serving", { status: "ok" }) },
  }),
  (c) => {
    // A cached "ok" would hide an outage from the monitor.
    c.header("Cache-Control", "no-store");
    return ok(c, { status: "ok" });
  },
);
