import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../auth/access";
import { LIMITS } from "../config";
import { ok } from "../http/envelope";
import { createRouter, defineRoute, Envelope, errors } from "../http/route";
import { now } from "../http/time";
import { readStats } from "../stores/stats";

export const sysRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/sys/config",
      tags: ["System"],
      summary: "System configuration: the limits this server enforces",
      responses: { 200: Envelope(z.object({}).passthrough().openapi("Config"), "System configuration object"), ...errors(429) },
    }),
    (c) => ok(c, LIMITS),
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/sys/stats",
      tags: ["System"],
      summary: "Network statistics",
      responses: { 200: Envelope(z.object({}).passthrough().openapi("Stats"), "Statistics object"), ...errors(429) },
    }),
    async (c) => ok(c, await readStats(c.var.db, now(c))),
  );
