import { iso } from "../http/time";
import type { PostView, RevisionRecord } from "../stores/posts";
import type { UserView } from "../stores/users";
import { renderClientRef } from "./client";
import type { StoredContent } from "./content";
import type { ViewContext } from "./context";
import { renderUser } from "./user";

export interface PostRenderOptions {
  /** include_raw=1 / include_post_raw=1. */
  raw: boolean;
}

/**
 * The Post object (decisions §4) as `view` sees it. A repost embeds its original in `repost_of`
 * (looked up in `byId`) and mirrors the original's content, counts, flags and raw, since actions
 * on a repost act on the original. A deleted post keeps its id and loses its content.
 */
export function renderPost(row: PostView, byId: ReadonlyMap<number, PostView>, view: ViewContext, opts: PostRenderOptions): Record<string, unknown> {
  const p = row.post;
  const original = p.repostOf != null ? byId.get(p.repostOf) : undefined;
  const acted = original ?? row;
  const out: Record<string, unknown> = {
    id: String(p.id),
    created_at: iso(p.createdAt),
    thread_id: String(p.threadId),
  };
  if (p.replyTo != null) out.reply_to = String(p.replyTo);
  if (original) out.repost_of = renderPost(original, byId, view, opts);
  if (!p.isDeleted && !acted.post.isDeleted) out.content = content(acted.post);
  out.counts = {
    bookmarks: acted.post.bookmarks,
    replies: acted.post.replies,
    reposts: acted.post.reposts,
    threads: acted.post.threads,
  };
  out.source = renderClientRef(row.app);
  if (row.user) out.user = renderUser(row.user, view);
  else out.user_id = String(p.userId);
  if (p.isDeleted) out.is_deleted = true;
  if (p.isNsfw || acted.post.isNsfw) out.is_nsfw = true;
  if (acted.post.isRevised) out.is_revised = true;
  out.you_bookmarked = acted.youBookmarked;
  out.you_reposted = acted.youReposted;
  if (opts.raw && acted.post.raw != null && !acted.post.isDeleted) out.raw = acted.post.raw;
  return out;
}

/** An earlier version of a post (GET /posts/{id}/revisions): the post with that version's content. */
export function renderRevision(row: PostView, rev: RevisionRecord, view: ViewContext, opts: PostRenderOptions): Record<string, unknown> {
  const { is_revised: _revised, is_nsfw: _nsfw, raw: _raw, ...base } = renderPost(row, new Map(), view, { raw: false });
  return {
    ...base,
    content: content(rev),
    ...(rev.isNsfw ? { is_nsfw: true } : {}),
    revision: String(rev.revision),
    ...(opts.raw && rev.raw != null ? { raw: rev.raw } : {}),
  };
}

function content(p: { text: string | null; html: string | null; entities: unknown }): StoredContent {
  return {
    text: p.text ?? "",
    html: p.html ?? "",
    entities: (p.entities as StoredContent["entities"] | null) ?? { links: [], mentions: [], tags: [] },
  };
}

/** A row as no particular viewer sees it (for events): no relationship or bookmark/repost flags. */
export function neutralPostView(row: PostView): PostView {
  return { ...row, user: row.user ? (neutralUser(row.user) as UserView) : null, youBookmarked: false, youReposted: false };
}

/** A user row without the viewer's relationship flags, so renderUser shows them all false. */
export function neutralUser<T extends object>(u: T): Omit<T, "followsYou" | "youFollow" | "youMuted" | "youBlocked" | "blocksYou"> {
  const { followsYou: _a, youFollow: _b, youMuted: _c, youBlocked: _d, blocksYou: _e, ...rest } = u as T & Partial<UserView>;
  return rest;
}

/** Renders a post for an event: data for no particular viewer (decisions §8). */
export function renderPostForEvent(row: PostView, byId: ReadonlyMap<number, PostView>, view: ViewContext): Record<string, unknown> {
  const neutral = new Map([...byId].map(([id, r]) => [id, neutralPostView(r)]));
  return renderPost(neutralPostView(row), neutral, { ...view, viewerId: null }, { raw: true });
}
