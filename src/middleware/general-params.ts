import type { MiddlewareHandler } from "hono";
import { assertCleanQuery } from "../http/clean-text";
import { ApiError } from "../http/errors";
import type { AppEnv } from "../http/types";

/** The 0/1 general parameters of users, posts and channels (src/http/params.ts), on whatever endpoint they are given. */
const FLAGS = new Set([
  "include_html",
  "include_user_html",
  "include_post_html",
  "include_counts",
  "include_user",
  "include_client",
  "include_presence",
  "include_raw",
  "include_user_raw",
  "include_post_raw",
  "include_bookmarked_by",
  "include_reposted_by",
  "include_deleted",
  "include_directed_posts",
  "include_mention_posts",
  "include_copy_mentions",
  "include_replies",
  "include_muted",
  "include_message_html",
  "include_message_raw",
  "include_poll_raw",
  "include_closed",
  "include_private",
  // The general channel parameters (src/routes/channels/common.ts).
  "include_read",
  "include_marker",
  "include_inactive",
  "include_channel_raw",
  "include_recent_message",
  "include_limited_users",
]);

/**
 * A general parameter given with a value other than 0/1 (or true/false) is a 400 naming it on
 * every endpoint, before the endpoint runs, whether or not its route lists the parameter: the
 * views honour them wherever users and posts are rendered, so none may be silently ignored.
 */
export const generalParams: MiddlewareHandler<AppEnv> = async (c, next) => {
  const url = c.req.url;
  // Every query parameter, declared by the route or not (`poll_token_{id}`, ...): no NUL reaches SQL.
  assertCleanQuery(url);
  if (url.includes("include_")) {
    for (const [name, value] of new URL(url).searchParams) {
      if (FLAGS.has(name) && !/^(0|1|true|false)$/.test(value)) throw ApiError.badRequest(`'${name}' must be 0 or 1`);
    }
  }
  await next();
};
