import { z } from "@hono/zod-openapi";
import { currentUser, PUBLIC, userToken } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { queryFlag } from "../../http/params";
import { resolveUserRef } from "../../http/refs";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { now } from "../../http/time";
import { EXPLORE_STREAMS, readList, type ExploreSlug, type Stream } from "../../stores/post-lists";
import { normalizeTag } from "../../text";
import { viewContext } from "../../views/context";
import { markableStream } from "../users/markers";
import { EXAMPLE_POST, listFilters, ListQuery, postList, postParam, readOptions, renderPage, userParam, type Ctx } from "./common";

// Lists of posts: the streams (global, personal, unified, a user's posts and mentions, a thread),
// tags, the explore streams and a user's bookmarks. Every list takes the pagination parameters
// and the general post parameters (rendering and filters), and answers in one round trip.

type ListQueryValue = z.infer<typeof ListQuery>;

/**
 * A list's page. `marker` names the stream's marker (decisions §6: `global`, `personal`,
 * `mentions`): bound values that read it are resolved and `meta.marker` is set by
 * `markableStream`, the marker being read in the page's batch.
 */
async function list(c: Ctx, q: ListQueryValue, s: Stream, marker: string | null = null, notFound = "no such user") {
  const m = await markableStream(c, q, marker);
  const { found, set, markerRows, changes } = await readList(c.var.db, s, m.page, viewContext(c).viewerId, {
    filters: listFilters(c),
    reads: readOptions(c),
    markerRead: m.read,
  });
  if (!found) throw ApiError.notFound(notFound);
  m.done(markerRows);
  return renderPage(c, set, m.page, changes);
}

const paginated =
  "Paginated (`count`, `before_id`, `since_id`); takes the general post parameters; emits nothing. " +
  "With `since_id` (dynamic polling), `meta.deleted_ids` and `meta.revised_ids` list the stream's posts deleted or revised after post `since_id` was created (bookmarks excepted). ";

const ExploreSchema = z.object({ slug: z.string(), title: z.string(), description: z.string(), url: z.string() }).openapi("ExploreStream");

const tagParam = z.object({
  tag: z
    .string()
    .min(1)
    .max(256)
    .openapi({ param: { name: "tag", in: "path" }, description: "The tag, with or without `#`", example: "oldies" }),
});
const slugParam = z.object({
  slug: z
    .string()
    .openapi({ param: { name: "slug", in: "path" }, description: `One of ${EXPLORE_STREAMS.map((s) => s.slug).join(", ")}`, example: "conversations" }),
});

const tagRoute = (path: string, deprecated: boolean) =>
  defineRoute(PUBLIC, {
    method: "get",
    path,
    tags: ["Post streams"],
    summary: deprecated ? "Posts with a tag (the older path of `GET /posts/tags/{tag}`)" : "Posts with a tag",
    description:
      paginated +
      "No token needed. Posts of any user whose text carries the tag; tags match as the text processor compares them (lower case, `_` ignored). " +
      "`GET /posts/tag/{tag}`, the path older clients call, is the same list.",
    // The older path is served but left out of the document: it would make every `/posts/{post_id}/…` path ambiguous.
    ...(deprecated ? { deprecated: true, hide: true } : {}),
    request: { params: tagParam, query: ListQuery },
    responses: { 200: postList("Paginated posts, newest first"), ...errors(400) },
  });

function tagList(c: Ctx, given: string, q: ListQueryValue) {
  const tag = normalizeTag(given.replace(/^#/, ""));
  if (!tag) throw ApiError.badRequest("'tag' must name a tag");
  return list(c, q, { kind: "tag", tag });
}

export const postStreamRoutes = createRouter()
  .openapi(tagRoute("/posts/tags/{tag}", false), (c) => tagList(c, c.req.valid("param").tag, c.req.valid("query")))
  .openapi(tagRoute("/posts/tag/{tag}", true), (c) => tagList(c, c.req.valid("param").tag, c.req.valid("query")))
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/streams/explore",
      tags: ["Post streams"],
      summary: "The explore streams",
      description: "No token needed. Each stream's `url` is its list of posts. Emits nothing.",
      responses: {
        200: Envelope(z.array(ExploreSchema), "Explore streams", [
          {
            slug: "conversations",
            title: "Conversations",
            description: EXPLORE_STREAMS[0].description,
            url: "https://api.example.social/v1/posts/streams/explore/conversations",
          },
        ]),
      },
    }),
    (c) => {
      const origin = viewContext(c).origin;
      return ok(
        c,
        EXPLORE_STREAMS.map((s) => ({ slug: s.slug, title: s.title, description: s.description, url: `${origin}/v1/posts/streams/explore/${s.slug}` })),
      );
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/streams/explore/{slug}",
      tags: ["Post streams"],
      summary: "The posts of an explore stream",
      description:
        paginated +
        "No token needed. Human users' posts, no reposts: " +
        EXPLORE_STREAMS.map((s) => `\`${s.slug}\`: ${s.description}`).join(" ") +
        " An unknown slug is a 404.",
      request: { params: slugParam, query: ListQuery },
      responses: { 200: postList("Paginated posts, newest first"), ...errors(400, 404) },
    }),
    (c) => {
      const slug = c.req.valid("param").slug;
      if (!EXPLORE_STREAMS.some((s) => s.slug === slug)) throw ApiError.notFound(`no explore stream '${slug.slice(0, 64)}'`);
      return list(c, c.req.valid("query"), { kind: "explore", slug: slug as ExploreSlug, at: now(c) });
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/streams/global",
      tags: ["Post streams"],
      summary: "All human users' posts and replies (no reposts); marker `global`",
      description: paginated + "No token needed; with a user token, `meta.marker` carries the `global` marker.",
      request: { query: ListQuery },
      responses: { 200: postList("Paginated posts"), ...errors(400) },
    }),
    (c) => list(c, c.req.valid("query"), { kind: "global" }, "global"),
  )
  .openapi(
    defineRoute(userToken("stream"), {
      method: "get",
      path: "/posts/streams/me",
      tags: ["Post streams"],
      summary: "The caller's and followed users' posts and reposts; marker `personal`",
      description: paginated + "Needs a user token with `stream`. Subscribable on a user stream (`connection_id`).",
      request: { query: ListQuery },
      responses: { 200: postList("Paginated posts"), ...errors(400, 401, 403) },
    }),
    (c) => list(c, c.req.valid("query"), { kind: "personal", userId: currentUser(c).id, withMentions: false }, "personal"),
  )
  .openapi(
    defineRoute(userToken("stream"), {
      method: "get",
      path: "/posts/streams/unified",
      tags: ["Post streams"],
      summary: "The personal stream plus posts mentioning the caller; marker `personal`",
      description: paginated + "Needs a user token with `stream`. Subscribable on a user stream (`connection_id`).",
      request: { query: ListQuery },
      responses: { 200: postList("Paginated posts"), ...errors(400, 401, 403) },
    }),
    (c) => list(c, c.req.valid("query"), { kind: "personal", userId: currentUser(c).id, withMentions: true }, "personal"),
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/users/{user_id}/posts",
      tags: ["Post streams"],
      summary: "Posts and reposts by a user",
      description: paginated + "No token needed (`me` needs a user token). Posts of a user the caller muted or blocked are listed too.",
      request: { params: userParam, query: ListQuery },
      responses: { 200: postList("Paginated posts"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const userId = await resolveUserRef(c, c.req.valid("param").user_id);
      return list(c, c.req.valid("query"), { kind: "user", userId });
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/users/{user_id}/mentions",
      tags: ["Post streams"],
      summary: "Posts mentioning a user (`me`: needs a user token; marker `mentions`)",
      description: paginated + "No token needed. `include_copy_mentions=0` leaves out posts where the mention is a copy mention (`/@name`).",
      request: {
        params: userParam,
        query: ListQuery.extend({ include_copy_mentions: queryFlag("0: leave out posts where the user's mention is a copy mention. Default 1") }),
      },
      responses: { 200: postList("Paginated posts"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const userId = await resolveUserRef(c, c.req.valid("param").user_id);
      return list(c, c.req.valid("query"), { kind: "mentions", userId }, userId === viewContext(c).viewerId ? "mentions" : null);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/{post_id}/thread",
      tags: ["Post streams"],
      summary: "Posts of the thread a post belongs to",
      description: paginated + "No token needed.",
      request: { params: postParam, query: ListQuery },
      responses: { 200: postList("Paginated posts"), ...errors(400, 404) },
    }),
    (c) => list(c, c.req.valid("query"), { kind: "thread", postId: Number(c.req.valid("param").post_id) }, null, "no such post"),
  )
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/users/{user_id}/bookmarks",
      tags: ["Post streams"],
      summary: "Posts a user bookmarked, most recently bookmarked first",
      description:
        paginated +
        "Needs a user token. Anyone's bookmarks can be listed; on the caller's own, each post carries the bookmark's `note` (when it has one). " +
        "The bookmark's id is the item's `pagination_id`; bookmarked posts deleted since are listed as `is_deleted` (`include_deleted=0` hides them).",
      request: { params: userParam, query: ListQuery },
      responses: {
        200: Envelope(z.array(z.object({}).passthrough()), "Paginated posts", [{ ...EXAMPLE_POST, note: "Robert has great posts.", pagination_id: "88" }], {
          more: false,
          min_id: "88",
          max_id: "88",
        }),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const userId = await resolveUserRef(c, c.req.valid("param").user_id);
      return list(c, c.req.valid("query"), { kind: "bookmarks", userId, withNotes: userId === currentUser(c).id });
    },
  );
