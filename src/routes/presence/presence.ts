import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../http/types";
import { ANY_TOKEN, currentUser, userToken } from "../../auth/access";
import { readAlongsideToken } from "../../auth/authenticate";
import { LIMITS } from "../../config";
import { readFields, stringField } from "../../http/body";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { resolveUserRef } from "../../http/refs";
import { examplePresence } from "../../http/examples";
import { createRouter, defineRoute, Envelope, errors, userRef } from "../../http/route";
import { now } from "../../http/time";
import { appliedPresence } from "../../middleware/update-presence";
import { parseStatus, setUserPresence } from "../../services/presence";
import { parseExpiration } from "../../services/presence-expiry";
import { runBatch } from "../../db/batch";
import { okEncoded } from "../../http/envelope";
import { getPresence } from "../../stores/presence";
import { cachedPresenceList, presenceListReads, presenceVersionQuery, renderPresenceList } from "../../stores/presence-list";
import { viewContext } from "../../views/context";
import { renderPresence } from "../../views/presence";

export const PresenceSchema = z
  .object({
    id: z.string(),
    username: z.string(),
    name: z.string().optional(),
    avatar_image: z.string(),
    presence: z.string(),
    last_seen_at: z.string().optional(),
  })
  .openapi("Presence");

const PresenceBody = z
  .object({
    presence: z
      .union([z.string(), z.number()])
      .nullable()
      .optional()
      .openapi({ description: `Unset or \`1\`: \`online\`; \`offline\` or \`0\`: offline; other text up to ${LIMITS.user.presence_max_length} characters` }),
    expiration: z.union([z.string(), z.number()]).nullable().optional().openapi({
      description:
        "Unix timestamp (seconds) when the presence lapses. Default 15 minutes from now; later than 7 days from now is cut to 7 days; now or earlier sets offline",
    }),
  })
  .openapi("PresenceUpdate");

const params = z.object({ user_id: userRef.openapi({ param: { name: "user_id", in: "path" }, example: "me" }) });

/** One user's Presence object (`ref`: an id, `@username` or `me`); 404 for no such user. */
export async function userPresence(c: Context<AppEnv>, ref: string) {
  const id = await resolveUserRef(c, ref);
  const row = await getPresence(c.var.db, id, now(c));
  if (!row) throw ApiError.notFound("no such user");
  return ok(c, renderPresence(row, viewContext(c).origin));
}

readAlongsideToken("/presence", () => [presenceVersionQuery()]);

export const presenceRoutes = createRouter()
  .openapi(
    defineRoute(ANY_TOKEN, {
      method: "get",
      path: "/presence",
      tags: ["Presence"],
      summary: "Presence of every user who is not offline (newest update first)",
      description:
        "Every user whose status is live (not offline, not past its expiration: 15 minutes after the last update unless set), newest update first; disabled users never show. The rendered list is kept between requests and served again while no presence, and no listed user's name, username or avatar, changed (one database round trip). Any token; emits nothing.",
      responses: { 200: Envelope(z.array(PresenceSchema), "Presence objects", [examplePresence]), ...errors(401) },
    }),
    async (c) => {
      // One round trip when the list is unchanged: its version came with the token lookup.
      const origin = viewContext(c).origin;
      const at = now(c);
      const cachedList = cachedPresenceList(c.get("alongside")?.[0], origin, at);
      return okEncoded(c, cachedList ?? renderPresenceList(await runBatch(c.var.db, [...presenceListReads(at)]), origin, at));
    },
  )
  .openapi(
    defineRoute(ANY_TOKEN, {
      method: "get",
      path: "/users/{user_id}/presence",
      tags: ["Presence"],
      summary: "A user's presence (`offline` without `last_seen_at` if they never set one)",
      description: "One user's status: live text (`online` or their own), or `offline` with `last_seen_at`. Any token; emits nothing.",
      request: { params },
      responses: { 200: Envelope(PresenceSchema, "Presence object", examplePresence), ...errors(400, 401, 403, 404) },
    }),
    (c) => userPresence(c, c.req.valid("param").user_id),
  )
  .openapi(
    defineRoute(userToken("presence"), {
      method: "put",
      path: "/users/me/presence",
      tags: ["Presence"],
      summary: "Set the caller's presence",
      description:
        "Sets the caller's status from the form or JSON field `presence`: `online` (empty or `1`), `offline` " +
        "(`offline` or `0`), or any text up to 100 characters, until `expiration` (unix seconds; default 15 minutes from now, at most 7 days, " +
        "a past time sets offline; not an integer: 400). With the query parameter `update_presence` (and `update_presence_expiration`) the parameter wins over the " +
        "body and the update happens once. Needs a user token with `presence`. Emits a `user_presence` event when the status changes " +
        "(not on plain renewals).",
      request: {
        body: {
          required: false,
          content: {
            "application/x-www-form-urlencoded": { schema: PresenceBody },
            "multipart/form-data": { schema: PresenceBody },
            "application/json": { schema: PresenceBody },
          },
        },
      },
      responses: { 200: Envelope(PresenceSchema, "The updated Presence object", examplePresence), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const user = currentUser(c);
      const done = appliedPresence(c);
      if (done) {
        if (!done.ok) throw done.error;
        return ok(c, done.presence);
      }
      const fields = await readFields(c);
      const at = now(c);
      const expiresAt = parseExpiration(stringField(fields, "expiration"), "expiration", at);
      const status = expiresAt !== undefined && expiresAt <= at ? null : parseStatus(stringField(fields, "presence"), "presence");
      return ok(c, await setUserPresence(c, user, status, status === null ? undefined : expiresAt));
    },
  );
