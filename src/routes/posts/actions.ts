import { z } from "@hono/zod-openapi";
import { currentUser, PUBLIC, userToken } from "../../auth/access";
import { checkTokenInFirstRead } from "../../auth/authenticate";
import { publish } from "../../events/publish";
import { readFields } from "../../http/body";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { finishPage, pageQuery, parsePage } from "../../http/pagination";
import { userParams } from "../../http/params";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { iso, now } from "../../http/time";
import { POST_INTERACTION_ACTIONS, readPostInteractions } from "../../stores/interactions";
import {
  addBookmark,
  createRepost,
  deleteRepost,
  POST_REPORT_REASONS,
  removeBookmark,
  reportPost,
  setBookmarkNote,
  type PostReportReason,
} from "../../stores/post-writes";
import { getPostBasics, readPost, type PostSet, type PostView } from "../../stores/posts";
import { codePointLength } from "../../text";
import { eventContext, shapeOfView, viewContext } from "../../views/context";
import { neutralUser, renderPostForEvent } from "../../views/post";
import { renderUser } from "../../views/user";
import { parseActions } from "../users/interactions";
import { EXAMPLE_POST, onePost, PostQuery, PostSchema, postEventRef, postParam, publishPost, render, WRITE_POST, type Ctx } from "./common";
import { EXAMPLE_USER } from "../users/common";

// Actions on a post: repost, bookmark, report, and the list of interactions with it.

const NOTE_MAX_LENGTH = 128;

// Repost and bookmark read the post before they write (getPostBasics), and touch nothing else first.
checkTokenInFirstRead("PUT", "/posts/:post_id/repost");
checkTokenInFirstRead("PUT", "/posts/:post_id/bookmark");

/** Documents an optional body sent as JSON, form-urlencoded or multipart (read with `readFields`). */
const optionalBody = (schema: z.ZodTypeAny) => ({
  required: false,
  content: { "application/json": { schema }, "application/x-www-form-urlencoded": { schema }, "multipart/form-data": { schema } },
});

const RepostBody = z
  .object({
    is_nsfw: z
      .union([z.boolean(), z.enum(["0", "1", "true", "false"]), z.literal(0), z.literal(1)])
      .optional()
      .openapi({ description: "Marks the repost NSFW" }),
  })
  .openapi("RepostBody");
const BookmarkBody = z
  .object({
    note: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: `Up to ${NOTE_MAX_LENGTH} characters, shown only on the caller's own bookmarks list; null clears it` }),
  })
  .openapi("BookmarkBody");
const ReportBody = z.object({ reason: z.enum(POST_REPORT_REASONS).openapi({ description: "Why the post is reported" }) }).openapi("PostReport");

function flagField(v: unknown, name: string): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === "0" || v === "false") return false;
  if (v === true || v === 1 || v === "1" || v === "true") return true;
  throw ApiError.badRequest(`'${name}' must be true or false`);
}

/** The post's current state, as the caller sees it (after a repeated action that changed nothing). */
async function current(c: Ctx, id: number) {
  const found = await readPost(c.var.db, id, currentUser(c).id);
  if (!found) throw ApiError.notFound("no such post");
  return ok(c, render(c, found.view, found.set));
}

/** The bookmark event `{user, post}`: the caller and the post, for no particular viewer. */
function publishBookmark(c: Ctx, view: PostView, set: PostSet, isDeleted = false, seq?: number) {
  const me = currentUser(c);
  const ctx = eventContext(c);
  const bookmarks = Math.max(0, me.bookmarks + (isDeleted ? -1 : 1));
  publish(c, {
    seq,
    type: "bookmark",
    data: { user: renderUser({ ...neutralUser(me), bookmarks }, ctx), post: renderPostForEvent(view, set.byId, ctx) },
    isDeleted,
    route: { actorId: me.id, userIds: [view.post.userId] },
  });
}

const InteractionSchema = z
  .object({ pagination_id: z.string(), event_date: z.string(), action: z.enum(["bookmark", "repost", "reply"]), users: z.array(z.object({}).passthrough()) })
  .openapi("PostInteraction");

const actionList = (what: string) =>
  z
    .string()
    .optional()
    .openapi({ description: `Comma-separated actions ${what}: ${POST_INTERACTION_ACTIONS.join(", ")}` });

const interactionsRoute = (path: string, deprecated: boolean) =>
  defineRoute(PUBLIC, {
    method: "get",
    path,
    tags: ["Interactions"],
    summary: deprecated ? "Interactions with a post (the older path of `GET /posts/{post_id}/interactions`)" : "Interactions with a post",
    description:
      "No token needed. Bookmarks, reposts and replies of the post (of the original, for a repost), merged as the caller's own " +
      "interactions are (decisions §11), newest first, without `objects`; `users` are the 50 most recent actors. Paginated by " +
      "`pagination_id`. `exclude` is ignored when `filters` is set; an unknown action is a 400. Emits nothing.",
    ...(deprecated ? { deprecated: true } : {}),
    request: {
      params: postParam,
      query: z.object({ ...pageQuery, ...userParams, filters: actionList("to include"), exclude: actionList("to leave out (ignored when `filters` is set)") }),
    },
    responses: {
      200: Envelope(
        z.array(InteractionSchema),
        "Paginated interactions",
        [{ pagination_id: "9021", event_date: "2026-11-20T18:20:00Z", action: "bookmark", users: [EXAMPLE_USER] }],
        {
          more: false,
          min_id: "9021",
          max_id: "9021",
        },
      ),
      ...errors(400, 404),
    },
  });

async function interactions(c: Ctx, postId: string, q: { count?: string; since_id?: string; before_id?: string; filters?: string; exclude?: string }) {
  const page = parsePage(q);
  const filters = parseActions("filters", q.filters, POST_INTERACTION_ACTIONS);
  const excluded = filters ? undefined : parseActions("exclude", q.exclude, POST_INTERACTION_ACTIONS);
  const actions = POST_INTERACTION_ACTIONS.filter((a) => (filters ? filters.includes(a) : !excluded?.includes(a)));
  const view = viewContext(c);
  const data = await readPostInteractions(c.var.db, Number(postId), actions.length ? actions : ["bookmark"], page, view.viewerId, shapeOfView(view).presence);
  if (!data.found) throw ApiError.notFound("no such post");
  if (!actions.length) return ok(c, [], { more: false });
  const { items, meta } = finishPage(data.groups, page, (g) => g.latestEventId);
  return ok(
    c,
    items.map((g) => ({
      pagination_id: String(g.latestEventId),
      event_date: iso(g.latestAt),
      action: g.action,
      users: (data.actors.get(g.id) ?? []).map((u) => renderUser(u, view)),
    })),
    meta,
  );
}

export const postActionRoutes = createRouter()
  .openapi(interactionsRoute("/posts/{post_id}/interactions", false), (c) => interactions(c, c.req.valid("param").post_id, c.req.valid("query")))
  .openapi(interactionsRoute("/posts/{post_id}/actions", true), (c) => interactions(c, c.req.valid("param").post_id, c.req.valid("query")))
  .openapi(
    defineRoute(WRITE_POST, {
      method: "put",
      path: "/posts/{post_id}/repost",
      tags: ["Posts"],
      summary: "Repost a post (a repost of a repost reposts the original); returns the original",
      description:
        "Needs a user token with `write_post`. Optional body `is_nsfw` marks the repost NSFW (a repost of an NSFW post is NSFW anyway). " +
        "201 when reposted now, 200 when already reposted. Reposting one's own or a deleted post is a 400. Emits a `post` event (the repost).",
      request: { params: postParam, query: PostQuery, body: optionalBody(RepostBody) },
      responses: {
        200: onePost("The original, already reposted", { ...EXAMPLE_POST, you_reposted: true }),
        201: Envelope(PostSchema, "The original, now reposted", { ...EXAMPLE_POST, you_reposted: true }, { code: 201 }),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const user = currentUser(c);
      const isNsfw = flagField((await readFields(c)).is_nsfw, "is_nsfw");
      const post = await getPostBasics(c.var.db, Number(c.req.valid("param").post_id), user.id);
      if (!post) throw ApiError.notFound("no such post");
      const target = post.target;
      if (target.isDeleted) throw ApiError.badRequest("a deleted post cannot be reposted");
      if (target.userId === user.id) throw ApiError.badRequest("you cannot repost your own post");
      if (post.youReposted) return current(c, target.id);
      const result = await createRepost(c.var.db, { userId: user.id, appId: c.var.auth!.app.id, target, isNsfw, at: now(c), event: postEventRef(c, user.id) });
      if (!result.ok) {
        if (result.reason === "already") return current(c, target.id);
        throw ApiError.badRequest("a deleted post cannot be reposted");
      }
      publishPost(c, result.repost, result.set, { seq: result.seq });
      return ok(c, render(c, result.original, result.set), {}, 201);
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "delete",
      path: "/posts/{post_id}/repost",
      tags: ["Posts"],
      summary: "Remove the caller's repost of a post; returns the original",
      description: "Needs a user token with `write_post`. Emits a `post` event with `is_deleted` (the repost) when there was one.",
      request: { params: postParam, query: PostQuery },
      responses: { 200: onePost("The original"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const result = await deleteRepost(c.var.db, Number(c.req.valid("param").post_id), user.id, { ref: postEventRef(c, user.id), at: now(c) });
      if (!result) throw ApiError.notFound("no such post");
      if (result.removed) publishPost(c, result.removed.page[0], result.removed, { isDeleted: true, seq: result.seq });
      return ok(c, render(c, result.view, result.set));
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "put",
      path: "/posts/{post_id}/bookmark",
      tags: ["Posts"],
      summary: "Bookmark a post (deleted posts too; a repost's original); returns the post",
      description:
        `Needs a user token with \`write_post\`. Optional body \`note\` (up to ${NOTE_MAX_LENGTH} characters, shown only on the caller's ` +
        "own bookmarks list, not escaped); bookmarking again with a `note` changes the note. Emits a `bookmark` event when new.",
      request: { params: postParam, query: PostQuery, body: optionalBody(BookmarkBody) },
      responses: { 200: onePost("The bookmarked post", { ...EXAMPLE_POST, you_bookmarked: true }), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const fields = await readFields(c);
      const note = fields.note;
      if (note !== undefined && note !== null && typeof note !== "string") throw ApiError.badRequest("'note' must be a string");
      if (typeof note === "string" && codePointLength(note) > NOTE_MAX_LENGTH) throw ApiError.badRequest(`'note' is longer than ${NOTE_MAX_LENGTH} characters`);
      const post = await getPostBasics(c.var.db, Number(c.req.valid("param").post_id), user.id);
      if (!post) throw ApiError.notFound("no such post");
      const target = post.target;
      const given = note === undefined ? undefined : note || null;
      if (!post.youBookmarked) {
        const result = await addBookmark(c.var.db, { userId: user.id, target, note: given ?? null, at: now(c), event: postEventRef(c, user.id) });
        if (result.ok) {
          publishBookmark(c, result.view, result.set, false, result.seq);
          return ok(c, render(c, result.view, result.set));
        }
      }
      if (given !== undefined) await setBookmarkNote(c.var.db, user.id, target.id, given);
      return current(c, target.id);
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "delete",
      path: "/posts/{post_id}/bookmark",
      tags: ["Posts"],
      summary: "Remove the caller's bookmark of a post; returns the post",
      description: "Needs a user token with `write_post`. Emits a `bookmark` event with `is_deleted` when there was one.",
      request: { params: postParam, query: PostQuery },
      responses: { 200: onePost("The post"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const result = await removeBookmark(c.var.db, Number(c.req.valid("param").post_id), user.id, { ref: postEventRef(c, user.id), at: now(c) });
      if (!result) throw ApiError.notFound("no such post");
      if (result.removed) publishBookmark(c, result.view, result.set, true, result.seq);
      return ok(c, render(c, result.view, result.set));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "post",
      path: "/posts/{post_id}/report",
      tags: ["Report"],
      summary: "Report a post for moderation",
      description:
        `Needs a user token (any scope). Body (JSON, form-urlencoded or multipart) field \`reason\`: ${POST_REPORT_REASONS.join(", ")}. ` +
        "201 with the reported post; the same reporter, post and reason are stored once. A deleted or unknown post is a 404. Emits nothing.",
      request: { params: postParam, query: PostQuery, body: optionalBody(ReportBody) },
      responses: { 201: Envelope(PostSchema, "The reported post", EXAMPLE_POST, { code: 201 }), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const reason = (await readFields(c)).reason;
      if (typeof reason !== "string" || !(POST_REPORT_REASONS as readonly string[]).includes(reason)) {
        throw ApiError.badRequest(`'reason' must be one of ${POST_REPORT_REASONS.join(", ")}`);
      }
      const found = await reportPost(c.var.db, {
        postId: Number(c.req.valid("param").post_id),
        reporterId: user.id,
        reason: reason as PostReportReason,
        at: now(c),
      });
      if (!found) throw ApiError.notFound("no such post");
      return ok(c, render(c, found.view, found.set), {}, 201);
    },
  );
