import { now } from "../../http/time";
import { currentUser, userToken } from "../../auth/access";
import { freshAuth } from "../../auth/authenticate";
import { publish } from "../../events/publish";
import { tokenEvent } from "../../events/token-event";
import { ok } from "../../http/envelope";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { TokenSchema } from "../../http/schemas";
import { exampleToken } from "../../http/examples";
import { deleteToken } from "../../stores/tokens";
import { viewContext } from "../../views/context";
import { renderToken } from "../../views/token";
import { UserQuery } from "../users/common";

const tokenResponses = { ...errors(401, 403, 429) };

export const tokenRoutes = createRouter()
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/token",
      tags: ["Token"],
      summary: "The current token",
      request: { query: UserQuery },
      description:
        "The token the request carries: its app, granted scopes, its user (with `markdown_text`, and `data.email` with the `email` scope) and the user's file storage. Needs a user token; emits nothing.",
      responses: { 200: Envelope(TokenSchema, "Token object", exampleToken), ...tokenResponses },
    }),
    async (c) => {
      currentUser(c);
      // Shows the user's storage and profile: as of now, not as the isolate last saw the token.
      const auth = await freshAuth(c);
      return ok(c, renderToken(auth!, viewContext(c)));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "delete",
      path: "/token",
      tags: ["Token"],
      summary: "Delete the current token (the user's authorization of the app stays)",
      request: { query: UserQuery },
      description:
        "Deletes the token the request carries; it stops working at once. Needs a user token. Emits a `token` event with `is_deleted` to the app's streams and closes the user streams opened with this token.",
      responses: { 200: Envelope(TokenSchema, "The deleted Token object", exampleToken), ...tokenResponses },
    }),
    async (c) => {
      const auth = c.var.auth!;
      const body = renderToken(auth, viewContext(c));
      const event = tokenEvent(c, auth, true);
      const seq = await deleteToken(c.var.db, auth.token.id, { ...event, timestamp: now(c) });
      publish(c, { ...event, seq });
      return ok(c, body);
    },
  );
