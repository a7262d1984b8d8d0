import { iso } from "../http/time";
import type { PostActors, PostView, RevisionRecord } from "../stores/posts";
import type { UserView } from "../stores/users";
import { renderClientRef } from "./client";
import type { StoredContent } from "./content";
import { shapeOfView, type ViewContext } from "./context";
import { embedUser, renderUser } from "./user";

export interface PostRenderOptions {
  /** include_raw=1 / include_post_raw=1 (also read from the view's shape). */
  raw?: boolean;
  /** The users of `bookmarked_by` / `reposted_by`, when the read loaded them. */
  actors?: PostActors;
}

/**
 * The Post object (decisions §4) as `view` sees it, shaped by the general post parameters. A
 * repost embeds its original in `repost_of` (looked up in `byId`) and mirrors the original's
 * content, counts, flags and raw, since actions on a repost act on the original; a repost marked
 * NSFW itself is NSFW too. A deleted post keeps its id and loses its content. `note`: the caller's
 * note on their own bookmark (bookmarks list only).
 */
export function renderPost(row: PostView, byId: ReadonlyMap<number, PostView>, view: ViewContext, opts: PostRenderOptions = {}): Record<string, unknown> {
  const shape = shapeOfView(view);
  const p = row.post;
  const original = p.repostOf != null ? byId.get(p.repostOf) : undefined;
  const acted = original ?? row;
  const out: Record<string, unknown> = {
    id: String(p.id),
    created_at: iso(p.createdAt),
    thread_id: String(p.threadId),
  };
  if (p.replyTo != null) out.reply_to = String(p.replyTo);
  if (original) out.repost_of = renderPost(original, byId, view, { ...opts, actors: undefined });
  if (!p.isDeleted && !acted.post.isDeleted) {
    const c = content(acted.post);
    out.content = shape.postHtml ? { text: c.text, entities: c.entities, html: c.html } : { text: c.text, entities: c.entities };
  }
  if (shape.counts) {
    out.counts = { bookmarks: acted.post.bookmarks, replies: acted.post.replies, reposts: acted.post.reposts, threads: acted.post.threads };
  }
  const source = renderClientRef(row.app);
  out.source = shape.client ? source : source.id;
  Object.assign(out, embedUser(row.user, p.userId, view));
  if (p.isDeleted) out.is_deleted = true;
  if (p.isNsfw || acted.post.isNsfw) out.is_nsfw = true;
  if (acted.post.isRevised) out.is_revised = true;
  out.you_bookmarked = acted.youBookmarked;
  out.you_reposted = acted.youReposted;
  if ((opts.raw || shape.postRaw) && acted.post.raw != null && !acted.post.isDeleted) out.raw = acted.post.raw;
  if (opts.actors && shape.bookmarkedBy) out.bookmarked_by = (opts.actors.bookmarkedBy.get(acted.post.id) ?? []).map((u) => renderUser(u, view));
  if (opts.actors && shape.repostedBy) out.reposted_by = (opts.actors.repostedBy.get(acted.post.id) ?? []).map((u) => renderUser(u, view));
  if (row.note != null) out.note = row.note;
  return out;
}

/** An earlier version of a post (GET /posts/{id}/revisions): the post with that version's content. */
export function renderRevision(row: PostView, rev: RevisionRecord, view: ViewContext, opts: PostRenderOptions): Record<string, unknown> {
  const { is_revised: _revised, is_nsfw: _nsfw, raw: _raw, ...base } = renderPost(row, new Map(), { ...view, shape: { ...shapeOfView(view), postRaw: false } });
  const { html, ...rest } = content(rev);
  return {
    ...base,
    content: shapeOfView(view).postHtml ? { ...rest, html } : rest,
    ...(rev.isNsfw ? { is_nsfw: true } : {}),
    revision: String(rev.revision),
    ...((opts.raw || shapeOfView(view).postRaw) && rev.raw != null ? { raw: rev.raw } : {}),
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
  return renderPost(neutralPostView(row), neutral, { ...view, viewerId: null, shape: undefined }, { raw: true });
}
