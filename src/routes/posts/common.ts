import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { userToken } from "../../auth/access";
import type { OutboxRef } from "../../events/outbox";
import { publish } from "../../events/publish";
import { ok } from "../../http/envelope";
import { finishPage, pageQuery, type Page } from "../../http/pagination";
import { postFiltersOf, postListParams, postParams, type PostFilters } from "../../http/params";
import { Envelope, idString, userRef } from "../../http/route";
import type { AppEnv } from "../../http/types";
import type { PostReadOptions, PostSet, PostView } from "../../stores/posts";
import { eventContext, shapeOfView, viewContext } from "../../views/context";
import { renderPost, renderPostForEvent } from "../../views/post";
import { exampleClientRef } from "../../http/examples";
import { EXAMPLE_USER } from "../users/common";
import type { ChangedIds } from "../../stores/post-changes";

// What the post routers share: the Post schema and example, the query fragments, rendering and
// the post event.

export type Ctx = Context<AppEnv>;

const Entities = z.object({ links: z.array(z.any()), mentions: z.array(z.any()), tags: z.array(z.any()) });

export const PostSchema = z
  .object({
    id: z.string(),
    created_at: z.string(),
    thread_id: z.string(),
    reply_to: z.string().optional(),
    repost_of: z.object({}).passthrough().optional(),
    content: z.object({ text: z.string(), html: z.string().optional(), entities: Entities }).optional(),
    counts: z.object({ bookmarks: z.number(), replies: z.number(), reposts: z.number(), threads: z.number() }).optional(),
    source: z.union([z.object({ id: z.string(), name: z.string(), url: z.string() }), z.string()]),
    user: z.object({}).passthrough().optional(),
    user_id: z.string().optional(),
    is_deleted: z.boolean().optional(),
    is_nsfw: z.boolean().optional(),
    is_revised: z.boolean().optional(),
    you_bookmarked: z.boolean(),
    you_reposted: z.boolean(),
    raw: z.record(z.string(), z.array(z.any())).optional(),
    bookmarked_by: z.array(z.object({}).passthrough()).optional(),
    reposted_by: z.array(z.object({}).passthrough()).optional(),
    note: z.string().optional(),
    pagination_id: z.string().optional(),
  })
  .passthrough()
  .openapi("Post");

/** A Post as the examples of the OpenAPI document show it. */
export const EXAMPLE_POST = {
  id: "2375",
  created_at: "2026-11-20T18:14:12Z",
  thread_id: "2375",
  content: {
    text: "Good times #oldies",
    html: '<span itemscope itemtype="https://schema.example.io/Post">Good times <span data-tag-name="oldies" itemprop="tag">#oldies</span></span>',
    entities: { links: [], mentions: [], tags: [{ pos: 11, len: 7, text: "oldies" }] },
  },
  counts: { bookmarks: 1, replies: 0, reposts: 0, threads: 0 },
  source: exampleClientRef,
  user: EXAMPLE_USER,
  you_bookmarked: false,
  you_reposted: false,
};

/** Query of routes that return posts (rendering parameters). */
export const PostQuery = z.object(postParams);
/** Query of lists of posts: pagination, rendering and filtering parameters. */
export const ListQuery = z.object({ ...pageQuery, ...postListParams });

export const postParam = z.object({ post_id: idString("post id").openapi({ param: { name: "post_id", in: "path" }, example: "2375" }) });
export const userParam = z.object({ user_id: userRef.openapi({ param: { name: "user_id", in: "path" }, example: "me" }) });

export const WRITE_POST = userToken("write_post");
export const onePost = (d: string, example: unknown = EXAMPLE_POST) => Envelope(PostSchema, d, example);
export const postList = (d: string) =>
  Envelope(z.array(PostSchema), d, [{ ...EXAMPLE_POST, pagination_id: "2375" }], { more: false, min_id: "2375", max_id: "2375" });

/** What a read of posts loads for this request (`include_bookmarked_by` / `include_reposted_by`). */
export function readOptions(c: Ctx): PostReadOptions {
  const shape = shapeOfView(viewContext(c));
  return { bookmarkedBy: shape.bookmarkedBy, repostedBy: shape.repostedBy, presence: shape.presence };
}

/** The list filters this request asks for. */
export const listFilters = (c: Ctx): PostFilters => postFiltersOf(c.req.query());

export function render(c: Ctx, view: PostView, set: PostSet) {
  return renderPost(view, set.byId, viewContext(c), { actors: set.actors });
}

/** A list's page as the envelope's data and pagination meta (the items' `pid` is their pagination id). */
export function renderPage(c: Ctx, set: PostSet, page: Page, changes: ChangedIds = {}) {
  const { items, meta } = finishPage(set.page, page, (r) => r.pid ?? r.post.id);
  const view = viewContext(c);
  return ok(
    c,
    items.map((r) => ({ ...renderPost(r, set.byId, view, { actors: set.actors }), pagination_id: String(r.pid ?? r.post.id) })),
    { ...meta, ...changes },
  );
}

/** The outbox reference of a post event reserved in the write's batch (src/events/outbox.ts). */
export const postEventRef = (c: Ctx, actorId: number, isDeleted = false): OutboxRef => ({ origin: eventContext(c).origin, isDeleted, route: { actorId } });

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

/** The `post` event of a post created, revised, reposted or deleted (rendered for no viewer). */
export function publishPost(c: Ctx, view: PostView, set: PostSet, opts: { isDeleted?: boolean; also?: number[]; seq?: number } = {}) {
  publish(c, {
    seq: opts.seq,
    type: "post",
    data: renderPostForEvent(view, set.byId, eventContext(c)),
    isDeleted: opts.isDeleted ?? false,
    route: { actorId: view.post.userId, userIds: concerned(view, set, opts.also ?? []) },
  });
}
