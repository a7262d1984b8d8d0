import { z } from "@hono/zod-openapi";
import { currentUser, PUBLIC } from "../../auth/access";
import { checkTokenInFirstRead } from "../../auth/authenticate";
import { LIMITS } from "../../config";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { checkIdCount, flagValue, queryFlag } from "../../http/params";
import { createRouter, defineRoute, Envelope, errors, idString } from "../../http/route";
import { now } from "../../http/time";
import { parseFlags, processForCreate } from "../../services/text";
import { createPost, deletePost, deleteRepost, revisePost } from "../../stores/post-writes";
import { getPostBasics, readPost, readPostsByIds, readRevisions } from "../../stores/posts";
import { normalizeTag, withObjectId, type TextResult } from "../../text";
import { viewContext } from "../../views/context";
import { renderRevision } from "../../views/post";
import { EXAMPLE_POST, onePost, PostQuery, PostSchema, postEventRef, postParam, publishPost, readOptions, render, WRITE_POST } from "./common";
import { prepareRaw } from "../../services/raw-core";

// Posts themselves: create, look up, revise, delete. Lists are in streams.ts, actions on
// posts (repost, bookmark, report, interactions) in actions.ts, search in search.ts.

const Flag = z.union([z.boolean(), z.literal(0), z.literal(1), z.enum(["0", "1", "true", "false"])]);
const truthy = (v: z.infer<typeof Flag> | undefined) => v === true || v === 1 || v === "1" || v === "true";

/** `raw`: `{"<type>": [ {...}, ... ]}` (decisions §4); its serialized size is checked separately. */
const RawSchema = z.record(
  z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, { message: "type names are 1 to 128 letters, digits, '.', '_' or '-'" }),
  z.array(z.record(z.string(), z.unknown()), { message: "must be a list of objects" }),
);

const PostBody = z
  .object({
    text: z.string({ message: "is required and must be a string" }).openapi({ description: "Up to 256 characters (decisions §5)" }),
    reply_to: z
      .union([idString("post id"), z.number().int().positive()])
      .nullable()
      .optional()
      .openapi({ description: "The post this one replies to" }),
    is_nsfw: Flag.optional().openapi({ description: "Marks the post NSFW; default: whether the text has the tag #nsfw" }),
    entities: z
      .object({ parse_links: Flag.optional(), parse_markdown_links: Flag.optional() })
      .passthrough()
      .optional()
      .openapi({ description: "`parse_links` / `parse_markdown_links`: 0 turns link parsing off" }),
    raw: RawSchema.optional().openapi({ description: "Raw items, at most 8192 bytes serialized" }),
  })
  .passthrough()
  .openapi("NewPost");

const CreateQuery = PostQuery.extend({ update_marker: z.string().optional().openapi({ description: "1: set the `personal` marker to the new post" }) });
const LookupQuery = PostQuery.extend({
  include_deleted: queryFlag("0: a deleted post is not found (404; left out of `GET /posts`). Default 1"),
});

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

const on = (v: string | undefined) => v === "1" || v === "true";

// A reply reads its target first, text with mentions their users (processForCreate); nothing
// before those reads leaves the database.
checkTokenInFirstRead("POST", "/posts");

export const postRoutes = createRouter()
  .openapi(
    defineRoute(WRITE_POST, {
      method: "post",
      path: "/posts",
      tags: ["Posts"],
      summary: "Create a post (or a reply)",
      description:
        "Needs a user token with `write_post`. The same processed text from the same user within 60 seconds is a 400; a reply to a " +
        "missing or deleted post is a 400 naming `reply_to` (a reply to a repost replies to the original). Emits a `post` event.",
      request: { query: CreateQuery, body: { content: { "application/json": { schema: PostBody } }, required: true } },
      responses: { 201: Envelope(PostSchema, "The created post", EXAMPLE_POST, { code: 201 }), ...errors(400, 401, 403, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const body = c.req.valid("json");
      checkText(body.text);
      checkRaw(body.raw);
      const replyId = body.reply_to != null ? Number(body.reply_to) : null;
      const [text, reply, raw] = await Promise.all([
        processForCreate(c, body.text, "post", parseFlags(body.entities)),
        replyId != null ? getPostBasics(c.var.db, replyId, user.id) : undefined,
        prepareRaw(c, body.raw, "post"),
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
        raw,
        replyTo: target ? { id: target.id, userId: target.userId } : null,
        at: now(c),
        marker: on(c.req.valid("query").update_marker) ? { version: crypto.randomUUID() } : null,
        event: postEventRef(c, user.id),
      });
      if (!result.ok) {
        if (result.reason === "duplicate") {
          throw ApiError.badRequest(`'text' repeats a post of yours from less than ${LIMITS.post.seconds_between_duplicates} seconds ago`);
        }
        throw ApiError.badRequest("'reply_to' names no post, or a deleted one");
      }
      publishPost(c, result.view, result.set, { also: target ? [target.userId] : [], seq: result.seq });
      return ok(c, render(c, result.view, result.set), {}, 201);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts",
      tags: ["Posts"],
      summary: "Posts by id (at most the first 200 found; unknown ids are skipped)",
      description: "No token needed. Posts come in the order asked, each once. Emits nothing.",
      request: {
        query: LookupQuery.extend({ ids: z.string({ message: "is required" }).openapi({ description: "Comma-separated post ids", example: "2375,2380" }) }),
      },
      responses: { 200: Envelope(z.array(PostSchema), "Post objects", [EXAMPLE_POST]), ...errors(400) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const parts = q.ids
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      checkIdCount("ids", parts.length);
      if (!parts.length || parts.some((s) => !/^\d{1,18}$/.test(s))) throw ApiError.badRequest("'ids' must be comma-separated integer post ids");
      const ids = [...new Set(parts.map(Number))];
      const set = await readPostsByIds(c.var.db, ids, viewContext(c).viewerId, { ...readOptions(c), liveOnly: !flagValue(q.include_deleted, true) });
      return ok(
        c,
        set.page.map((v) => render(c, v, set)),
      );
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/{post_id}",
      tags: ["Posts"],
      summary: "A post",
      description: "No token needed. A deleted post is returned as `is_deleted` without content (404 with `include_deleted=0`). Emits nothing.",
      request: { params: postParam, query: LookupQuery },
      responses: { 200: onePost("Post object"), ...errors(400, 404) },
    }),
    async (c) => {
      const liveOnly = !flagValue(c.req.valid("query").include_deleted, true);
      const found = await readPost(c.var.db, Number(c.req.valid("param").post_id), viewContext(c).viewerId, { ...readOptions(c), liveOnly });
      if (!found) throw ApiError.notFound("no such post");
      return ok(c, render(c, found.view, found.set));
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/posts/{post_id}/revisions",
      tags: ["Posts"],
      summary: 'Earlier versions of a post (not the current one); `revision` counts from "0"',
      description: "No token needed. A post has at most one earlier version; a deleted post lists none. Emits nothing.",
      request: { params: postParam, query: PostQuery },
      responses: { 200: Envelope(z.array(PostSchema), "Earlier versions", [{ ...EXAMPLE_POST, revision: "0" }]), ...errors(400, 404) },
    }),
    async (c) => {
      const found = await readRevisions(c.var.db, Number(c.req.valid("param").post_id), viewContext(c).viewerId);
      if (!found) throw ApiError.notFound("no such post");
      if (found.view.post.isDeleted) return ok(c, []);
      const view = viewContext(c);
      return ok(
        c,
        found.revisions.map((r) => renderRevision(found.view, r, view, {})),
      );
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "put",
      path: "/posts/{post_id}",
      tags: ["Posts"],
      summary: "Revise a post (author only, once, within post.seconds_for_revision of its creation)",
      description: "Needs the author's user token with `write_post`. The current version becomes revision 0. Emits a `post` event.",
      request: { params: postParam, query: PostQuery, body: { content: { "application/json": { schema: PostBody } }, required: true } },
      responses: { 200: onePost("The revised post", { ...EXAMPLE_POST, is_revised: true }), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const id = Number(c.req.valid("param").post_id);
      const body = c.req.valid("json");
      checkText(body.text);
      checkRaw(body.raw);
      const [current, text, raw] = await Promise.all([
        readPost(c.var.db, id, user.id),
        processForCreate(c, body.text, "post", parseFlags(body.entities)),
        prepareRaw(c, body.raw, "post"),
      ]);
      if (!current) throw ApiError.notFound("no such post");
      const post = current.view.post;
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
        raw,
        currentRaw: post.raw,
        at,
        viewerId: user.id,
        event: postEventRef(c, user.id),
      });
      if (!result) throw alreadyRevised;
      publishPost(c, result.view, result.set, { seq: result.seq });
      return ok(c, render(c, result.view, result.set));
    },
  )
  .openapi(
    defineRoute(WRITE_POST, {
      method: "delete",
      path: "/posts/{post_id}",
      tags: ["Posts"],
      summary: "Delete a post (author only): it keeps its id and loses its content",
      description:
        "Needs the author's user token with `write_post`. Deleting a repost removes it (as `DELETE /posts/{id}/repost`); deleting an " +
        "original removes its reposts. Emits a `post` event with `is_deleted`.",
      request: { params: postParam, query: PostQuery },
      responses: { 200: onePost("The deleted post", { ...EXAMPLE_POST, content: undefined, is_deleted: true }), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const id = Number(c.req.valid("param").post_id);
      const post = await getPostBasics(c.var.db, id, user.id);
      if (!post) throw ApiError.notFound("no such post");
      if (post.userId !== user.id) throw ApiError.forbidden("only the author can delete a post");
      if (post.repostOf != null) {
        // Deleting a repost removes it, as DELETE /posts/{id}/repost does.
        const result = await deleteRepost(c.var.db, id, user.id, { ref: postEventRef(c, user.id), at: now(c) });
        const removed = result?.removed;
        if (!removed) throw ApiError.notFound("no such post");
        publishPost(c, removed.page[0], removed, { isDeleted: true, seq: result.seq });
        const { content: _content, raw: _raw, ...gone } = render(c, removed.page[0], removed);
        return ok(c, { ...gone, is_deleted: true });
      }
      const result = await deletePost(c.var.db, post, user.id, { ref: postEventRef(c, user.id), at: now(c) });
      if (!result) throw ApiError.notFound("no such post");
      // Published when this request deleted it (its batch reserved the event), as the pre-read also says.
      if (result.seq !== undefined || !post.isDeleted) publishPost(c, result.view, result.set, { isDeleted: true, seq: result.seq });
      return ok(c, render(c, result.view, result.set));
    },
  );
