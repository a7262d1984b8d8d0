import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { sql } from "drizzle-orm";
import { PUBLIC, currentUser, userToken } from "../../auth/access";
import { checkTokenInFirstRead } from "../../auth/authenticate";
import { publish } from "../../events/publish";
import { readFields, stringField } from "../../http/body";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, Envelope, errors, idString } from "../../http/route";
import { now } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { parseFlags, processForCreate } from "../../services/text";
import { PM_TYPE, refreshUnreadSql } from "../../stores/channel-sql";
import { pmKeyOf, pmParticipants } from "../../stores/channels";
import {
  NEW_MESSAGE_ID,
  REPORT_REASONS,
  channelForWrite,
  createMessage,
  deleteMessage,
  getMessage,
  messageFacets,
  pmParent,
  rawAttachments,
  reportMessage,
  type NewMessage,
  type ReportReason,
} from "../../stores/messages";
import { withObjectId } from "../../text";
import { exampleMessage } from "../../http/examples";
import { renderChannel } from "../../views/channel";
import { eventContext, viewContext } from "../../views/context";
import { renderMessage } from "../../views/message";
import { renderUser } from "../../views/user";
import { markerWriteSql, newVersion } from "../../stores/markers";
import { csv, flagOn, includeRaw, jsonBool, rawSchema, requireChannelScope, resolveUserLists, userRefList } from "../channels/input";
import { MessageSchema, messagePath, messageQuery, requireReadable } from "./common";
import { prepareRaw } from "../../services/raw-core";

/** The search route's query parsing (kept importable from here). */
export { parseSearch } from "./search";

/** Message creation also takes `update_marker=1`: the channel's marker moves to the new message. */
const createQuery = messageQuery.extend({
  update_marker: z.string().optional().openapi({ description: "1: set the `channel:{id}` marker to the new message" }),
});

const messageFields = {
  text: z.string().min(1).openapi({ description: "Up to 2048 characters (decisions §5)" }),
  reply_to: idString("message id").optional(),
  is_nsfw: jsonBool.optional(),
  raw: rawSchema.optional(),
  entities: z.object({ parse_links: z.any().optional(), parse_markdown_links: z.any().optional() }).passthrough().optional(),
};
type MessageBody = { text: string; reply_to?: string; is_nsfw?: boolean; raw?: unknown; entities?: unknown };

const json = <T extends z.ZodTypeAny>(schema: T) => ({ content: { "application/json": { schema } }, required: true });

/** Events are rendered for no particular viewer (decisions §8). */
const eventView = (c: Context<AppEnv>) => eventContext(c);

/**
 * Processes the text and writes the message (see `createMessage`), then publishes the message,
 * a new private-message channel and any auto-subscriptions.
 */
async function sendMessage(
  c: Context<AppEnv>,
  target: NewMessage["target"],
  body: MessageBody,
  replyTo: { id: number; threadId: number } | undefined,
  autoSubscribe: number[],
  showRaw: boolean,
) {
  const user = currentUser(c);
  const [processed, raw] = await Promise.all([
    processForCreate(c, body.text, "message", parseFlags(body.entities)),
    prepareRaw(c, body.raw ?? null, "message"),
  ]);
  const token = `oid${crypto.randomUUID().replaceAll("-", "")}`;
  const text = withObjectId(processed, token);
  const { pollId, fileIds } = rawAttachments(raw);
  // update_marker=1 (decisions §6): the `channel:{id}` marker moves to the new message, same batch.
  const markerName = "pm" in target ? sql`'channel:' || (SELECT id FROM channels WHERE pm_key = ${target.pm.key})` : `channel:${target.channelId}`;
  const markerChannel = "pm" in target ? sql`(SELECT id FROM channels WHERE pm_key = ${target.pm.key})` : target.channelId;
  const markerWrite = flagOn(c.req.query("update_marker"))
    ? markerWriteSql({ userId: user.id, name: markerName, position: NEW_MESSAGE_ID, percentage: 0, reset: false, version: newVersion(), at: now(c) })
    : undefined;
  const created = await createMessage(c.var.db, {
    ...(markerWrite ? { extraWrites: [markerWrite, refreshUnreadSql(user.id, markerChannel)] } : {}),
    target,
    userId: user.id,
    appId: c.var.auth!.app.id,
    createdAt: now(c),
    text,
    objectIdToken: token,
    replyTo,
    isNsfw: body.is_nsfw ?? false,
    raw,
    pollId,
    fileIds,
    facets: messageFacets(text, raw),
    autoSubscribe,
    event: { origin: eventView(c).origin, route: { actorId: user.id } },
  });
  const ev = eventView(c);
  const msg = created.message;
  const mentioned = text.entities.mentions.filter((m) => m.id).map((m) => Number(m.id));
  publish(c, {
    seq: created.seq,
    type: "message",
    data: renderMessage(msg, ev, { raw: true }),
    route: { actorId: user.id, channelId: msg.channelId, userIds: [...new Set([...mentioned, ...autoSubscribe])] },
  });
  const ch = created.channel;
  if (ch && created.channelCreated) {
    publish(c, { type: "channel", data: renderChannel(ch, ev, { raw: true }), route: { actorId: user.id, channelId: ch.id, userIds: autoSubscribe } });
  }
  if (ch) {
    for (const u of created.newSubscribers) {
      publish(c, {
        type: "channel_subscription",
        data: { user: renderUser(u, ev), channel: renderChannel(ch, ev, { raw: true }) },
        route: { actorId: user.id, channelId: ch.id, userIds: [u.id] },
      });
    }
  }
  return ok(c, renderMessage(msg, viewContext(c), { raw: showRaw }), {}, 201);
}

// Posting a message reads the channel first (channelForWrite) and touches nothing else before.
checkTokenInFirstRead("POST", "/channels/:channel_id/messages");

export const messageRoutes = createRouter()
  .openapi(
    defineRoute(userToken(), {
      method: "post",
      path: "/channels/pm/messages",
      tags: ["Messages"],
      summary: "Send a private message: to the private-message channel of these users, created on first use",
      description:
        "`destinations`: user ids or @usernames (at most 200). Every participant not muting the channel is (re)subscribed. " +
        "Needs the `messages` scope (or `messages:io.example.core.pm`).",
      request: {
        query: createQuery,
        body: json(
          z.object({
            ...messageFields,
            destinations: z.union([userRefList.min(1), z.string().min(1)]),
          }),
        ),
      },
      responses: { 201: Envelope(MessageSchema, "The new Message", exampleMessage, { code: 201 }), ...errors(400, 401, 403, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const body = c.req.valid("json");
      requireChannelScope(c, { type: PM_TYPE, readPublic: false });
      const refs = typeof body.destinations === "string" ? csv(body.destinations) : body.destinations;
      if (refs.length > 200) throw ApiError.badRequest("'destinations' names more than 200 users");
      const { ids, blockers } = await resolveUserLists(c, { destinations: refs }, user.id);
      const destinations = ids.destinations.filter((id) => id !== user.id);
      if (!destinations.length) throw ApiError.badRequest("'destinations' must name at least one other user");
      if (destinations.some((id) => blockers.has(id))) throw ApiError.forbidden("a user in 'destinations' does not accept messages from you");
      const key = pmKeyOf([user.id, ...destinations]);
      let parent: { id: number; threadId: number } | undefined;
      if (body.reply_to !== undefined) {
        parent = await pmParent(c.var.db, key, Number(body.reply_to));
        if (!parent) throw ApiError.badRequest("'reply_to' must be a message of this private-message channel");
      }
      return sendMessage(c, { pm: { key, ownerId: user.id, destinations } }, body, parent, pmParticipants(key), includeRaw(c.req.valid("query"), "message"));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "post",
      path: "/channels/{channel_id}/messages",
      tags: ["Messages"],
      summary: "Post a message to a channel the ACL lets the caller write to",
      description:
        "Posts a message (`text` up to 2048 characters, optional `reply_to` in the same channel, `is_nsfw`, `raw`) to a channel the ACL lets the caller write to. Needs a user token with `messages` (or `public_messages` for channels everyone can read). Emits a `message` event, and `channel` and `channel_subscription` events for users it subscribes.",
      request: { params: z.object({ channel_id: messagePath.shape.channel_id }), query: createQuery, body: json(z.object(messageFields)) },
      responses: { 201: Envelope(MessageSchema, "The new Message", exampleMessage, { code: 201 }), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const body = c.req.valid("json");
      const replyTo = body.reply_to !== undefined ? Number(body.reply_to) : undefined;
      const found = await channelForWrite(c.var.db, Number(c.req.valid("param").channel_id), user.id, replyTo);
      const { ch, access } = requireReadable(found.channel, user.id);
      requireChannelScope(c, ch);
      if (!access.write) throw ApiError.forbidden("you may not write to this channel");
      if (!ch.isActive) throw ApiError.badRequest("this channel was deactivated: it takes no new messages");
      if (replyTo !== undefined && !found.parent) throw ApiError.badRequest("'reply_to' must be a message of this channel");
      const participants = ch.type === PM_TYPE && ch.pmKey ? pmParticipants(ch.pmKey) : [];
      return sendMessage(c, { channelId: ch.id }, body, found.parent, participants, includeRaw(c.req.valid("query"), "message"));
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/{channel_id}/messages/{message_id}",
      tags: ["Messages"],
      summary: "A message (deleted ones show `is_deleted` and no content)",
      description:
        "One message of a channel the caller may read (public channels need no token), or one the caller wrote. A deleted message keeps its id, user and counts and shows `is_deleted` without content (and `deleted_by` when a moderator deleted it). Emits nothing.",
      request: { params: messagePath, query: messageQuery },
      responses: { 200: Envelope(MessageSchema, "Message object", exampleMessage), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const p = c.req.valid("param");
      const view = viewContext(c);
      const m = await getMessage(c.var.db, Number(p.channel_id), Number(p.message_id), view.viewerId);
      if (!m) throw ApiError.notFound("no such message");
      return ok(c, renderMessage(m, view, { raw: includeRaw(c.req.valid("query"), "message") }));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "delete",
      path: "/channels/{channel_id}/messages/{message_id}",
      tags: ["Messages"],
      summary: "Delete a message (its author; in other than private-message channels also the owner and full-access users)",
      description:
        "Deletes a message; it stays in lists as `is_deleted` without content, and is no longer sticky. Its author may delete it (even after losing access to the channel); " +
        "in channels other than private-message ones the channel's owner and users with `full` access may delete anyone's, and the message then shows `deleted_by`. " +
        "Needs a user token with `messages` (or `public_messages` for public channels). Emits a `message` event with `is_deleted`.",
      request: { params: messagePath, query: messageQuery },
      responses: {
        200: Envelope(MessageSchema, "The deleted Message", { ...exampleMessage, content: undefined, is_deleted: true }),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const user = currentUser(c);
      const p = c.req.valid("param");
      const m = await getMessage(c.var.db, Number(p.channel_id), Number(p.message_id), user.id);
      if (!m) throw ApiError.notFound("no such message");
      requireChannelScope(c, m.channel!);
      if (m.userId !== user.id && !(m.channel!.full && m.channel!.type !== PM_TYPE)) {
        throw ApiError.forbidden("only the author, or the channel's owner and full-access users outside private messages, may delete this message");
      }
      const ref = { origin: eventView(c).origin, route: { actorId: user.id, channelId: m.channelId } };
      const { message: deleted, seq } = m.isDeleted ? { message: m, seq: undefined } : await deleteMessage(c.var.db, m, user.id, { ref, at: now(c) });
      // No sequence: a concurrent request deleted it first and has the event.
      if (seq !== undefined) {
        publish(c, {
          seq,
          type: "message",
          data: renderMessage(deleted, eventView(c)),
          isDeleted: true,
          route: { actorId: user.id, channelId: deleted.channelId },
        });
      }
      return ok(c, renderMessage(deleted, viewContext(c), { raw: includeRaw(c.req.valid("query"), "message") }));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "post",
      path: "/channels/{channel_id}/messages/{message_id}/report",
      tags: ["Report"],
      summary: "Report a message for moderation",
      description:
        "Body (JSON, form-urlencoded or multipart) field `reason`: `account_type`, `nsfw`, `soliciting` or `user_abuse`. " +
        "201 with the reported Message. A message the caller cannot read (or a deleted one) is a 404.",
      request: { params: messagePath },
      responses: { 201: Envelope(MessageSchema, "The reported Message", exampleMessage, { code: 201 }), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const p = c.req.valid("param");
      const reason = stringField(await readFields(c), "reason");
      if (!reason || !(REPORT_REASONS as readonly string[]).includes(reason)) {
        throw ApiError.badRequest(`'reason' must be one of ${REPORT_REASONS.join(", ")}`);
      }
      const m = await reportMessage(c.var.db, {
        channelId: Number(p.channel_id),
        messageId: Number(p.message_id),
        reporterId: user.id,
        reason: reason as ReportReason,
        at: now(c),
      });
      if (!m) throw ApiError.notFound("no such message");
      return ok(c, renderMessage(m, viewContext(c)), {}, 201);
    },
  );
