import { z } from "@hono/zod-openapi";
import { ADMIN } from "../../auth/access";
import { hashPassword, randomToken, sha256Hex } from "../../auth/crypto";
import { LIMITS } from "../../config";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, Envelope, errors, idString } from "../../http/route";
import { exampleCreatedApp, exampleUser } from "../../http/examples";
import { UserSchema } from "../../http/schemas";
import { now } from "../../http/time";
import { createApp, getAppById, deleteApp } from "../../stores/apps";
import { createUser, getUser } from "../../stores/users";
import { viewContext } from "../../views/context";
import { renderUser } from "../../views/user";

export const usernameSchema = z.string().regex(new RegExp(`^[a-z0-9_]{1,${LIMITS.user.username_max_length}}$`), {
  message: `must be 1 to ${LIMITS.user.username_max_length} characters of a-z, 0-9 and _`,
});

const NewApp = z
  .object({
    name: z.string().min(1).max(100),
    url: z.string().url().optional(),
    user_id: idString("user id").optional(),
    is_public: z.boolean().default(true),
  })
  .openapi("NewApp");

const CreatedApp = z
  .object({ id: z.string(), name: z.string(), url: z.string(), client_id: z.string(), client_secret: z.string(), password_grant_secret: z.string() })
  .openapi("CreatedApp");

const NewUser = z
  .object({
    username: usernameSchema,
    password: z.string().min(8, { message: "must be at least 8 characters" }).max(200),
    name: z.string().max(LIMITS.user.name_max_length).optional(),
    email: z.string().email().optional(),
    type: z.enum(["human", "feed", "bot"]).default("human"),
  })
  .openapi("NewUser");

export const adminRoutes = createRouter()
  .openapi(
    defineRoute(ADMIN, {
      method: "post",
      path: "/admin/apps",
      tags: ["Admin"],
      summary: "Create an app (client); the secrets are shown only here",
      description:
        "Registers an app. With `url`, OAuth redirects must stay on that URL's origin. `user_id` makes a user its owner; `is_public` (default true) lists it at `GET /clients/{client_id}`. The reply is the only place `client_secret` and `password_grant_secret` are ever shown. Needs `Authorization: Bearer <ADMIN_TOKEN>`; not rate limited; emits nothing.",
      request: { body: { content: { "application/json": { schema: NewApp } }, required: true } },
      responses: { 201: Envelope(CreatedApp, "The app with its secrets", exampleCreatedApp, { code: 201 }), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const db = c.var.db;
      const ownerId = body.user_id ? Number(body.user_id) : null;
      if (ownerId != null && !(await getUser(db, ownerId, null))) throw ApiError.badRequest("'user_id' names no user");
      const clientId = randomToken(16);
      const clientSecret = randomToken();
      const passwordGrantSecret = randomToken();
      const app = await createApp(db, {
        clientId,
        name: body.name,
        url: body.url ?? "",
        clientSecretHash: await sha256Hex(clientSecret),
        passwordGrantSecretHash: await sha256Hex(passwordGrantSecret),
        ownerId,
        isPublic: body.is_public,
        createdAt: now(c),
      });
      const data = {
        id: String(app.id),
        name: app.name,
        url: app.url,
        client_id: clientId,
        client_secret: clientSecret,
        password_grant_secret: passwordGrantSecret,
      };
      return ok(c, data, {}, 201);
    },
  )
  .openapi(
    defineRoute(ADMIN, {
      method: "delete",
      path: "/admin/apps/{id}",
      tags: ["Admin"],
      summary: "Delete an app: its tokens stop working and it shows as `[REMOVED]` everywhere",
      description:
        "Deletes an app: all its tokens stop working at once; the app's row stays so that posts and messages it made show it as `[REMOVED]`. Needs the admin token; emits nothing.",
      request: { params: z.object({ id: idString("app id (the `id` from creating it, not the client_id)") }) },
      responses: {
        200: Envelope(z.object({ id: z.string(), name: z.string(), client_id: z.string(), is_deleted: z.boolean() }), "Deleted", {
          id: "1",
          name: "Photo Box",
          client_id: "pbx_3Fq9LwZt7XkR2mNv",
          is_deleted: true,
        }),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const app = await getAppById(c.var.db, Number(c.req.valid("param").id));
      if (!app || app.deletedAt != null) throw ApiError.notFound("no such app");
      await deleteApp(c.var.db, app, now(c));
      return ok(c, { id: String(app.id), name: app.name, client_id: app.clientId, is_deleted: true });
    },
  )
  .openapi(
    defineRoute(ADMIN, {
      method: "post",
      path: "/admin/users",
      tags: ["Admin"],
      summary: "Create a user",
      description:
        "Creates a user who can then sign in (password grant or the consent page). Usernames are 1–20 of `a-z`, `0-9`, `_`; a taken one is a 400. The reply includes `data.email`. Needs the admin token; emits nothing.",
      request: { body: { content: { "application/json": { schema: NewUser } }, required: true } },
      responses: {
        201: Envelope(UserSchema, "User object", { ...exampleUser, data: { email: "ada@example.com" } }, { code: 201 }),
        ...errors(400, 401, 403, 415),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const user = await createUser(c.var.db, {
        username: body.username,
        passwordHash: await hashPassword(body.password, c.env.PASSWORD_ITERATIONS),
        name: body.name ?? null,
        email: body.email ?? null,
        type: body.type,
        createdAt: now(c),
      });
      if (!user) throw new ApiError(400, `'username' '${body.username}' is taken`);
      return ok(c, renderUser(user, viewContext(c), { email: true }), {}, 201);
    },
  );
