import { z } from "@hono/zod-openapi";
import { ANY_TOKEN, PUBLIC } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { checkIdCount } from "../../http/params";
import { resolveUserRef } from "../../http/refs";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { ClientRefSchema, UserSchema } from "../../http/schemas";
import { listAppsByOwner } from "../../stores/apps";
import { examplePresence } from "../../http/examples";
import { PresenceSchema, userPresence } from "../presence/presence";
import { readUserPage, usersByRefsPage } from "../../stores/user-lists";
import { getUser } from "../../stores/users";
import { viewContext } from "../../views/context";
import { renderUser } from "../../views/user";
import { EXAMPLE_USER, oneUser, userIdParam, UserQuery } from "./common";

/** Most users `GET /users` returns: the first found. */
const USERS_RETURNED = 200;

/** `ids` of GET /users: integer ids and `@username`s, in the order given (400 naming `ids` otherwise). */
function parseRefs(v: string): string[] {
  const refs = v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!refs.length) throw ApiError.badRequest("'ids' must list at least one user id or @username");
  checkIdCount("ids", refs.length);
  const bad = refs.find((r) => !/^(\d{1,18}|@[A-Za-z0-9_]{1,20})$/.test(r));
  if (bad !== undefined) throw ApiError.badRequest(`'ids' must be comma-separated integer user ids or @usernames ('${bad.slice(0, 32)}' is not)`);
  return refs.map((r) => (r.startsWith("@") ? r.toLowerCase() : String(Number(r))));
}

export const userRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/users",
      tags: ["Users"],
      summary: "Users by id or @username (at most the first 200 found; unknown ones are skipped)",
      description: "No token needed. Users come in the order asked, each once; disabled users are left out. Emits nothing.",
      request: {
        query: UserQuery.extend({
          ids: z.string({ message: "is required" }).openapi({ description: "Comma-separated user ids or @usernames", example: "4,@ada,1000" }),
        }),
      },
      responses: { 200: Envelope(z.array(UserSchema), "User objects", [EXAMPLE_USER]), ...errors(400) },
    }),
    async (c) => {
      const refs = parseRefs(c.req.valid("query").ids);
      const ids = refs.filter((r) => !r.startsWith("@")).map(Number);
      const names = refs.filter((r) => r.startsWith("@")).map((r) => r.slice(1));
      const view = viewContext(c);
      const { users } = await readUserPage(c.var.db, usersByRefsPage(ids, names), view.viewerId);
      const position = (u: { id: number; username: string }) => Math.min(...[refs.indexOf(String(u.id)), refs.indexOf("@" + u.username)].filter((i) => i >= 0));
      const ordered = [...users].sort((a, b) => position(a) - position(b));
      const unique = ordered.filter((u, i) => ordered.findIndex((o) => o.id === u.id) === i).slice(0, USERS_RETURNED);
      return ok(
        c,
        unique.map((u) => renderUser(u, view)),
      );
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/users/{user_id}",
      tags: ["Users"],
      summary: "A user (`me` for the caller, `@username` by name)",
      description: "No token needed (`me` needs a user token). Takes the general user parameters. Emits nothing.",
      request: { params: userIdParam, query: UserQuery },
      responses: { 200: oneUser("User object"), ...errors(400, 401, 404) },
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
      description: "Needs a token (user or app). Emits nothing.",
      request: { params: userIdParam },
      responses: {
        200: Envelope(z.array(ClientRefSchema), "Client list items", [{ id: "c4Xx7QmTcVQ0w3Hs", name: "My app", url: "https://myapp.example" }]),
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const id = await resolveUserRef(c, c.req.valid("param").user_id);
      const rows = await listAppsByOwner(c.var.db, id);
      return ok(
        c,
        rows.map((r) => ({ id: r.clientId, name: r.name, url: r.url })),
      );
    },
  )
  .openapi(
    defineRoute(ANY_TOKEN, {
      method: "get",
      path: "/presence/{user_id}",
      tags: ["Presence"],
      summary: "A user's presence (the path older clients call; `GET /users/{user_id}/presence` is the documented one)",
      description: "The same as `GET /users/{user_id}/presence`. Any token; emits nothing.",
      deprecated: true,
      request: { params: userIdParam },
      responses: { 200: Envelope(PresenceSchema, "Presence object", examplePresence), ...errors(400, 401, 403, 404) },
    }),
    (c) => userPresence(c, c.req.valid("param").user_id),
  );
