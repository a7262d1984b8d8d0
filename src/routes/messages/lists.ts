import { z } from "@hono/zod-openapi";
import { PUBLIC, currentUser, userToken } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { exampleMessage } from "../../http/examples";
import { finishPage, pageQuery, parsePage } from "../../http/pagination";
import { flagValue } from "../../http/params";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { messagesByIds, threadMessages, userMessages } from "../../stores/message-lists";
import { channelMessages } from "../../stores/messages";
import { viewContext } from "../../views/context";
import { renderMessage } from "../../views/message";
import { markableStream } from "../users/markers";
import { MAX_MESSAGE_IDS, MessageSchema, channelId, messageListQuery, messagePath, messageTypes, parseIdList, requireReadable } from "./common";

// Lists of messages: a channel's messages, messages by id, the caller's messages, a thread.

const listQuery = messageListQuery.extend(pageQuery);
const pageMeta = { more: false, max_id: "1", min_id: "1" };
const includeDeleted = (q: { include_deleted?: string }) => flagValue(q.include_deleted, true);

export const messageListRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/messages",
      tags: ["Messages"],
      summary: `Messages by id: the first ${MAX_MESSAGE_IDS} found that the caller may read`,
      description:
        `Messages by id, in the order asked, each once; ids of unknown messages, of messages in channels the caller may not read (unless the caller wrote them) are skipped. ` +
        `At most the first ${MAX_MESSAGE_IDS} ids are looked up. Public channels need no token. Emits nothing.`,
      request: {
        query: messageListQuery.extend({
          ids: z.string({ message: "is required" }).openapi({ description: "Comma-separated message ids", example: "4,11,12" }),
        }),
      },
      responses: { 200: Envelope(z.array(MessageSchema), "Message objects, in the order asked", [exampleMessage]), ...errors(400) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const view = viewContext(c);
      const ids = parseIdList("ids", q.ids, MAX_MESSAGE_IDS);
      const found = await messagesByIds(c.var.db, ids, view.viewerId, { includeDeleted: includeDeleted(q) });
      return ok(
        c,
        found.map((m) => renderMessage(m, view)),
      );
    },
  )
  .openapi(
    defineRoute(userToken("messages"), {
      method: "get",
      path: "/users/me/messages",
      tags: ["Messages"],
      summary: "Messages the caller wrote, newest first (paginated)",
      description:
        "Every message the caller wrote, in any channel, newest first, paginated by message id (`before_id`/`since_id`/`count`). " +
        "A token whose `messages` scopes are all narrowed to channel types (`messages:<type>`) sees only messages in channels of those types. Needs a user token with `messages`; emits nothing.",
      request: { query: listQuery },
      responses: { 200: Envelope(z.array(MessageSchema), "Message objects", [exampleMessage], pageMeta), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const user = currentUser(c);
      const page = parsePage(q);
      const rows = await userMessages(c.var.db, user.id, page, { includeDeleted: includeDeleted(q), types: messageTypes(c) });
      const { items, meta } = finishPage(rows, page, (m) => m.paginationId!);
      const view = viewContext(c);
      return ok(
        c,
        items.map((m) => renderMessage(m, view)),
        meta,
      );
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/{channel_id}/messages",
      tags: ["Messages"],
      summary: "Messages of a channel, newest first (public channels need no token)",
      description:
        "Paginated by message id; a markable stream (marker `channel:{id}` in `meta.marker` for user tokens). Deleted messages are included (without content) unless `include_deleted=0`. " +
        "With `since_id`, `meta.deleted_ids` lists the channel's messages deleted after message `since_id` was created (dynamic polling; at most the newest 500). Emits nothing.",
      request: { params: z.object({ channel_id: channelId }), query: listQuery },
      responses: {
        200: Envelope(z.array(MessageSchema), "Message objects", [exampleMessage], { marker: { name: "channel:1" }, ...pageMeta }),
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const view = viewContext(c);
      const id = Number(c.req.valid("param").channel_id);
      // A markable stream (decisions §6): marker `channel:{id}`, read in the page's batch.
      const marker = await markableStream(c, q, `channel:${id}`);
      const page = marker.page;
      const res = await channelMessages(c.var.db, id, view.viewerId, page, { includeDeleted: includeDeleted(q), markerRead: marker.read });
      requireReadable(res.channel, view.viewerId);
      marker.done(res.markerRows);
      const { items, meta } = finishPage(res.messages, page, (m) => m.paginationId!);
      // Dynamic polling: messages deleted since `since_id` (messages are not revised).
      return ok(
        c,
        items.map((m) => renderMessage(m, view)),
        { ...meta, ...(res.deletedIds.length > 0 && { deleted_ids: res.deletedIds }) },
      );
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/{channel_id}/messages/{message_id}/thread",
      tags: ["Messages"],
      summary: "The thread of a message: every message with its `thread_id`, newest first (paginated)",
      description:
        "Messages of the channel sharing the message's `thread_id` (the thread's first message and every reply below it), newest first, paginated by message id. " +
        "The caller must be able to read the channel (public channels need no token). Deleted messages are included (without content) unless `include_deleted=0`. Emits nothing.",
      request: { params: messagePath, query: listQuery },
      responses: { 200: Envelope(z.array(MessageSchema), "Message objects", [exampleMessage], pageMeta), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const p = c.req.valid("param");
      const view = viewContext(c);
      const page = parsePage(q);
      const res = await threadMessages(c.var.db, Number(p.channel_id), Number(p.message_id), view.viewerId, page, { includeDeleted: includeDeleted(q) });
      requireReadable(res.channel, view.viewerId);
      if (!res.found) throw ApiError.notFound("no such message");
      const { items, meta } = finishPage(res.messages, page, (m) => m.paginationId!);
      return ok(
        c,
        items.map((m) => renderMessage(m, view)),
        meta,
      );
    },
  );
