import { z } from "@hono/zod-openapi";
import { ANY_TOKEN } from "../../auth/access";
import { BODY_LIMITS } from "../../config";
import { ok } from "../../http/envelope";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { exampleTextResult } from "../../http/examples";
import { parseFlags, processForCreate } from "../../services/text";

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
    entities: z
      .object({
        parse_links: z.union([z.boolean(), z.number(), z.string()]).optional(),
        parse_markdown_links: z.union([z.boolean(), z.number(), z.string()]).optional(),
      })
      .passthrough()
      .optional(),
  })
  .passthrough();

export const textRoutes = createRouter().openapi(
  defineRoute(ANY_TOKEN, {
    method: "post",
    path: "/text/process",
    bodyLimit: BODY_LIMITS.textProcess,
    tags: ["Text"],
    summary: "Show how post or message text is processed (entities and HTML)",
    description:
      "Runs the text processor on `text` without saving anything: the text, its HTML, and the links, mentions and tags found (both under `entities`, as in a post's `content`, and flat). `entities.parse_links` and `entities.parse_markdown_links` turn the link parsers off. Any token; emits nothing.",
    request: {
      query: z.object({
        object_type: z.enum(["post", "message"]).default("post").openapi({ description: "Process as the text of a post (default) or of a message." }),
      }),
      body: { content: { "application/json": { schema: Body } }, required: true },
    },
    responses: { 200: Envelope(TextResultSchema, "Text processing result", exampleTextResult), ...errors(400, 401, 415) },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const result = await processForCreate(c, body.text, c.req.valid("query").object_type, parseFlags(body.entities));
    const { links, mentions, tags } = result.entities;
    // Entities both as in a post's content and flat, as api.md lists the result's fields.
    return ok(c, { text: result.text, html: result.html, entities: result.entities, links, mentions, tags });
  },
);
