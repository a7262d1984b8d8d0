import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { PUBLIC, currentUser, userToken } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { exampleMessage } from "../../http/examples";
import { finishPage, pageQuery, parsePage } from "../../http/pagination";
import { flagValue } from "../../http/params";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import type { AppEnv } from "../../http/types";
import { PM_TYPE } from "../../stores/channel-sql";
import { setSticky, stickyMessages } from "../../stores/message-lists";
import { getMessage } from "../../stores/messages";
import { viewContext } from "../../views/context";
import { renderMessage } from "../../views/message";
import { requireChannelScope } from "../channels/input";
import { MessageSchema, channelId, messageListQuery, messagePath, messageQuery, requireReadable } from "./common";

// Sticky messages: per-channel pins set by the channel's moderators (full access), or by any
// participant of a private-message channel.

const RULE =
  "Users with `full` access to the channel (its owner and full-access ACL members) may do this; in private-message channels (`io.example.core.pm`) every participant may. " +
  "Needs a user token with `messages` (or `public_messages` for public channels). A deleted message cannot be stuck. Emits nothing.";

/** Sets or clears the flag after checking the caller's rights (404 unreadable, 403 not allowed, 400 deleted). */
async function sticky(c: Context<AppEnv>, ids: { channel_id: string; message_id: string }, on: boolean) {
  const user = currentUser(c);
  const m = await getMessage(c.var.db, Number(ids.channel_id), Number(ids.message_id), user.id);
  if (!m || !m.channel!.read) throw ApiError.notFound("no such message");
  const ch = m.channel!;
  requireChannelScope(c, ch);
  const allowed = ch.type === PM_TYPE ? ch.write : ch.full;
  if (!allowed) throw ApiError.forbidden(`only users with full access to the channel may ${on ? "sticky" : "unsticky"} its messages`);
  if (m.isDeleted) throw ApiError.badRequest(`'message_id' ${m.id} is deleted`);
  const updated = m.isSticky === on ? m : await setSticky(c.var.db, m, user.id, on);
  return ok(c, renderMessage(updated, viewContext(c)));
}

const stickyRoute = (method: "put" | "delete") =>
  defineRoute(userToken(), {
    method,
    path: "/channels/{channel_id}/messages/{message_id}/sticky",
    tags: ["Messages"],
    summary: method === "put" ? "Sticky a message (`is_sticky` true)" : "Unsticky a message (`is_sticky` false)",
    description: `${method === "put" ? "Makes the message sticky: it is listed in `GET /channels/{id}/sticky_messages`, matches the message search filter `is_sticky=1`, and the channel has `has_sticky_messages`." : "Makes the message no longer sticky."} ${RULE}`,
    request: { params: messagePath, query: messageQuery },
    responses: {
      200: Envelope(MessageSchema, method === "put" ? "The stuck message" : "The unstuck message", { ...exampleMessage, is_sticky: method === "put" }),
      ...errors(400, 401, 403, 404),
    },
  });

export const messageStickyRoutes = createRouter()
  .openapi(stickyRoute("put"), (c) => sticky(c, c.req.valid("param"), true))
  .openapi(stickyRoute("delete"), (c) => sticky(c, c.req.valid("param"), false))
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/{channel_id}/sticky_messages",
      tags: ["Messages"],
      summary: "Sticky messages of a channel, newest first (paginated)",
      description:
        "The channel's sticky messages, newest message first, paginated by message id (`pagination_id`). The caller must be able to read the channel (public channels need no token). Emits nothing.",
      request: { params: z.object({ channel_id: channelId }), query: messageListQuery.extend(pageQuery) },
      responses: {
        200: Envelope(z.array(MessageSchema), "Message objects", [{ ...exampleMessage, is_sticky: true }], { more: false, max_id: "1", min_id: "1" }),
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const view = viewContext(c);
      const page = parsePage(q);
      const res = await stickyMessages(c.var.db, Number(c.req.valid("param").channel_id), view.viewerId, page, {
        includeDeleted: flagValue(q.include_deleted, true),
      });
      requireReadable(res.channel, view.viewerId);
      const { items, meta } = finishPage(res.messages, page, (m) => m.paginationId!);
      return ok(
        c,
        items.map((m) => renderMessage(m, view)),
        meta,
      );
    },
  );
