import { z } from "@hono/zod-openapi";

// Response shapes for the OpenAPI document. Objects are open (`passthrough`) because the
// views add fields per context (e.g. `markdown_text` only for the caller's own user).

const Entities = z.object({ links: z.array(z.any()), mentions: z.array(z.any()), tags: z.array(z.any()) });
const Image = z.object({ url: z.string(), width: z.number(), height: z.number(), is_default: z.boolean() });

export const UserSchema = z
  .object({
    id: z.string(),
    created_at: z.string(),
    username: z.string(),
    name: z.string(),
    type: z.enum(["human", "feed", "bot"]),
    locale: z.string(),
    timezone: z.string(),
    badge: z.object({ id: z.string(), name: z.string() }).optional().openapi({ description: "The badge the user shows, if any" }),
    verified: z.object({ domain: z.string(), url: z.string() }).optional().openapi({ description: "A URL the user proved to own, if any" }),
    content: z
      .object({
        text: z.string(),
        html: z.string().optional(),
        entities: Entities,
        markdown_text: z.string().optional(),
        avatar_image: Image,
        cover_image: Image,
      })
      .passthrough(),
    counts: z.object({ bookmarks: z.number(), clients: z.number(), followers: z.number(), following: z.number(), posts: z.number() }).optional(),
    follows_you: z.boolean(),
    you_follow: z.boolean(),
    you_muted: z.boolean(),
    you_blocked: z.boolean(),
    you_can_follow: z.boolean(),
    presence: z.string().optional().openapi({ description: "With `include_presence=1`: the live status, or `offline`" }),
    raw: z.record(z.string(), z.array(z.any())).optional(),
  })
  .passthrough()
  .openapi("User");

export const ClientRefSchema = z.object({ id: z.string(), name: z.string(), url: z.string() }).openapi("ClientListItem");

export const ClientSchema = ClientRefSchema.extend({
  created_at: z.string(),
  user: UserSchema.optional(),
  logo_image: z.string(),
  posts: z.number(),
  content: z.object({ text: z.string(), html: z.string(), entities: Entities }),
}).openapi("Client");

export const TokenSchema = z
  .object({
    app: ClientRefSchema,
    scopes: z.array(z.string()),
    user: UserSchema.optional(),
    storage: z.object({ available: z.number(), total: z.number() }).optional(),
  })
  .openapi("Token");
