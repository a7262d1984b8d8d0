import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../../auth/access";
import { createRouter, defineRoute, errors } from "../../http/route";
import { ApiError } from "../../http/errors";

// A plain 200x200 PNG that stands in for users' and clients' images until they set their own.
const DEFAULT_IMAGE = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAMgAAADICAIAAAAiOjnJAAABeElEQVR42u3SMQ0AAAgEsfevjY0RM5hgYGhSBZdL9cC5SICxMBbGAmNhLIwFxsJYGAuMhbEwFhgLY2EsMBbGwlhgLIyFscBYGAtjgbEwFsYCY2EsjAXGwlgYC4yFsTAWGAtjYSwwFsbCWGAsjIWxwFgYC2OBsTAWxgJjYSyMBcbCWBgLjIWxMBYYC2NhLDAWxsJYYCyMhbHAWBgLY4GxMBbGAmNhLIwFxsJYGAuMhbEwFhgLY2EsjKUCxsJYGAuMhbEwFhgLY2EsMBbGwlhgLIyFscBYGAtjgbEwFsYCY2EsjAXGwlgYC4yFsTAWGAtjYSwwFsbCWGAsjIWxwFgYC2OBsTAWxgJjYSyMBcbCWBgLjIWxMBYYC2NhLDAWxsJYYCyMhbHAWBgLY4GxMBbGAmNhLIwFxsJYGAuMhbEwFhgLY2EsMBbGwlgYSwWMhbEwFhgLY2EsMBbGwlhgLIyFscBYGAtjgbEwFsYCY2EsjAXGwlgYC4zFNwubDg0uhLIHgQAAAABJRU5ErkJggg==",
  ),
  (ch) => ch.charCodeAt(0),
);
const NAMES = new Set(["default-avatar.png", "default-cover.png", "default-logo.png"]);

export const staticRoutes = createRouter().openapi(
  defineRoute(PUBLIC, {
    method: "get",
    path: "/static/{name}",
    tags: ["Static"],
    summary: "Default avatar, cover and logo images",
    description:
      "The 200×200 PNG images users and clients show until they set their own (`default-avatar.png`, `default-cover.png`, `default-logo.png`), cached for a day. Anyone may fetch them; emits nothing.",
    request: {
      params: z.object({
        name: z.string().openapi({ description: "`default-avatar.png`, `default-cover.png` or `default-logo.png`.", example: "default-avatar.png" }),
      }),
    },
    responses: { 200: { description: "PNG image", content: { "image/png": { schema: z.any() } } }, ...errors(404) },
  }),
  (c) => {
    if (!NAMES.has(c.req.valid("param").name)) throw ApiError.notFound("no such image");
    return c.body(DEFAULT_IMAGE, 200, { "Content-Type": "image/png", "Cache-Control": "public, max-age=86400" });
  },
);
