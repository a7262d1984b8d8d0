import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ANY_TOKEN, currentUser, PUBLIC, userToken } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { finishPage, parsePage, type Page } from "../../http/pagination";
import { queryFlag, flagValue } from "../../http/params";
import { resolveUserRef } from "../../http/refs";
import { createRouter, defineRoute, errors } from "../../http/route";
import { now, parseIso } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { userSearchPage, type UserSearch } from "../../stores/search/users";
import { followPage, hiddenPage, readUserPage, suggestedPage, SUGGESTED_ACTIVE_DAYS, type FollowOrder, type ListedUser } from "../../stores/user-lists";
import { viewContext } from "../../views/context";
import { renderUser } from "../../views/user";
import { userIdParam, userList, UserListQuery } from "./common";

// Lists of users: who a user follows and who follows them, the caller's muted and blocked users,
// user search and suggestions. Paginated (decisions §2), one round trip each, with the general
// user parameters. Mounted ahead of `/users/{user_id}` so that `search` and `suggested` are not
// taken for user references.

type Ctx = Context<AppEnv>;

function answer(c: Ctx, users: ListedUser[], page: Page) {
  const { items, meta } = finishPage(users, page, (u) => u.pid);
  const view = viewContext(c);
  return ok(
    c,
    items.map((u) => ({ ...renderUser(u, view), pagination_id: String(u.pid) })),
    meta,
  );
}

const FOLLOW_ORDERS = ["followed_at", "id", "last_post_id"] as const;
const FollowQuery = UserListQuery.extend({
  order: z
    .enum(FOLLOW_ORDERS, { message: "must be followed_at, id or last_post_id" })
    .optional()
    .openapi({
      description:
        "`followed_at` (default): most recent follow first, the follow's id as `pagination_id`; `id`: by user id; " +
        "`last_post_id`: by the user's latest post, its id as `pagination_id` (users who never posted are left out)",
    }),
});

const followRoute = (kind: "following" | "followers") =>
  defineRoute(ANY_TOKEN, {
    method: "get",
    path: `/users/{user_id}/${kind}`,
    tags: ["Users"],
    summary: kind === "following" ? "Users a user follows" : "Users who follow a user",
    description: "Needs a token (user or app). Paginated; takes the general user parameters. An unknown user is a 404. Emits nothing.",
    request: { params: userIdParam, query: FollowQuery },
    responses: { 200: userList("Paginated users"), ...errors(400, 401, 403, 404) },
  });

async function follows(c: Ctx, kind: "following" | "followers", ref: string, q: z.infer<typeof FollowQuery>) {
  const userId = await resolveUserRef(c, ref);
  const page = parsePage(q);
  const order: FollowOrder = q.order ?? "followed_at";
  const { found, users } = await readUserPage(c.var.db, followPage(kind, userId, order, page), viewContext(c).viewerId, userId);
  if (!found) throw ApiError.notFound("no such user");
  return answer(c, users, page);
}

const hiddenRoute = (kind: "muted" | "blocked") =>
  defineRoute(userToken(), {
    method: "get",
    path: `/users/{user_id}/${kind}`,
    tags: ["Users"],
    summary: kind === "muted" ? "Users the caller muted" : "Users the caller blocked",
    description:
      "Needs a user token (any scope); users may only list their own (`me` or their id; anyone else's is a 403). Paginated by user id; " +
      "takes the general user parameters. Emits nothing.",
    request: { params: userIdParam, query: UserListQuery },
    responses: { 200: userList("Paginated users"), ...errors(400, 401, 403, 404) },
  });

async function hidden(c: Ctx, kind: "muted" | "blocked", ref: string, q: z.infer<typeof UserListQuery>) {
  const me = currentUser(c);
  if ((await resolveUserRef(c, ref)) !== me.id) throw ApiError.forbidden(`users may only list their own ${kind} users`);
  const page = parsePage(q);
  const { users } = await readUserPage(c.var.db, hiddenPage(kind, me.id, page), me.id);
  return answer(c, users, page);
}

const USER_TYPES = ["human", "feed", "bot"];
const MAX_TERMS = 32;

const SearchQuery = UserListQuery.extend({
  q: z.string().max(1024).optional().openapi({ description: "Words the username, name or profile text contain (each as a word prefix; all required)" }),
  order: z
    .enum(["id", "relevance"], { message: "must be id or relevance" })
    .optional()
    .openapi({ description: "`relevance` (default with `q`) or `id` (newest first)" }),
  created_after: z.string().optional().openapi({ description: "ISO 8601: users created after this time" }),
  created_before: z.string().optional().openapi({ description: "ISO 8601: users created before this time" }),
  is_follower: queryFlag("1: only users who follow the caller; 0: only users who do not (needs a user token)"),
  is_following: queryFlag("1: only users the caller follows; 0: only users the caller does not follow (needs a user token)"),
  locale: z.string().max(32).optional().openapi({ description: "Only users with this locale, e.g. `en_US`" }),
  timezone: z.string().max(64).optional().openapi({ description: "Only users with this timezone, e.g. `America/Chicago`" }),
  user_types: z.string().optional().openapi({ description: "Comma-separated: human, feed, bot" }),
  types: z.string().optional().openapi({ description: "The older name of `user_types` (ignored when `user_types` is given)" }),
});

function isoParam(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === "") return undefined;
  const t = parseIso(v);
  if (t === null) throw ApiError.badRequest(`'${name}' must be an ISO 8601 timestamp`);
  return t;
}

function parseUserSearch(c: Ctx, q: z.infer<typeof SearchQuery>): UserSearch {
  const terms = (q.q ?? "").split(/\s+/).filter((t) => /[\p{L}\p{N}]/u.test(t));
  if (terms.length > MAX_TERMS) throw ApiError.badRequest(`'q' has more than ${MAX_TERMS} words`);
  const relational = q.is_follower !== undefined || q.is_following !== undefined;
  if (relational && !c.var.auth) throw ApiError.unauthorized("'is_follower' and 'is_following' need a user token");
  if (relational && !c.var.auth?.user) throw ApiError.forbidden("'is_follower' and 'is_following' need a user token");
  const typesName = q.user_types !== undefined ? "user_types" : "types";
  const types = (q.user_types ?? q.types ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = types.find((t) => !USER_TYPES.includes(t));
  if (bad !== undefined) throw ApiError.badRequest(`'${typesName}' has unknown value '${bad.slice(0, 32)}' (allowed: ${USER_TYPES.join(", ")})`);
  return {
    terms,
    order: q.order ?? (terms.length ? "relevance" : "id"),
    createdAfter: isoParam("created_after", q.created_after),
    createdBefore: isoParam("created_before", q.created_before),
    isFollower: q.is_follower === undefined ? undefined : flagValue(q.is_follower, false),
    isFollowing: q.is_following === undefined ? undefined : flagValue(q.is_following, false),
    locale: q.locale || undefined,
    timezone: q.timezone || undefined,
    userTypes: types,
  };
}

export const userListRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/users/search",
      tags: ["Users"],
      summary: "Search users",
      description:
        "No token needed (`is_follower` / `is_following` need a user token). Every word of `q` must begin a word of the username, " +
        "name or profile text (accents ignored). `order=relevance` (the default with `q`) ranks the 1,000 newest matching users " +
        "(username first, then name, then profile text) and pages by keyset: `before_id`/`since_id` name a user of the result " +
        "list. Without `q`, or with `order=id`: newest users first. Disabled users never appear. Paginated. Emits nothing.",
      request: { query: SearchQuery },
      responses: { 200: userList("Paginated users"), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const search = parseUserSearch(c, q);
      const page = parsePage(q);
      const viewerId = viewContext(c).viewerId;
      const { users } = await readUserPage(c.var.db, userSearchPage(search, page, viewerId), viewerId);
      return answer(c, users, page);
    },
  )
  .openapi(
    defineRoute(userToken("follow"), {
      method: "get",
      path: "/users/suggested",
      tags: ["Users"],
      summary: "Users to follow",
      description:
        `Needs a user token with \`follow\`. Users followed by the users the caller follows (anyone, when the caller follows nobody) who posted in the last ${SUGGESTED_ACTIVE_DAYS} days, ` +
        "leaving out the caller, users already followed, muted users and blocks either way. Most recently active first; " +
        "`pagination_id` is the user's latest post. Paginated. Emits nothing.",
      request: { query: UserListQuery },
      responses: { 200: userList("Paginated users"), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const me = currentUser(c);
      const q = c.req.valid("query");
      const page = parsePage(q);
      const { users } = await readUserPage(c.var.db, suggestedPage(me.id, now(c), page), me.id);
      return answer(c, users, page);
    },
  )
  .openapi(followRoute("following"), (c) => follows(c, "following", c.req.valid("param").user_id, c.req.valid("query")))
  .openapi(followRoute("followers"), (c) => follows(c, "followers", c.req.valid("param").user_id, c.req.valid("query")))
  .openapi(hiddenRoute("muted"), (c) => hidden(c, "muted", c.req.valid("param").user_id, c.req.valid("query")))
  .openapi(hiddenRoute("blocked"), (c) => hidden(c, "blocked", c.req.valid("param").user_id, c.req.valid("query")));
