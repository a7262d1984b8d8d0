import { iso } from "../http/time";
import type { UserExtras, UserRecord, UserView } from "../stores/users";
import { emptyContent, type StoredContent } from "./content";
import { shapeOfView, type ViewContext } from "./context";

const DEFAULT_IMAGE = { width: 200, height: 200 };

/** A user row as the views take it: extras and relationship flags when the read had them. */
export type RenderableUser = UserRecord & Partial<UserExtras> & Partial<Omit<UserView, keyof UserRecord | keyof UserExtras>>;

/** `verified`: the URL the user proved to own and its host. */
function verified(url: string | null) {
  if (!url) return undefined;
  try {
    return { domain: new URL(url).hostname.replace(/^www\./, ""), url };
  } catch {
    return undefined;
  }
}

/**
 * The User object (decisions §4) as `viewer` sees it, shaped by the general user parameters of
 * the request (`html`, `counts`, `presence`, `raw`). `badge` only when the user shows one.
 */
export function renderUser(u: RenderableUser, view: ViewContext, opts: { email?: boolean } = {}) {
  const shape = shapeOfView(view);
  const self = view.viewerId === u.id;
  const rel = u.youFollow !== undefined ? u : null;
  const { html, ...content } = (u.description as StoredContent | null) ?? emptyContent(view.schemaBase, "User");
  const image = (url: string | null, width: number | null, height: number | null, kind: string) => ({
    url: url ?? `${view.origin}/v1/static/default-${kind}.png`,
    width: (url && width) || DEFAULT_IMAGE.width,
    height: (url && height) || DEFAULT_IMAGE.height,
    is_default: url == null,
  });
  const check = verified(u.verifiedUrl);
  return {
    id: String(u.id),
    created_at: iso(u.createdAt),
    username: u.username,
    name: u.name ?? "",
    type: u.type,
    locale: u.locale,
    timezone: u.timezone,
    ...(u.badgeId != null && u.badgeName != null ? { badge: { id: String(u.badgeId), name: u.badgeName } } : {}),
    ...(check ? { verified: check } : {}),
    content: {
      ...content,
      ...(shape.userHtml ? { html } : {}),
      ...(self ? { markdown_text: u.descriptionMarkdown ?? content.text } : {}),
      avatar_image: image(u.avatarUrl, u.avatarWidth, u.avatarHeight, "avatar"),
      cover_image: image(u.coverUrl, u.coverWidth, u.coverHeight, "cover"),
    },
    ...(shape.counts ? { counts: { bookmarks: u.bookmarks, clients: u.clients, followers: u.followers, following: u.following, posts: u.posts } } : {}),
    follows_you: rel?.followsYou ?? false,
    you_follow: rel?.youFollow ?? false,
    you_muted: rel?.youMuted ?? false,
    you_blocked: rel?.youBlocked ?? false,
    you_can_follow: view.viewerId != null && !self && !(rel?.youBlocked || rel?.blocksYou),
    ...(shape.presence ? { presence: u.presence ?? "offline" } : {}),
    ...(shape.userRaw && u.raw != null ? { raw: u.raw } : {}),
    ...(opts.email ? { data: { email: u.email ?? null } } : {}),
  };
}

/**
 * An object's author: `{user}` embedded, or `{user_id}` when the request says `include_user=0`
 * or the user is not at hand.
 */
export function embedUser(user: RenderableUser | null | undefined, userId: number, view: ViewContext) {
  return user && shapeOfView(view).includeUser ? { user: renderUser(user, view) } : { user_id: String(userId) };
}
