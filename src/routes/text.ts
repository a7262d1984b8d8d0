import { z } from "@hono/zod-openapi";
import { ANY_TOKEN } from "../auth/access";
import { ok } from "../http/envelope";
import { createRouter, defineRoute, Envelope, errors } from "../http/route";
import { parseFlags, processForCreate } from "../services/text";

const Entity = z.object({ pos: z.number(), len: z.number(), text: z.string() }).passthrough();
const TextResultSchema = z
  .object({
    text: z.string(),
    html: z.string(),
    entities: z.object({ links: z.array(Entity), mentions: z.array(Entity), tags: z.array(Entity) }),
    links: z.array(Entity),
    mentions: z.array(Entity),
    tags: z.array(Entity),
  })
  .openapi("TextProcessingResult");

const Body = z
  .object({
    text: z.string({ message: "is required and must be a string" }),
    entities: z.object({ parse_links: z.union([z.boolean(), z.number(), z.string()]).optional(), parse_markdown_links: z.union([z.boolean(), z.number(), z.string()]).optional() }).passthrough().optional(),
  })
  .passthrough();

export const textRoutes = createRouter().openapi(
  defineRoute(ANY_TOKEN, {
    method: "post",
    path: "/text/process",
    tags: ["Text"],
    summary: "Show how post or message text is processed (entities and HTML)",
    request: {
      query: z.object({ object_type: z.enum(["post", "message"]).default("post") }),
      body: { content: { "application/json": { schema: Body } }, required: true },
    },
    responses: { 200: Envelope(TextResultSchema, "Text processing result"), ...errors(400, 401, 415) },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const result = await processForCreate(c, body.text, c.req.valid("query").object_type, parseFlags(body.entities));
    const { links, mentions, tags } = result.entities;
    // Entities both as in a post's content and flat, as api.md lists the result's fields.
    return ok(c, { text: result.text, html: result.html, entities: result.entities, links, mentions, tags });
  },
);
