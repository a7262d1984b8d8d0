import { z } from "@hono/zod-openapi";
import { APP_TOKEN } from "../../auth/access";
import { appUserIds, appUserTokens, scopeList } from "../../stores/tokens";
import { ok } from "../../http/envelope";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { exampleToken } from "../../http/examples";
import { TokenSchema } from "../../http/schemas";
import { viewContext } from "../../views/context";
import { renderToken } from "../../views/token";
import { UserQuery } from "../users/common";

// The users of the calling app: who authorized it, and its live user tokens.

export const appUserRoutes = createRouter()
  .openapi(
    defineRoute(APP_TOKEN, {
      method: "get",
      path: "/apps/me/users/ids",
      tags: ["Clients"],
      summary: "Ids of the users who authorized the calling app",
      description:
        "Needs an app token. Not paginated; oldest authorization first. A user stays listed after deleting a token (the authorization remains). Emits nothing.",
      responses: { 200: Envelope(z.array(z.string()), "User ids", ["3", "57"]), ...errors(401, 403) },
    }),
    async (c) => ok(c, (await appUserIds(c.var.db, c.var.auth!.app.id)).map(String)),
  )
  .openapi(
    defineRoute(APP_TOKEN, {
      method: "get",
      path: "/apps/me/users/tokens",
      tags: ["Clients"],
      summary: "The calling app's user tokens",
      description:
        "Needs an app token. Not paginated; oldest token first. Each is a Token object (its user with the general user parameters); the tokens themselves are never shown. Emits nothing.",
      request: { query: UserQuery },
      responses: { 200: Envelope(z.array(TokenSchema), "Token objects", [exampleToken]), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const auth = c.var.auth!;
      const view = viewContext(c);
      const rows = await appUserTokens(c.var.db, auth.app.id);
      return ok(
        c,
        rows.map((r) => renderToken({ kind: "user", token: r.token, scopes: scopeList(r.token), app: auth.app, user: r.user }, view)),
      );
    },
  );
