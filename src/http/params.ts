import { z } from "@hono/zod-openapi";
import { MORE_LIMITS } from "../config";
import { ApiError } from "./errors";

// The general parameters of users and posts (the public reference's "General User Parameters" and
// "General Post Parameters"): zod fragments for the query schema of every route that returns those
// objects (so a bad value is a 400 naming the parameter before the handler runs, and each is
// documented), and their meaning once validated: how objects are rendered (`Shape`, read by the
// views through the view context) and which posts a list holds (`PostFilters`, read by the stores).

const FLAG_VALUES = ["0", "1", "true", "false"] as const;

/** A 0/1 query flag (`true`/`false` are accepted too); anything else is a 400 naming it. */
export const queryFlag = (description: string) => z.enum(FLAG_VALUES, { message: "must be 0 or 1" }).optional().openapi({ description });

/** Parameters of every endpoint that returns users (directly or embedded). */
export const userParams = {
  include_html: queryFlag("0: leave `html` out of post and user `content` (takes priority over the two below). Default 1"),
  include_user_html: queryFlag("0: leave `html` out of user `content`. Default 1"),
  include_counts: queryFlag("0: leave `counts` out of users and posts. Default 1"),
  include_user: queryFlag("0: objects carry `user_id` (a string) instead of the embedded `user`. Default 1"),
  include_presence: queryFlag("1: users carry `presence` (their live status, or `offline`). Default 0"),
  include_raw: queryFlag("1: include `raw` on all objects. Default 0"),
  include_user_raw: queryFlag("1: include `raw` on users. Default 0"),
};

/** Parameters of every endpoint that returns posts: how each post is rendered (plus the user parameters). */
export const postParams = {
  ...userParams,
  include_post_html: queryFlag("0: leave `html` out of post `content` (`include_html` takes priority). Default 1"),
  include_client: queryFlag("0: a post's `source` is its client id (a string) instead of the client object. Default 1"),
  include_bookmarked_by: queryFlag("1: posts carry `bookmarked_by`, the 10 users who bookmarked them most recently (GET endpoints). Default 0"),
  include_reposted_by: queryFlag("1: posts carry `reposted_by`, the 10 users who reposted them most recently (GET endpoints). Default 0"),
  include_post_raw: queryFlag("1: include `raw` on posts. Default 0"),
};

/** Parameters of every endpoint that returns messages: how each message is rendered (plus the user parameters). */
export const messageParams = {
  ...userParams,
  include_html: queryFlag("0: leave `html` out of message and user `content` (takes priority over the two below). Default 1"),
  include_message_html: queryFlag("0: leave `html` out of message `content` (`include_html` takes priority). Default 1"),
  include_client: queryFlag("0: a message's `source` is its client id (a string) instead of the client object. Default 1"),
  include_message_raw: queryFlag("1: include `raw` on messages. Default 0"),
};

/** Parameters of lists of messages (plus how each is rendered). */
export const messageListParams = {
  ...messageParams,
  include_deleted: queryFlag("0: leave deleted messages out. Default 1: they are listed as `is_deleted` messages without content"),
};

/** Parameters of every endpoint that returns polls: how each poll is rendered (plus the user parameters). */
export const pollParams = {
  ...userParams,
  include_poll_raw: queryFlag("1: include `raw` on polls. Default 0"),
};

/** Parameters of lists of polls: which polls the list holds (plus how each is rendered). */
export const pollListParams = {
  ...pollParams,
  include_closed: queryFlag("0: leave out closed polls. Default 1"),
  include_private: queryFlag("0: leave out private polls. Default 1"),
  poll_types: z.string().max(4096).optional().openapi({ description: "Only polls of these types (comma-separated). Default: every type" }),
  exclude_poll_types: z
    .string()
    .max(4096)
    .optional()
    .openapi({ description: "Leave out polls of these types (comma-separated); ignored when `poll_types` is given" }),
};

/** Parameters of lists of posts: which posts the list holds. */
export const postListParams = {
  ...postParams,
  include_deleted: queryFlag("0: leave deleted posts out. Default 1: they are listed as `is_deleted` posts without content"),
  include_directed_posts: queryFlag(
    "0: leave out posts whose leading mentions name someone the caller does not follow (the caller's own posts, and posts directed at the caller, stay). Default 1",
  ),
  include_mention_posts: queryFlag("0: leave out posts that mention anyone. Default 1"),
  include_replies: queryFlag("0: leave out replies. Default 1"),
  include_muted: queryFlag("1: keep posts of users the caller muted. Default 0 (users who block or are blocked by the caller stay out)"),
};

/** How users and posts are rendered for this request (the general parameters, validated). */
export interface Shape {
  userHtml: boolean;
  postHtml: boolean;
  counts: boolean;
  /** false: `user_id` instead of the embedded user. */
  includeUser: boolean;
  /** false: a post's `source` is the client id. */
  client: boolean;
  presence: boolean;
  userRaw: boolean;
  postRaw: boolean;
  bookmarkedBy: boolean;
  repostedBy: boolean;
  messageHtml: boolean;
  messageRaw: boolean;
  pollRaw: boolean;
}

export const DEFAULT_SHAPE: Shape = {
  userHtml: true,
  postHtml: true,
  counts: true,
  includeUser: true,
  client: true,
  presence: false,
  userRaw: false,
  postRaw: false,
  bookmarkedBy: false,
  repostedBy: false,
  messageHtml: true,
  messageRaw: false,
  pollRaw: false,
};

type Query = Record<string, string | undefined>;

/** A validated flag's value, or `fallback` when absent. */
export function flagValue(v: string | undefined, fallback: boolean): boolean {
  if (v === "1" || v === "true") return true;
  if (v === "0" || v === "false") return false;
  return fallback;
}

/** The rendering the request's query asks for (values were validated by the route's schema). */
export function shapeOf(q: Query): Shape {
  const html = q.include_html === undefined ? undefined : flagValue(q.include_html, true);
  const allRaw = flagValue(q.include_raw, false);
  return {
    userHtml: html ?? flagValue(q.include_user_html, true),
    postHtml: html ?? flagValue(q.include_post_html, true),
    counts: flagValue(q.include_counts, true),
    includeUser: flagValue(q.include_user, true),
    client: flagValue(q.include_client, true),
    presence: flagValue(q.include_presence, false),
    userRaw: allRaw || flagValue(q.include_user_raw, false),
    postRaw: allRaw || flagValue(q.include_post_raw, false),
    bookmarkedBy: flagValue(q.include_bookmarked_by, false),
    repostedBy: flagValue(q.include_reposted_by, false),
    messageHtml: html ?? flagValue(q.include_message_html, true),
    messageRaw: allRaw || flagValue(q.include_message_raw, false),
    pollRaw: allRaw || flagValue(q.include_poll_raw, false),
  };
}

/** Which posts a list holds (the filtering general post parameters). */
export interface PostFilters {
  deleted: boolean;
  directed: boolean;
  mentionPosts: boolean;
  replies: boolean;
  muted: boolean;
  /** Only on a user's mentions: keep posts where the mention is a copy mention. */
  copyMentions: boolean;
}

export const DEFAULT_POST_FILTERS: PostFilters = { deleted: true, directed: true, mentionPosts: true, replies: true, muted: false, copyMentions: true };

export function postFiltersOf(q: Query): PostFilters {
  return {
    deleted: flagValue(q.include_deleted, true),
    directed: flagValue(q.include_directed_posts, true),
    mentionPosts: flagValue(q.include_mention_posts, true),
    replies: flagValue(q.include_replies, true),
    muted: flagValue(q.include_muted, false),
    copyMentions: flagValue(q.include_copy_mentions, true),
  };
}

/**
 * A 400 naming `name` when an `ids=` list names more than `MORE_LIMITS.idsPerRequest` items
 * (each is looked up, however few are returned).
 */
export function checkIdCount(name: string, count: number): void {
  const max = MORE_LIMITS.idsPerRequest;
  if (count > max) throw ApiError.badRequest(`'${name}' may list at most ${max} ids`);
}
