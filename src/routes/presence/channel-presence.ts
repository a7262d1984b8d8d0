import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { currentUser, userToken } from "../../auth/access";
import { MORE_LIMITS } from "../../config";
import { publish } from "../../events/publish";
import { readFields, stringField } from "../../http/body";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { examplePresence } from "../../http/examples";
import { resolveUserRef } from "../../http/refs";
import { createRouter, defineRoute, Envelope, errors, idString, userRef } from "../../http/route";
import { now } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { parseStatus } from "../../services/presence";
import { parseExpiration } from "../../services/presence-expiry";
import { getChannelPresence, listChannelPresence, writeChannelPresence } from "../../stores/channel-presence";
import { channelAccess, getChannel, type ChannelRecord } from "../../stores/channels";
import { OFFLINE } from "../../stores/presence";
import { viewContext } from "../../views/context";
import { renderPresence, type PresenceView } from "../../views/presence";
import { requireChannelScope } from "../channels/input";
import { PresenceSchema } from "./presence";

const channelId = idString("channel id").openapi({ param: { name: "channel_id", in: "path" }, example: "1" });
const ChannelParams = z.object({ channel_id: channelId });
const UserChannelParams = z.object({ user_id: userRef.openapi({ param: { name: "user_id", in: "path" }, example: "me" }), channel_id: channelId });

const ChannelPresenceBody = z
  .object({
    presence: z
      .union([z.string(), z.number()])
      .nullable()
      .optional()
      .openapi({ description: "Unset or `1`: `online`; `offline` or `0`: offline (removed from the channel's list); other text up to 100 characters" }),
    expiration: z.union([z.string(), z.number()]).nullable().optional().openapi({
      description:
        "Unix timestamp (seconds) when the presence lapses. Default 15 minutes from now; later than 7 days is cut to 7 days; now or earlier sets offline",
    }),
  })
  .openapi("ChannelPresenceUpdate");

/**
 * The channel, when the caller may read it (else 404) and holds `messages` for its type (or
 * `public_messages` for a public channel; else 403), as the reference's "Scope: messages" says.
 */
async function presenceChannel(c: Context<AppEnv>, id: number): Promise<ChannelRecord> {
  const viewerId = currentUser(c).id;
  const ch = await getChannel(c.var.db, id, viewerId);
  if (!ch || !channelAccess(ch, viewerId).read) throw ApiError.notFound("no such channel");
  requireChannelScope(c, ch);
  return ch;
}

/** The `user_channel_presence` event: a list of one Presence object; going offline is a deletion. */
function channelPresenceEvent(view: PresenceView, channelId: number) {
  const userId = Number(view.id);
  return {
    type: "user_channel_presence" as const,
    data: [view],
    ...(view.presence === OFFLINE ? { isDeleted: true } : {}),
    route: { actorId: userId, userIds: [userId], channelId },
  };
}

const ACCESS =
  "User token with `messages` (or `public_messages` for a public channel, or either extended to the channel's type); 404 for a channel the caller cannot read.";

/** Per-channel presence (resources/channels/presence.md). */
export const channelPresenceRoutes = createRouter()
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/channels/{channel_id}/presence",
      tags: ["Presence"],
      summary: "Presence of every user who is not offline in a channel (newest update first)",
      description:
        `Users whose status in this channel is live (not offline, not lapsed), newest update first; disabled users never show. ${ACCESS} ` +
        "Subscribable on a user stream (`connection_id`): `user_channel_presence` events of followed users, everyone not blocked with `include_not_followed=1`. Emits nothing.",
      request: {
        params: ChannelParams,
        query: z.object({
          include_not_followed: z
            .enum(["0", "1"])
            .optional()
            .openapi({ description: "User stream subscriptions only: 1 delivers the channel presence of users not followed too. Default 0" }),
        }),
      },
      responses: { 200: Envelope(z.array(PresenceSchema), "Presence objects", [examplePresence]), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const ch = await presenceChannel(c, Number(c.req.valid("param").channel_id));
      const origin = viewContext(c).origin;
      return ok(
        c,
        (await listChannelPresence(c.var.db, ch.id, now(c))).map((r) => renderPresence(r, origin)),
      );
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/users/{user_id}/presence/channels/{channel_id}",
      tags: ["Presence"],
      summary: "A user's presence in a channel (`offline` without `last_seen_at` if they never set one there)",
      description: `One user's status in one channel: live text, or \`offline\` with \`last_seen_at\`. ${ACCESS} Emits nothing.`,
      request: { params: UserChannelParams },
      responses: { 200: Envelope(PresenceSchema, "Presence object", examplePresence), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid("param");
      const ch = await presenceChannel(c, Number(p.channel_id));
      const userId = await resolveUserRef(c, p.user_id);
      const row = await getChannelPresence(c.var.db, ch.id, userId, now(c));
      if (!row) throw ApiError.notFound("no such user");
      return ok(c, renderPresence(row, viewContext(c).origin));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "put",
      path: "/users/me/presence/channels/{channel_id}",
      tags: ["Presence"],
      summary: "Set the caller's presence in a channel",
      description:
        "Sets the caller's status in this channel, separately from their global presence, from `presence` (as PUT /users/me/presence) until " +
        `\`expiration\` (unix seconds; default 15 minutes, at most 7 days, a past time sets offline; not an integer: 400). ${ACCESS} ` +
        "Emits a `user_channel_presence` event (with `meta.channel_id`) when the status changes; going offline is `is_deleted`. Lapsing emits nothing.",
      request: {
        params: ChannelParams,
        body: {
          required: false,
          content: {
            "application/x-www-form-urlencoded": { schema: ChannelPresenceBody },
            "multipart/form-data": { schema: ChannelPresenceBody },
            "application/json": { schema: ChannelPresenceBody },
          },
        },
      },
      responses: { 200: Envelope(PresenceSchema, "The updated Presence object", examplePresence), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const ch = await presenceChannel(c, Number(c.req.valid("param").channel_id));
      const fields = await readFields(c);
      const at = now(c);
      const expiresAt = parseExpiration(stringField(fields, "expiration"), "expiration", at);
      const status = expiresAt !== undefined && expiresAt <= at ? null : parseStatus(stringField(fields, "presence"), "presence");
      const written = await writeChannelPresence(c.var.db, ch.id, user.id, status, at, expiresAt ?? at + MORE_LIMITS.presenceLifetimeSeconds);
      const record = { userId: user.id, username: user.username, name: user.name, avatarUrl: user.avatarUrl, presence: status, lastSeenAt: at };
      const view = renderPresence(record, viewContext(c).origin);
      if (written.previous !== status) publish(c, channelPresenceEvent(view, ch.id));
      return ok(c, view);
    },
  );
