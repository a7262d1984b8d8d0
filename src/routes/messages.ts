import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { sql } from "drizzle-orm";
import { PUBLIC, currentUser, userToken } from "../auth/access";
import { hasScope } from "../auth/scopes";
import { publish } from "../events/publish";
import { readFields, stringField } from "../http/body";
import { ok } from "../http/envelope";
import { ApiError } from "../http/errors";
import { finishPage, pageQuery, parsePage } from "../http/pagination";
import { createRouter, defineRoute, Envelope, errors, idString } from "../http/route";
import { now, parseIso } from "../http/time";
import type { AppEnv } from "../http/types";
import { parseFlags, processForCreate } from "../services/text";
import { PM_TYPE } from "../stores/channel-sql";
import { channelAccess, pmKeyOf, pmParticipants, type ChannelRecord } from "../stores/channels";
import {
  NEW_MESSAGE_ID,
  REPORT_REASONS,
  channelForWrite,
  channelMessages,
  createMessage,
  deleteMessage,
  getMessage,
  messageFacets,
  normalizeDomain,
  pmParent,
  rawAttachments,
  reportMessage,
  type NewMessage,
  type ReportReason,
} from "../stores/messages";
import { searchMessages, type MessageSearch } from "../stores/search";
import { normalizeTag, withObjectId } from "../text";
import { exampleMessage } from "../http/examples";
import { renderChannel } from "../views/channel";
import { eventContext, viewContext } from "../views/context";
import { renderMessage } from "../views/message";
import { renderUser } from "../views/user";
import { markableStream } from "./markers";
import { markerWriteSql, newVersion } from "../stores/markers";
import { bit, csv, flagOn, includeRaw, intParam, jsonBool, rawQuery, rawSchema, requireChannelScope, resolveUserLists, userRefList } from "./channel-input";

const MessageSchema = z.object({ id: z.string(), channel_id: z.string() }).passthrough().openapi("Message");
const channelId = idString("channel id").openapi({ param: { name: "channel_id", in: "path" }, example: "1" });
const messageId = idString("message id").openapi({ param: { name: "message_id", in: "path" }, example: "1" });
const messageQuery = z.object({
  ...rawQuery,
  include_message_raw: z.string().optional().openapi({ description: "1: include `raw` on messages" }),
});

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
  const processed = await processForCreate(c, body.text, "message", parseFlags(body.entities));
  const token = `oid${crypto.randomUUID().replaceAll("-", "")}`;
  const text = withObjectId(processed, token);
  const raw = body.raw ?? null;
  const { pollId, fileIds } = rawAttachments(raw);
  // update_marker=1 (decisions §6): the `channel:{id}` marker moves to the new message, same batch.
  const markerName = "pm" in target ? sql`'channel:' || (SELECT id FROM channels WHERE pm_key = ${target.pm.key})` : `channel:${target.channelId}`;
  const markerWrite = flagOn(c.req.query("update_marker"))
    ? markerWriteSql({ userId: user.id, name: markerName, position: NEW_MESSAGE_ID, percentage: 0, reset: false, version: newVersion(), at: now(c) })
    : undefined;
  const created = await createMessage(c.var.db, {
    ...(markerWrite ? { extraWrites: [markerWrite] } : {}),
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
  });
  const ev = eventView(c);
  const msg = created.message;
  const mentioned = text.entities.mentions.filter((m) => m.id).map((m) => Number(m.id));
  publish(c, {
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

/** A channel the caller may read, with what they may do in it; 404 when not readable. */
function requireReadable(ch: ChannelRecord | undefined, viewerId: number | null) {
  const access = ch ? channelAccess(ch, viewerId) : null;
  if (!ch || !access?.read) throw ApiError.notFound("no such channel");
  return { ch, access };
}

const searchQuery = z.object({
  ...pageQuery,
  ...messageQuery.shape,
  q: z.string().max(1024).optional().openapi({ description: "Words the messages contain (all of them; stemmed)" }),
  order: z.enum(["id", "relevance"]).optional().openapi({ description: "`relevance` (default, bm25) or `id` (newest first)" }),
  channel_ids: z.string().min(1).openapi({ description: "`pm`, or comma-separated channel ids (at most 200)" }),
  client_id: z.string().max(64).optional().openapi({ description: "Only messages made through this client (`client_id`)." }),
  created_after: z.string().optional().openapi({ description: "Only messages created after this ISO 8601 time (exclusive).", example: "2026-03-01T00:00:00Z" }),
  created_before: z.string().optional().openapi({ description: "Only messages created before this ISO 8601 time (exclusive)." }),
  creator_id: z.string().optional().openapi({ description: "Only messages by this user: an integer id, `@username`, or `me`." }),
  file_id: z.string().optional().openapi({ description: "Only messages with this file attached (an integer file id)." }),
  file_kinds: z.string().optional().openapi({ description: "Only messages with attached files of these kinds, comma-separated: `audio`, `image`, `video`, `other`." }),
  is_nsfw: z.string().optional().openapi({ description: "`0` leaves out messages marked NSFW." }),
  is_reply: z.string().optional().openapi({ description: "`1`: only replies; `0`: only messages that reply to nothing." }),
  is_sticky: z.string().optional().openapi({ description: "`1`: only sticky messages." }),
  leading_mentions: z.string().optional().openapi({ description: "Only messages that start by mentioning these users, comma-separated usernames (with or without `@`)." }),
  mentions: z.string().optional().openapi({ description: "Only messages mentioning these users, comma-separated usernames (with or without `@`)." }),
  poll_id: z.string().optional().openapi({ description: "Only messages with this poll attached (an integer poll id)." }),
  raw_types: z.string().optional().openapi({ description: "Only messages carrying `raw` of these types, comma-separated." }),
  reply_to: z.string().optional().openapi({ description: "Only direct replies to this message id." }),
  tags: z.string().optional().openapi({ description: "Only messages with these hashtags, comma-separated (with or without `#`)." }),
  thread_id: z.string().optional().openapi({ description: "Only messages of this thread (the id of its first message)." }),
  url_domains: z.string().optional().openapi({ description: "Only messages linking to these domains, comma-separated.", example: "example.com" }),
  urls: z.string().optional().openapi({ description: "Only messages linking to these URLs, comma-separated." }),
  user_types: z.string().optional().openapi({ description: "Only messages by these kinds of account, comma-separated: `human`, `feed`, `bot`." }),
});
type SearchQuery = z.infer<typeof searchQuery>;

const MAX_SEARCH_TERMS = 32;
const MAX_SEARCH_CHANNELS = 200;
const FILE_KINDS = ["video", "audio", "image", "other"];
const USER_TYPES = ["human", "feed", "bot"];

function oneOf(name: string, values: string[], allowed: string[]): string[] {
  const bad = values.find((v) => !allowed.includes(v));
  if (bad !== undefined) throw ApiError.badRequest(`'${name}' has unknown value '${bad.slice(0, 32)}' (allowed: ${allowed.join(", ")})`);
  return values;
}

function isoParam(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === "") return undefined;
  const t = parseIso(v);
  if (t === null) throw ApiError.badRequest(`'${name}' must be an ISO 8601 timestamp`);
  return t;
}

/** Validates and normalises the search query (api.md "Message search"); the access rule for `pm` included. */
export function parseSearch(auth: AppEnv["Variables"]["auth"], q: SearchQuery): MessageSearch {
  let channels: MessageSearch["channels"];
  if (q.channel_ids.trim() === "pm") {
    if (!auth) throw ApiError.unauthorized("'channel_ids=pm' needs a user token");
    if (auth.kind !== "user") throw ApiError.forbidden("'channel_ids=pm' needs a user token");
    if (!hasScope(auth.scopes, "messages", PM_TYPE)) throw ApiError.forbidden("'channel_ids=pm' needs the 'messages' scope");
    channels = "pm";
  } else {
    const ids = csv(q.channel_ids);
    if (!ids.length || ids.some((id) => !/^\d{1,18}$/.test(id))) {
      throw ApiError.badRequest("'channel_ids' must be 'pm' or comma-separated integer channel ids");
    }
    if (ids.length > MAX_SEARCH_CHANNELS) throw ApiError.badRequest(`'channel_ids' names more than ${MAX_SEARCH_CHANNELS} channels`);
    channels = [...new Set(ids.map(Number))];
  }
  const terms = (q.q ?? "").split(/\s+/).filter((t) => /[\p{L}\p{N}]/u.test(t));
  if (terms.length > MAX_SEARCH_TERMS) throw ApiError.badRequest(`'q' has more than ${MAX_SEARCH_TERMS} words`);
  let creator: MessageSearch["creator"];
  if (q.creator_id !== undefined && q.creator_id !== "") {
    const v = q.creator_id;
    if (/^\d{1,18}$/.test(v)) creator = { id: Number(v) };
    else if (v === "me" && auth?.user) creator = { id: auth.user.id };
    else if (/^@[A-Za-z0-9_]{1,20}$/.test(v)) creator = { username: v.slice(1).toLowerCase() };
    else throw ApiError.badRequest("'creator_id' must be an integer user id, '@username' or 'me' (with a user token)");
  }
  const names = (v: string | undefined) => csv(v).map((n) => n.replace(/^@/, "").toLowerCase());
  return {
    terms,
    order: q.order ?? "relevance",
    channels,
    clientId: q.client_id || undefined,
    createdAfter: isoParam("created_after", q.created_after),
    createdBefore: isoParam("created_before", q.created_before),
    creator,
    fileId: intParam("file_id", q.file_id),
    fileKinds: oneOf("file_kinds", csv(q.file_kinds), FILE_KINDS),
    excludeNsfw: bit("is_nsfw", q.is_nsfw) === false,
    isReply: bit("is_reply", q.is_reply),
    stickyOnly: bit("is_sticky", q.is_sticky) === true,
    leadingMentions: names(q.leading_mentions),
    mentions: names(q.mentions),
    pollId: intParam("poll_id", q.poll_id),
    rawTypes: csv(q.raw_types),
    replyTo: intParam("reply_to", q.reply_to),
    tags: csv(q.tags).map((t) => normalizeTag(t.replace(/^#/, ""))),
    threadId: intParam("thread_id", q.thread_id),
    urlDomains: csv(q.url_domains).map(normalizeDomain),
    urls: csv(q.urls),
    userTypes: oneOf("user_types", csv(q.user_types), USER_TYPES),
  };
}

export const messageRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/messages/search",
      tags: ["Message search"],
      summary: "Full-text search of messages the caller may read",
      description:
        "FTS5 with porter stemming; every word of `q` must occur (words are matched literally, never as query syntax). " +
        "`order=relevance` ranks the 1,000 newest matching messages (after the ACL and every filter) by bm25 and pages by keyset: " +
        "`before_id`/`since_id` name a message of the result list (its `pagination_id`) and return what ranks after/before it; " +
        "without `q` it is the same as `order=id`. `order=id` is newest first and reaches every match. Public channels need no token; `channel_ids=pm` needs a " +
        "user token with the `messages` scope. Deleted messages never match.",
      request: { query: searchQuery },
      responses: { 200: Envelope(z.array(MessageSchema), "Message objects", [exampleMessage], { more: false, max_id: "1", min_id: "1" }), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const search = parseSearch(c.var.auth, q);
      const page = parsePage(q);
      const view = viewContext(c);
      const rows = await searchMessages(c.var.db, search, page, view.viewerId);
      const { items, meta } = finishPage(rows, page, (m) => m.paginationId!);
      return ok(c, items.map((m) => renderMessage(m, view, { raw: includeRaw(q, "message") })), meta);
    },
  )
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
      request: { params: z.object({ channel_id: channelId }), query: createQuery, body: json(z.object(messageFields)) },
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
      if (replyTo !== undefined && !found.parent) throw ApiError.badRequest("'reply_to' must be a message of this channel");
      const participants = ch.type === PM_TYPE && ch.pmKey ? pmParticipants(ch.pmKey) : [];
      return sendMessage(c, { channelId: ch.id }, body, found.parent, participants, includeRaw(c.req.valid("query"), "message"));
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/{channel_id}/messages",
      tags: ["Messages"],
      summary: "Messages of a channel, newest first (public channels need no token)",
      description: "Paginated by message id. Deleted messages are included (without content) unless `include_deleted=0`.",
      request: {
        params: z.object({ channel_id: channelId }),
        query: z.object({ ...pageQuery, ...messageQuery.shape, include_deleted: z.string().optional().openapi({ description: "`0` leaves deleted messages out (they are listed, without content, by default)." }) }),
      },
      responses: { 200: Envelope(z.array(MessageSchema), "Message objects", [exampleMessage], { marker: { name: "channel:1" }, more: false, max_id: "1", min_id: "1" }), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const view = viewContext(c);
      const channelId = Number(c.req.valid("param").channel_id);
      // A markable stream (decisions §6): marker `channel:{id}`, read in the page's batch.
      const marker = await markableStream(c, q, `channel:${channelId}`);
      const page = marker.page;
      const res = await channelMessages(c.var.db, channelId, view.viewerId, page, {
        includeDeleted: q.include_deleted === undefined || flagOn(q.include_deleted),
        markerRead: marker.read,
      });
      requireReadable(res.channel, view.viewerId);
      marker.done(res.markerRows);
      const { items, meta } = finishPage(res.messages, page, (m) => m.paginationId!);
      return ok(c, items.map((m) => renderMessage(m, view, { raw: includeRaw(q, "message") })), meta);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/{channel_id}/messages/{message_id}",
      tags: ["Messages"],
      summary: "A message (deleted ones show `is_deleted` and no content)",
      description:
        "One message of a channel the caller may read (public channels need no token). A deleted message keeps its id, user and counts and shows `is_deleted` without content. Emits nothing.",
      request: { params: z.object({ channel_id: channelId, message_id: messageId }), query: messageQuery },
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
      summary: "Delete a message (its author or the channel's owner)",
      description:
        "Deletes a message; it stays in lists as `is_deleted` without content. Its author or the channel's owner may delete it. Needs a user token. Emits a `message` event with `is_deleted`.",
      request: { params: z.object({ channel_id: channelId, message_id: messageId }), query: messageQuery },
      responses: { 200: Envelope(MessageSchema, "The deleted Message", { ...exampleMessage, content: undefined, is_deleted: true }), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const p = c.req.valid("param");
      const m = await getMessage(c.var.db, Number(p.channel_id), Number(p.message_id), user.id);
      if (!m) throw ApiError.notFound("no such message");
      requireChannelScope(c, m.channel!);
      if (m.userId !== user.id && m.channel!.ownerId !== user.id) {
        throw ApiError.forbidden("only the author or the channel's owner may delete a message");
      }
      const deleted = m.isDeleted ? m : await deleteMessage(c.var.db, m, user.id);
      if (!m.isDeleted) {
        publish(c, {
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
      request: { params: z.object({ channel_id: channelId, message_id: messageId }) },
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
