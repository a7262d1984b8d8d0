import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../../auth/access";
import { hasScope } from "../../auth/scopes";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { exampleMessage } from "../../http/examples";
import { finishPage, pageQuery, parsePage } from "../../http/pagination";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { parseIso } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { PM_TYPE } from "../../stores/channel-sql";
import { normalizeDomain } from "../../stores/messages";
import { searchMessages, type MessageSearch } from "../../stores/search";
import { normalizeTag } from "../../text";
import { viewContext } from "../../views/context";
import { renderMessage } from "../../views/message";
import { bit, csv, includeRaw, intParam } from "../channels/input";
import { MessageSchema, messageQuery } from "./common";

// GET /channels/messages/search: the query's validation and the route (the search itself is
// src/stores/search).

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
  file_kinds: z
    .string()
    .optional()
    .openapi({ description: "Only messages with attached files of these kinds, comma-separated: `audio`, `image`, `video`, `other`." }),
  is_nsfw: z.string().optional().openapi({ description: "`0` leaves out messages marked NSFW." }),
  is_reply: z.string().optional().openapi({ description: "`1`: only replies; `0`: only messages that reply to nothing." }),
  is_sticky: z.string().optional().openapi({ description: "`1`: only sticky messages." }),
  leading_mentions: z
    .string()
    .optional()
    .openapi({ description: "Only messages that start by mentioning these users, comma-separated usernames (with or without `@`)." }),
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

export const messageSearchRoutes = createRouter().openapi(
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
    responses: {
      200: Envelope(z.array(MessageSchema), "Message objects", [exampleMessage], { more: false, max_id: "1", min_id: "1" }),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const search = parseSearch(c.var.auth, q);
    const page = parsePage(q);
    const view = viewContext(c);
    const rows = await searchMessages(c.var.db, search, page, view.viewerId);
    const { items, meta } = finishPage(rows, page, (m) => m.paginationId!);
    return ok(
      c,
      items.map((m) => renderMessage(m, view, { raw: includeRaw(q, "message") })),
      meta,
    );
  },
);
