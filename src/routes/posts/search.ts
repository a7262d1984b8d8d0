import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../../auth/access";
import { ApiError } from "../../http/errors";
import { parsePage } from "../../http/pagination";
import { createRouter, defineRoute, errors } from "../../http/route";
import { parseIso } from "../../http/time";
import { normalizeDomain } from "../../stores/messages";
import { readPosts } from "../../stores/posts";
import { postSearchPage, type PostSearch } from "../../stores/search/posts";
import { normalizeTag } from "../../text";
import { viewContext } from "../../views/context";
import { listFilters, ListQuery, postList, readOptions, renderPage, type Ctx } from "./common";

// GET /posts/search: full-text post search with the filters of the public reference.

const MAX_TERMS = 32;
const MAX_LIST = 200;
const FILE_KINDS = ["video", "audio", "image", "other"];
const USER_TYPES = ["human", "feed", "bot"];

const text = (description: string) => z.string().optional().openapi({ description });

export const SearchQuery = ListQuery.extend({
  q: z.string().max(1024).optional().openapi({ description: "Words the posts contain (all of them; stemmed)" }),
  order: z
    .enum(["id", "relevance"], { message: "must be id or relevance" })
    .optional()
    .openapi({ description: "`relevance` (default; the same as `id` without `q`) or `id` (newest first)" }),
  client_id: text("Only posts created by this client (its client id)"),
  created_after: text("ISO 8601: posts created after this time"),
  created_before: text("ISO 8601: posts created before this time"),
  creator_id: text("Only posts by this user (id, `@username`, or `me` with a user token)"),
  exclude_user_ids: text("Comma-separated user ids whose posts are left out"),
  file_id: text("Posts with this file attached"),
  file_kinds: text("Comma-separated kinds of attached files: video, audio, image, other"),
  has_mentions: text("1: only posts with mentions; 0: only posts without (the other mention filters are then ignored)"),
  is_directed: text("1: only posts with leading mentions"),
  is_nsfw: text("0: leave NSFW posts out"),
  is_reply: text("1: only replies; 0: only posts that are not replies"),
  is_revised: text("1: only revised posts"),
  leading_mentions: text("Comma-separated usernames mentioned at the start of the post; any match"),
  mentions: text("Comma-separated usernames mentioned; any match"),
  poll_id: text("Posts with this poll attached"),
  raw_types: text("Comma-separated raw types attached; any match"),
  reply_to: text("Only replies to this post"),
  tags: text("Comma-separated tags; any match"),
  thread_id: text("Only posts of this thread"),
  url_domains: text("Comma-separated link domains (without scheme or `www`); any match"),
  urls: text("Comma-separated link URLs; any match"),
  user_types: text("Comma-separated author types: human, feed, bot"),
});
type SearchQueryValue = z.infer<typeof SearchQuery>;

const csv = (v: string | undefined) =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

function list(name: string, v: string | undefined): string[] {
  const items = csv(v);
  if (items.length > MAX_LIST) throw ApiError.badRequest(`'${name}' lists more than ${MAX_LIST} values`);
  return items;
}

function oneOf(name: string, values: string[], allowed: string[]): string[] {
  const bad = values.find((v) => !allowed.includes(v));
  if (bad !== undefined) throw ApiError.badRequest(`'${name}' has unknown value '${bad.slice(0, 32)}' (allowed: ${allowed.join(", ")})`);
  return values;
}

function intParam(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === "") return undefined;
  if (!/^\d{1,18}$/.test(v)) throw ApiError.badRequest(`'${name}' must be an integer id`);
  return Number(v);
}

/** `0`/`1` (or false/true); anything else is a 400 naming the parameter. */
function bit(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined || v === "") return undefined;
  if (v === "1" || v === "true") return true;
  if (v === "0" || v === "false") return false;
  throw ApiError.badRequest(`'${name}' must be 0 or 1`);
}

function isoParam(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === "") return undefined;
  const t = parseIso(v);
  if (t === null) throw ApiError.badRequest(`'${name}' must be an ISO 8601 timestamp`);
  return t;
}

/** Validates and normalises the search query. */
export function parseSearch(c: Ctx, q: SearchQueryValue): PostSearch {
  const terms = (q.q ?? "").split(/\s+/).filter((t) => /[\p{L}\p{N}]/u.test(t));
  if (terms.length > MAX_TERMS) throw ApiError.badRequest(`'q' has more than ${MAX_TERMS} words`);
  let creator: PostSearch["creator"];
  if (q.creator_id !== undefined && q.creator_id !== "") {
    const v = q.creator_id;
    if (/^\d{1,18}$/.test(v)) creator = { id: Number(v) };
    else if (v === "me" && c.var.auth?.user) creator = { id: c.var.auth.user.id };
    else if (/^@[A-Za-z0-9_]{1,20}$/.test(v)) creator = { username: v.slice(1).toLowerCase() };
    else throw ApiError.badRequest("'creator_id' must be an integer user id, '@username' or 'me' (with a user token)");
  }
  const excluded = list("exclude_user_ids", q.exclude_user_ids);
  if (excluded.some((id) => !/^\d{1,18}$/.test(id))) throw ApiError.badRequest("'exclude_user_ids' must be comma-separated integer user ids");
  const names = (name: string, v: string | undefined) => list(name, v).map((n) => n.replace(/^@/, "").toLowerCase());
  return {
    terms,
    order: q.order ?? "relevance",
    clientId: q.client_id || undefined,
    createdAfter: isoParam("created_after", q.created_after),
    createdBefore: isoParam("created_before", q.created_before),
    creator,
    excludeUserIds: excluded.map(Number),
    fileId: intParam("file_id", q.file_id),
    fileKinds: oneOf("file_kinds", list("file_kinds", q.file_kinds), FILE_KINDS),
    hasMentions: bit("has_mentions", q.has_mentions),
    directedOnly: bit("is_directed", q.is_directed) === true,
    excludeNsfw: bit("is_nsfw", q.is_nsfw) === false,
    isReply: bit("is_reply", q.is_reply),
    revisedOnly: bit("is_revised", q.is_revised) === true,
    leadingMentions: names("leading_mentions", q.leading_mentions),
    mentions: names("mentions", q.mentions),
    pollId: intParam("poll_id", q.poll_id),
    rawTypes: list("raw_types", q.raw_types),
    replyTo: intParam("reply_to", q.reply_to),
    tags: list("tags", q.tags).map((t) => normalizeTag(t.replace(/^#/, ""))),
    threadId: intParam("thread_id", q.thread_id),
    urlDomains: list("url_domains", q.url_domains).map(normalizeDomain),
    urls: list("urls", q.urls),
    userTypes: oneOf("user_types", list("user_types", q.user_types), USER_TYPES),
  };
}

export const postSearchRoutes = createRouter().openapi(
  defineRoute(PUBLIC, {
    method: "get",
    path: "/posts/search",
    tags: ["Post search"],
    summary: "Search posts",
    description:
      "No token needed. Live posts of every user type (no reposts), as the caller may see them (mutes and blocks, and the general " +
      "post parameters, apply). Every word of `q` must occur (stemmed, matched literally, never as query syntax). " +
      "`order=relevance` ranks the 1,000 newest matching posts and pages by keyset: `before_id`/`since_id` name a post of the " +
      "result list; `order=id` (and any search without `q`) is newest first and reaches every match. Without any parameter: " +
      "every post, newest first. Paginated. Emits nothing.",
    request: { query: SearchQuery },
    responses: { 200: postList("Paginated posts"), ...errors(400) },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const search = parseSearch(c, q);
    const page = parsePage(q);
    const viewerId = viewContext(c).viewerId;
    const reads = { ...readOptions(c), paged: true };
    // The actors' statement embeds the page: then it stays SQL, else it comes compiled once per shape.
    const pageIds = postSearchPage(search, page, viewerId, listFilters(c), !!(reads.bookmarkedBy || reads.repostedBy));
    const set = await readPosts(c.var.db, viewerId, pageIds, reads);
    return renderPage(c, set, page);
  },
);
