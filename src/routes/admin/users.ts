import { z } from "@hono/zod-openapi";
import { ADMIN } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, Envelope, errors, idString } from "../../http/route";
import { UserSchema } from "../../http/schemas";
import { now } from "../../http/time";
import { awardBadge, createBadge } from "../../stores/badges";
import { setVerifiedUrl } from "../../stores/profile";
import { viewContext } from "../../views/context";
import { renderUser } from "../../views/user";
import { EXAMPLE_USER } from "../users/common";

// What only the operator grants users: badges and a verified URL (the bootstrap API, decisions §3).

const NewBadge = z
  .object({
    name: z.string().min(1).max(50).openapi({ description: "The badge's name (up to 50 characters)" }),
    description: z.string().max(256).default("").openapi({ description: "What earns it (up to 256 characters)" }),
  })
  .openapi("NewBadge");

const UserPatch = z
  .object({
    verified_url: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), { message: "must be an http or https URL" })
      .nullable()
      .openapi({ description: "A URL the user proved to own (shown as `verified`); null removes it" }),
  })
  .strict()
  .openapi("AdminUserPatch");

const userParam = idString("user id").openapi({ param: { name: "user_id", in: "path" }, example: "3" });

export const adminUserRoutes = createRouter()
  .openapi(
    defineRoute(ADMIN, {
      method: "post",
      path: "/admin/badges",
      tags: ["Admin"],
      summary: "Create a badge",
      description: "Creates a badge users can then be awarded. Needs the admin token; emits nothing.",
      request: { body: { content: { "application/json": { schema: NewBadge } }, required: true } },
      responses: {
        201: Envelope(
          z.object({ id: z.string(), name: z.string(), description: z.string() }),
          "The badge",
          { id: "1", name: "Early supporter", description: "Joined in the first year" },
          { code: 201 },
        ),
        ...errors(400, 401, 403, 415),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const badge = await createBadge(c.var.db, { name: body.name, description: body.description, createdAt: now(c) });
      return ok(c, { id: String(badge.id), name: badge.name, description: badge.description }, {}, 201);
    },
  )
  .openapi(
    defineRoute(ADMIN, {
      method: "put",
      path: "/admin/users/{user_id}/badges/{badge_id}",
      tags: ["Admin"],
      summary: "Award a badge to a user",
      description: "The user can then show it (PATCH /users/me `badge`). Awarding it again changes nothing. Needs the admin token; emits nothing.",
      request: { params: z.object({ user_id: userParam, badge_id: idString("badge id").openapi({ param: { name: "badge_id", in: "path" }, example: "1" }) }) },
      responses: {
        200: Envelope(z.object({ user_id: z.string(), badge_id: z.string() }), "Awarded", { user_id: "3", badge_id: "1" }),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const p = c.req.valid("param");
      if (!(await awardBadge(c.var.db, Number(p.user_id), Number(p.badge_id), now(c)))) throw ApiError.notFound("no such user or badge");
      return ok(c, { user_id: p.user_id, badge_id: p.badge_id });
    },
  )
  .openapi(
    defineRoute(ADMIN, {
      method: "patch",
      path: "/admin/users/{user_id}",
      tags: ["Admin"],
      summary: "Set what only the operator sets on a user: the verified URL",
      description: "Needs the admin token; emits nothing.",
      request: { params: z.object({ user_id: userParam }), body: { content: { "application/json": { schema: UserPatch } }, required: true } },
      responses: {
        200: Envelope(UserSchema, "The user", { ...EXAMPLE_USER, verified: { domain: "ada.example", url: "https://ada.example/" } }),
        ...errors(400, 401, 403, 404, 415),
      },
    }),
    async (c) => {
      const user = await setVerifiedUrl(c.var.db, Number(c.req.valid("param").user_id), c.req.valid("json").verified_url);
      if (!user) throw ApiError.notFound("no such user");
      return ok(c, renderUser(user, viewContext(c)));
    },
  );
