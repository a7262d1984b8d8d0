import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { currentUser, PUBLIC, userToken } from "../auth/access";
import { LIMITS } from "../config";
import { publish } from "../events/publish";
import { ok } from "../http/envelope";
import { ApiError } from "../http/errors";
import { finishPage, pageQuery, type Page } from "../http/pagination";
import { resolveUserRef } from "../http/refs";
import { createRouter, defineRoute, Envelope, errors, idString, userRef } from "../http/route";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import { parseFlags, processForCreate } from "../services/text";
import {
  addBookmark,
  createPost,
  createRepost,
  deletePost,
  deleteRepost,
  getPostBasics,
  readPost,
  readPostsByIds,
  readRevisions,
  readStream,
  removeBookmark,
  revisePost,
  type PostSet,
  type PostView,
  type Stream,
} from "../stores/posts";
import { normalizeTag, withObjectId, type TextResult } from "../text";
import { viewContext } from "../views/context";
import { markableStream } from "./markers";
import { neutralUser, renderPost, renderPostForEvent, renderRevision } from "../views/post";
import { renderUser } from "../views/user";

// ---------------------------------------------------------------------------------------------
// Schemas

const Flag = z.union([z.boolean(), z.literal(0), z.literal(1), z.enum(["0", "1", "true", "false"])]);
const truthy = (v: z.infer<typeof Flag> | undefined) => v === true || v === 1 || v === "1" || v === "true";

/** `raw`: `{"<type>": [ {...}, ... ]}` (decisions §4); its serialized size is checked separately. */
const RawSchema = z.record(
  z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, { message: "type names are 1 to 128 letters, digits, '.', '_' or '-'" }),
  z.array(z.record(z.string(), z.unknown()), { message: "must be a list of objects" }),
);

const PostBody = z
  .object({
    text: z.string({ message: "is required and must be a string" }),
    reply_to: z.union([idString("post id"), z.number().int().positive()]).nullable().optional(),
    is_nsfw: Flag.optional(),
    entities: z.object({ parse_links: Flag.optional(), parse_markdown_links: Flag.optional() }).passthrough().optional(),
    raw: RawSchema.optional(),
  })
  .passthrough()
  .openapi("NewPost");

const Entities = z.object({ links: z.array(z.any()), mentions: z.array(z.any()), tags: z.array(z.any()) });
const PostSchema = z
  .object({
    id: z.string(),
    created_at: z.string(),
    thread_id: z.string(),
    reply_to: z.string().optional(),
    repost_of: z.object({}).passthrough().optional(),
    content: z.object({ text: z.string(), html: z.string(), entities: Entities }).optional(),
    counts: z.object({ bookmarks: z.number(), replies: z.number(), reposts: z.number(), threads: z.number() }),
    source: z.object({ id: z.string(), name: z.string(), url: z.string() }),
    user: z.object({}).passthrough().optional(),
    user_id: z.string().optional(),
    is_deleted: z.boolean().optional(),
    is_nsfw: z.boolean().optional(),
    is_revised: z.boolean().optional(),
    you_bookmarked: z.boolean(),
    you_reposted: z.boolean(),
    raw: z.record(z.string(), z.array(z.any())).optional(),
    pagination_id: z.string().optional(),
  })
  .passthrough()
  .openapi("Post");

const rawQuery = {
  include_raw: z.string().optional().openapi({ description: "1: include `raw` on all objects" }),
  include_post_raw: z.string().optional().openapi({ description: "1: include `raw` on post objects" }),
};
const ReadQuery = z.object(rawQuery);
const StreamQuery = z.object({ ...pageQuery, ...rawQuery });
const CreateQuery = z.object({ ...rawQuery, update_marker: z.string().optional().openapi({ description: "1: set the `personal` marker to the new post" }) });
const postParam = z.object({ post_id: idString("post id").openapi({ param: { name: "post_id", in: "path" }, example: "1" }) });
const userParam = z.object({ user_id: userRef.openapi({ param: { name: "user_id", in: "path" }, example: "me" }) });

const on = (v: string | undefined) => v === "1" || v === "true";

// ---------------------------------------------------------------------------------------------
// Rendering

type Ctx = Context<AppEnv>;

function renderOptions(c: Ctx) {
  const q = c.req.query();
  return { raw: on(q.include_raw) || on(q.include_post_raw) };
}

function render(c: Ctx, view: PostView, set: PostSet) {
  return renderPost(view, set.byId, viewContext(c), renderOptions(c));
}

/** A stream's page as the envelope's data and pagination meta. */
function renderPage(c: Ctx, set: PostSet, page: Page) {
  const { items, meta } = finishPage(set.page, page, (r) => r.post.id);
  const view = viewContext(c);
  const opts = renderOptions(c);
  return ok(
    c,
    items.map((r) => ({ ...renderPost(r, set.byId, view, opts), pagination_id: String(r.post.id) })),
    meta,
  );
}

/** Users an event about a post concerns: mentioned users, the author reposted, and `also` (the author replied to). */
function concerned(view: PostView, set: PostSet, also: number[]): number[] {
  const ids = new Set<number>(also);
  const entities = view.post.entities as { mentions?: { id?: string }[] } | null;
  for (const m of entities?.mentions ?? []) if (m.id) ids.add(Number(m.id));
  const original = view.post.repostOf != null ? set.byId.get(view.post.repostOf) : undefined;
  if (original) ids.add(original.post.userId);
  ids.delete(view.post.userId);
  return [...ids];
}

function publishPost(c: Ctx, view: PostView, set: PostSet, opts: { isDeleted?: boolean; also?: number[] } = {}) {
  publish(c, {
    type: "post",
    data: renderPostForEvent(view, set.byId, viewContext(c)),
    isDeleted: opts.isDeleted ?? false,
    route: { actorId: view.post.userId, userIds: concerned(view, set, opts.also ?? []) },
  });
}

// ---------------------------------------------------------------------------------------------
// Input checks shared by create and revise

function checkRaw(raw: unknown) {
  if (raw === undefined) return;
  const bytes = new TextEncoder().encode(JSON.stringify(raw)).length;
  if (bytes > LIMITS.raw.max_length) throw ApiError.badRequest(`'raw' is longer than ${LIMITS.raw.max_length} bytes when serialized`);
}

function checkText(text: string) {
  if (!text.trim()) throw ApiError.badRequest("'text' must not be empty");
}

/** `is_nsfw` when given, else whether the text carries the tag #nsfw. */
function nsfw(flag: z.infer<typeof Flag> | undefined, text: TextResult): boolean {
  if (flag !== undefined) return truthy(flag);
  return text.entities.tags.some((t) => normalizeTag(t.text) === "nsfw");
}

/** A marker value to put in place of `{object_id}` until the id is known (replaced in SQL). */
function objectIdSentinel(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return "objid" + [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A stream's page. `marker` names the stream's marker (decisions §6: `global`, `personal`,
 * `mentions`): bound values that read it are resolved and `meta.marker` is set by
 * `markableStream`, the marker being read in the page's batch.
 */
async function stream(c: Ctx, q: z.infer<typeof StreamQuery>, s: Stream, marker: string | null) {
  const m = await markableStream(c, q, marker);
  const { found, set, markerRows } = await readStream(c.var.db, s, m.page, viewContext(c).viewerId, m.read);
  if (!found) throw ApiError.notFound(s.kind === "thread" ? "no such post" : "no such user");
  m.done(markerRows);
  return renderPage(c, set, m.page);
}

const WRITE_POST = userToken("write_post");
const list = (d: string) => Envelope(z.array(PostSchema), d);
const one = (d: string) => Envelope(PostSchema, d);

// ---------------------------------------------------------------------------------------------
// Routes

export const postRoutes = createRouter()
  .openapi(
    defineRoute(WRITE_POST, {
      method: "post",
      path: "/posts",
      tags: ["Posts"],
      summary: "Create a post (or a reply)",
      request: { query: CreateQuery, body: { content: { "application/json": { schema: PostBody } }, required: true } },
      responses: { 201: one("The created post"), ...errors(400, 401, 403, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const body = c.req.valid("json");
      checkText(body.text);
      checkRaw(body.raw);
      const replyId = body.reply_to != null ? Number(body.reply_to) : null;
      const [text, reply] = await Promise.all([
        processForCreate(c, body.text, "post", parseFlags(body.entities)),
        replyId != null ? getPostBasics(c.var.db, replyId, user.id) : undefined,
      ]);
      // A reply to a repost replies to the original.
      const target = reply?.target;
      if (replyId != null && (!target || target.isDeleted)) throw ApiError.badRequest("'reply_to' names no post, or a deleted one");
      const sentinel = objectIdSentinel();
      const withSentinel = withObjectId(text, sentinel);
      const result = await createPost(c.var.db, {
        userId: user.id,
        appId: c.var.auth!.app.id,
        text: withSentinel,
        sentinel: withSentinel === text ? null : sentinel,
        isNsfw: nsfw(body.is_nsfw, text),
        raw: body.raw,
        replyTo: target ? { id: target.id, userId: target.userId } : null,
        at: now(c),
        marker: on(c.req.valid("query").update_marker) ? { version: crypto.randomUUID() } : null,
      });
      if (!result.ok) {
        if (result.reason === "duplicate") {
          throw ApiError.badRequest(`'text' repeats a post of yours from less than ${LIMITS.post.seconds_between_duplicates} seconds ago`);
        }
        throw ApiError.badRequest("'reply_to' names no post, or a deleted one");
      }
      publishPost(c, result.view, result.set, { also: target ? [target.userId] : [] });
      return ok(c, render(c, result.view, result.set), {}, 201);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts",
      tags: ["Posts"],
      summary: "Posts by id (at most the first 200 found; unknown ids are skipped)",
      request: { query: z.object({ ids: z.string({ message: "is required" }), ...rawQuery }) },
      responses: { 200: list("Post objects"), ...errors(400) },
    }),
    async (c) => {
      const parts = c.req
        .valid("query")
        .ids.split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      if (!parts.length || parts.some((s) => !/^\d{1,18}$/.test(s))) throw ApiError.badRequest("'ids' must be comma-separated integer post ids");
      const ids = [...new Set(parts.map(Number))];
      const set = await readPostsByIds(c.var.db, ids, viewContext(c).viewerId);
      return ok(c, set.page.map((v) => render(c, v, set)));
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/streams/global",
      tags: ["Post streams"],
      summary: "All human users' posts and replies (no reposts); marker `global`",
      request: { query: StreamQuery },
      responses: { 200: list("Paginated posts"), ...errors(400) },
    }),
    (c) => stream(c, c.req.valid("query"), { kind: "global" }, "global"),
  )
  .openapi(
    defineRoute(userToken("stream"), {
      method: "get",
      path: "/posts/streams/me",
      tags: ["Post streams"],
      summary: "The caller's and followed users' posts and reposts; marker `personal`",
      request: { query: StreamQuery },
      responses: { 200: list("Paginated posts"), ...errors(400, 401, 403) },
    }),
    (c) => stream(c, c.req.valid("query"), { kind: "personal", userId: currentUser(c).id, withMentions: false }, "personal"),
  )
  .openapi(
    defineRoute(userToken("stream"), {
      method: "get",
      path: "/posts/streams/unified",
      tags: ["Post streams"],
      summary: "The personal stream plus posts mentioning the caller; marker `personal`",
      request: { query: StreamQuery },
      responses: { 200: list("Paginated posts"), ...errors(400, 401, 403) },
    }),
    (c) => stream(c, c.req.valid("query"), { kind: "personal", userId: currentUser(c).id, withMentions: true }, "personal"),
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/users/{user_id}/posts",
      tags: ["Post streams"],
      summary: "Posts and reposts by a user",
      request: { params: userParam, query: StreamQuery },
      responses: { 200: list("Paginated posts"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => stream(c, c.req.valid("query"), { kind: "user", userId: await resolveUserRef(c, c.req.valid("param").user_id) }, null),
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/users/{user_id}/mentions",
      tags: ["Post streams"],
      summary: "Posts mentioning a user (`me`: needs a user token; marker `mentions`)",
      request: { params: userParam, query: StreamQuery },
      responses: { 200: list("Paginated posts"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const ref = c.req.valid("param").user_id;
      const userId = await resolveUserRef(c, ref);
      return stream(c, c.req.valid("query"), { kind: "mentions", userId }, userId === viewContext(c).viewerId ? "mentions" : null);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/{post_id}",
      tags: ["Posts"],
      summary: "A post",
      request: { params: postParam, query: ReadQuery },
      responses: { 200: one("Post object"), ...errors(400, 404) },
    }),
    async (c) => {
      const found = await readPost(c.var.db, Number(c.req.valid("param").post_id), viewContext(c).viewerId);
      if (!found) throw ApiError.notFound("no such post");
      return ok(c, render(c, found.view, found.set));
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/{post_id}/revisions",
      tags: ["Posts"],
      summary: "Earlier versions of a post (not the current one); `revision` counts from \"0\"",
      request: { params: postParam, query: ReadQuery },
      responses: { 200: list("Earlier versions"), ...errors(400, 404) },
    }),
    async (c) => {
      const found = await readRevisions(c.var.db, Number(c.req.valid("param").post_id), viewContext(c).viewerId);
      if (!found) throw ApiError.notFound("no such post");
      if (found.view.post.isDeleted) return ok(c, []);
      const view = viewContext(c);
      return ok(
        c,
        found.revisions.map((r) => renderRevision(found.view, r, view, renderOptions(c))),
      );
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/{post_id}/thread",
      tags: ["Post streams"],
      summary: "Posts of the thread a post belongs to",
      request: { params: postParam, query: StreamQuery },
      responses: { 200: list("Paginated posts"), ...errors(400, 404) },
    }),
    (c) => stream(c, c.req.valid("query"), { kind: "thread", postId: Number(c.req.valid("param").post_id) }, null),
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "put",
      path: "/posts/{post_id}",
      tags: ["Posts"],
      summary: "Revise a post (author only, once, within post.seconds_for_revision of its creation)",
      request: { params: postParam, query: ReadQuery, body: { content: { "application/json": { schema: PostBody } }, required: true } },
      responses: { 200: one("The revised post"), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const id = Number(c.req.valid("param").post_id);
      const body = c.req.valid("json");
      checkText(body.text);
      checkRaw(body.raw);
      const [post, text] = await Promise.all([
        getPostBasics(c.var.db, id, user.id),
        processForCreate(c, body.text, "post", parseFlags(body.entities)),
      ]);
      if (!post) throw ApiError.notFound("no such post");
      if (post.userId !== user.id) throw ApiError.forbidden("only the author can revise a post");
      if (post.repostOf != null) throw ApiError.badRequest("a repost cannot be revised");
      if (post.isDeleted) throw ApiError.badRequest("a deleted post cannot be revised");
      const at = now(c);
      const window = LIMITS.post.seconds_for_revision;
      if (at - post.createdAt >= window) throw ApiError.badRequest(`a post can be revised only within ${window} seconds of its creation`);
      const alreadyRevised = ApiError.badRequest("the post was already revised; a post keeps one previous version");
      if (post.isRevised) throw alreadyRevised;
      const result = await revisePost(c.var.db, {
        postId: id,
        text: withObjectId(text, String(id)),
        isNsfw: nsfw(body.is_nsfw, text),
        raw: body.raw,
        at,
        viewerId: user.id,
      });
      if (!result) throw alreadyRevised;
      publishPost(c, result.view, result.set);
      return ok(c, render(c, result.view, result.set));
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "delete",
      path: "/posts/{post_id}",
      tags: ["Posts"],
      summary: "Delete a post (author only): it keeps its id and loses its content",
      request: { params: postParam, query: ReadQuery },
      responses: { 200: one("The deleted post"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const id = Number(c.req.valid("param").post_id);
      const post = await getPostBasics(c.var.db, id, user.id);
      if (!post) throw ApiError.notFound("no such post");
      if (post.userId !== user.id) throw ApiError.forbidden("only the author can delete a post");
      if (post.repostOf != null) {
        // Deleting a repost removes it, as DELETE /posts/{id}/repost does.
        const result = await deleteRepost(c.var.db, id, user.id);
        const removed = result?.removed;
        if (!removed) throw ApiError.notFound("no such post");
        publishPost(c, removed.page[0], removed, { isDeleted: true });
        const { content: _content, raw: _raw, ...gone } = render(c, removed.page[0], removed);
        return ok(c, { ...gone, is_deleted: true });
      }
      const result = await deletePost(c.var.db, post, user.id);
      if (!result) throw ApiError.notFound("no such post");
      if (!post.isDeleted) publishPost(c, result.view, result.set, { isDeleted: true });
      return ok(c, render(c, result.view, result.set));
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "put",
      path: "/posts/{post_id}/repost",
      tags: ["Posts"],
      summary: "Repost a post (a repost of a repost reposts the original); returns the original",
      request: { params: postParam, query: ReadQuery },
      responses: { 200: one("The original, already reposted"), 201: one("The original, now reposted"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const post = await getPostBasics(c.var.db, Number(c.req.valid("param").post_id), user.id);
      if (!post) throw ApiError.notFound("no such post");
      const target = post.target;
      if (target.isDeleted) throw ApiError.badRequest("a deleted post cannot be reposted");
      if (target.userId === user.id) throw ApiError.badRequest("you cannot repost your own post");
      const current = async () => {
        const found = await readPost(c.var.db, target.id, user.id);
        if (!found) throw ApiError.notFound("no such post");
        return ok(c, render(c, found.view, found.set));
      };
      if (post.youReposted) return current();
      const result = await createRepost(c.var.db, { userId: user.id, appId: c.var.auth!.app.id, target, at: now(c) });
      if (!result.ok) {
        if (result.reason === "already") return current();
        throw ApiError.badRequest("a deleted post cannot be reposted");
      }
      publishPost(c, result.repost, result.set);
      return ok(c, render(c, result.original, result.set), {}, 201);
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "delete",
      path: "/posts/{post_id}/repost",
      tags: ["Posts"],
      summary: "Remove the caller's repost of a post; returns the original",
      request: { params: postParam, query: ReadQuery },
      responses: { 200: one("The original"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const result = await deleteRepost(c.var.db, Number(c.req.valid("param").post_id), user.id);
      if (!result) throw ApiError.notFound("no such post");
      if (result.removed) publishPost(c, result.removed.page[0], result.removed, { isDeleted: true });
      return ok(c, render(c, result.view, result.set));
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "put",
      path: "/posts/{post_id}/bookmark",
      tags: ["Posts"],
      summary: "Bookmark a post (deleted posts too; a repost's original); returns the post",
      request: { params: postParam, query: ReadQuery },
      responses: { 200: one("The bookmarked post"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const post = await getPostBasics(c.var.db, Number(c.req.valid("param").post_id), user.id);
      if (!post) throw ApiError.notFound("no such post");
      const target = post.target;
      const current = async () => {
        const found = await readPost(c.var.db, target.id, user.id);
        if (!found) throw ApiError.notFound("no such post");
        return ok(c, render(c, found.view, found.set));
      };
      if (post.youBookmarked) return current();
      const result = await addBookmark(c.var.db, { userId: user.id, target, at: now(c) });
      if (!result.ok) return current();
      publishBookmark(c, result.view, result.set);
      return ok(c, render(c, result.view, result.set));
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "delete",
      path: "/posts/{post_id}/bookmark",
      tags: ["Posts"],
      summary: "Remove the caller's bookmark of a post; returns the post",
      request: { params: postParam, query: ReadQuery },
      responses: { 200: one("The post"), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const result = await removeBookmark(c.var.db, Number(c.req.valid("param").post_id), user.id);
      if (!result) throw ApiError.notFound("no such post");
      if (result.removed) publishBookmark(c, result.view, result.set, true);
      return ok(c, render(c, result.view, result.set));
    },
  );

/** The bookmark event `{user, post}`: the caller and the post, for no particular viewer. */
function publishBookmark(c: Ctx, view: PostView, set: PostSet, isDeleted = false) {
  const me = currentUser(c);
  const ctx = { ...viewContext(c), viewerId: null };
  const bookmarks = Math.max(0, me.bookmarks + (isDeleted ? -1 : 1));
  publish(c, {
    type: "bookmark",
    data: { user: renderUser({ ...neutralUser(me), bookmarks }, ctx), post: renderPostForEvent(view, set.byId, ctx) },
    isDeleted,
    route: { actorId: me.id, userIds: [view.post.userId] },
  });
}
