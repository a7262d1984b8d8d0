import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../../auth/access";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, errors } from "../../http/route";
import { readProfileImage } from "../../services/profile-images";
import { ScaleQuery } from "./profile";

// Uploaded avatar and cover images. Keys are random and an image is never changed in place (a
// new upload gets a new key), so responses are cacheable for ever.

export const imageRoutes = createRouter().openapi(
  defineRoute(PUBLIC, {
    method: "get",
    path: "/images/{key}",
    tags: ["Profile"],
    summary: "An uploaded avatar or cover image",
    description:
      "No token needed. The URL of `content.avatar_image` / `content.cover_image` of users who uploaded one. Served as stored, or " +
      "scaled down to width `w` (else height `h`), the aspect kept and never larger than stored (GIFs scaled are PNGs); 404 once the " +
      "user replaced or removed it. Emits nothing.",
    request: {
      params: z.object({ key: z.string().openapi({ param: { name: "key", in: "path" }, description: "The image's key", example: "hV3kq9sLw0cZ" }) }),
      query: ScaleQuery,
    },
    responses: {
      200: { description: "The image", content: { "image/png": { schema: z.any() }, "image/jpeg": { schema: z.any() }, "image/gif": { schema: z.any() } } },
      ...errors(400, 404),
    },
  }),
  async (c) => {
    const key = c.req.valid("param").key;
    const { w, h } = c.req.valid("query");
    const size = { w: w ? Number(w) : undefined, h: h ? Number(h) : undefined };
    const object = /^[A-Za-z0-9_-]{1,64}$/.test(key) ? await readProfileImage(c, key, size) : null;
    if (!object) throw ApiError.notFound("no such image");
    const etag = object.httpEtag;
    if (c.req.header("if-none-match") === etag) return c.body(null, 304, { ETag: etag });
    return c.body(object.body, 200, {
      "Content-Type": object.httpMetadata?.contentType ?? "application/octet-stream",
      "Cache-Control": "public, max-age=31536000, immutable",
      ETag: etag,
    });
  },
);
