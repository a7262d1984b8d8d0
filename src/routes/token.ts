import { currentUser, userToken } from "../auth/access";
import { publish } from "../events/publish";
import { tokenEvent } from "../events/token-event";
import { ok } from "../http/envelope";
import { createRouter, defineRoute, Envelope, errors } from "../http/route";
import { TokenSchema } from "../http/schemas";
import { deleteToken } from "../stores/tokens";
import { viewContext } from "../views/context";
import { renderToken } from "../views/token";

const tokenResponses = { ...errors(401, 403, 429) };

export const tokenRoutes = createRouter()
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/token",
      tags: ["Token"],
      summary: "The current token",
      responses: { 200: Envelope(TokenSchema, "Token object"), ...tokenResponses },
    }),
    (c) => {
      currentUser(c);
      return ok(c, renderToken(c.var.auth!, viewContext(c)));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "delete",
      path: "/token",
      tags: ["Token"],
      summary: "Delete the current token (the user's authorization of the app stays)",
      responses: { 200: Envelope(TokenSchema, "The deleted Token object"), ...tokenResponses },
    }),
    async (c) => {
      const auth = c.var.auth!;
      const body = renderToken(auth, viewContext(c));
      await deleteToken(c.var.db, auth.token.id);
      publish(c, tokenEvent(c, auth, true));
      return ok(c, body);
    },
  );
