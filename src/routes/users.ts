import { z } from "@hono/zod-openapi";
import { ANY_TOKEN, PUBLIC } from "../auth/access";
import { ok } from "../http/envelope";
import { ApiError } from "../http/errors";
import { resolveUserRef } from "../http/refs";
import { createRouter, defineRoute, Envelope, errors, userRef } from "../http/route";
import { ClientRefSchema, UserSchema } from "../http/schemas";
import { listAppsByOwner } from "../stores/apps";
import { getUser } from "../stores/users";
import { viewContext } from "../views/context";
import { renderUser } from "../views/user";

const params = z.object({ user_id: userRef.openapi({ param: { name: "user_id", in: "path" }, example: "me" }) });

export const userRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/users/{user_id}",
      tags: ["Users"],
      summary: "A user (`me` for the caller, `@username` by name)",
      request: { params },
      responses: { 200: Envelope(UserSchema, "User object"), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const id = await resolveUserRef(c, c.req.valid("param").user_id);
      const view = viewContext(c);
      const user = await getUser(c.var.db, id, view.viewerId);
      if (!user) throw ApiError.notFound("no such user");
      return ok(c, renderUser(user, view));
    },
  )
  .openapi(
    defineRoute(ANY_TOKEN, {
      method: "get",
      path: "/users/{user_id}/clients",
      tags: ["Clients"],
      summary: "Active clients created by a user (list view)",
      request: { params },
      responses: { 200: Envelope(z.array(ClientRefSchema), "Client list items"), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const id = await resolveUserRef(c, c.req.valid("param").user_id);
      const rows = await listAppsByOwner(c.var.db, id);
      return ok(c, rows.map((r) => ({ id: r.clientId, name: r.name, url: r.url })));
    },
  );
