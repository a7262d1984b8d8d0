import { z } from "@hono/zod-openapi";
import { currentUser, PUBLIC, userToken } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, Envelope, errors, idString } from "../../http/route";
import { iso } from "../../http/time";
import { getBadge, listBadges, userBadgeList, type BadgeRecord } from "../../stores/badges";

// Badges users earn (created and awarded through the admin API); a user shows one of theirs as
// `badge` on their User object (PATCH /users/me `badge`).

const BadgeSchema = z.object({ id: z.string(), name: z.string(), description: z.string() }).openapi("Badge");
const EXAMPLE = { id: "1", name: "Early supporter", description: "Joined in the first year" };

const renderBadge = (b: Pick<BadgeRecord, "id" | "name" | "description">) => ({ id: String(b.id), name: b.name, description: b.description });

export const badgeRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/badges",
      tags: ["Badges"],
      summary: "Every badge",
      description: "No token needed. Not paginated (the list is short), oldest badge first. Emits nothing.",
      responses: { 200: Envelope(z.array(BadgeSchema), "Badge objects", [EXAMPLE]) },
    }),
    async (c) => ok(c, (await listBadges(c.var.db)).map(renderBadge)),
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/badges/{badge_id}",
      tags: ["Badges"],
      summary: "A badge",
      description: "No token needed. Emits nothing.",
      request: { params: z.object({ badge_id: idString("badge id").openapi({ param: { name: "badge_id", in: "path" }, example: "1" }) }) },
      responses: { 200: Envelope(BadgeSchema, "Badge object", EXAMPLE), ...errors(400, 404) },
    }),
    async (c) => {
      const badge = await getBadge(c.var.db, Number(c.req.valid("param").badge_id));
      if (!badge) throw ApiError.notFound("no such badge");
      return ok(c, renderBadge(badge));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/users/me/badges",
      tags: ["Badges"],
      summary: "The caller's badges, most recently awarded first",
      description: "Needs a user token (any scope). Not paginated. Each badge carries `awarded_at`. Emits nothing.",
      responses: {
        200: Envelope(z.array(BadgeSchema.extend({ awarded_at: z.string() })), "Badge objects", [{ ...EXAMPLE, awarded_at: "2026-02-01T10:00:00Z" }]),
        ...errors(401, 403),
      },
    }),
    async (c) => {
      const rows = await userBadgeList(c.var.db, currentUser(c).id);
      return ok(
        c,
        rows.map((b) => ({ ...renderBadge(b), awarded_at: iso(b.awardedAt) })),
      );
    },
  );
