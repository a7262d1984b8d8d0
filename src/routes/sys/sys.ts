import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../../auth/access";
import { LIMITS } from "../../config";
import { ok } from "../../http/envelope";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { now } from "../../http/time";
import { exampleStats } from "../../http/examples";
import { readStats } from "../../stores/stats";

export const sysRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/sys/config",
      tags: ["System"],
      summary: "System configuration: the limits this server enforces",
      description:
        "The limits this server enforces: text lengths, file sizes and the rate-limit buckets (the same numbers the server checks). Anyone may call it, with or without a token; emits nothing.",
      responses: { 200: Envelope(z.object({}).passthrough().openapi("Config"), "System configuration object", LIMITS), ...errors(429) },
    }),
    (c) => ok(c, LIMITS),
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/sys/stats",
      tags: ["System"],
      summary: "Network statistics",
      description:
        "Counts of what the network holds: users (created, disabled, present, and active per day over the last 30 days), clients, posts, messages, polls and files, and `days` since the first user. Anyone may call it; emits nothing.",
      responses: { 200: Envelope(z.object({}).passthrough().openapi("Stats"), "Statistics object", exampleStats), ...errors(429) },
    }),
    async (c) => ok(c, await readStats(c.var.db, now(c))),
  );
