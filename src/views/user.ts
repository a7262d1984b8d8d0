import { iso } from "../http/time";
import type { UserExtras, UserRecord, UserView } from "../stores/users";
import { emptyContent, type StoredContent } from "./content";
import { shapeOfView, type ViewContext } from "./context";

const DEFAULT_IMAGE = { width: 200, height: 200 };

/** A user row as the views take it: extras and relationship flags when the read had them. */
export type RenderableUser = UserRecord & Partial<UserExtras> & Partial<Omit<UserView, keyof UserRecord | keyof UserExtras>>;

type Image = { url: string; width: number; height: number; is_default: boolean };

/** The User object as rendered (decisions §4); optional members only when the request or the user has them. */
export type RenderedUser = {
  id: string;
  created_at: string;
  username: string;
  name: string;
  type: string;
  locale: string;
  timezone: string;
  badge?: { id: string; name: string };
  verified?: { domain: string; url: string };
  content: Partial<Omit<StoredContent, "html">> & { html?: string; markdown_text?: string; avatar_image: Image; cover_image: Image };
  counts?: { bookmarks: number; clients: number; followers: number; following: number; posts: number };
  follows_you: boolean;
  you_follow: boolean;
  you_muted: boolean;
  you_blocked: boolean;
  you_can_follow: boolean;
  presence?: string;
  raw?: unknown;
  data?: { email: string | null };
};

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
export function renderUser(u: RenderableUser, view: ViewContext, opts: { email?: boolean } = {}): RenderedUser {
  const shape = shapeOfView(view);
  const self = view.viewerId === u.id;
  const rel = u.youFollow !== undefined ? u : null;
  const description = (u.description as StoredContent | null) ?? emptyContent(view.schemaBase, "User");
  const image = (url: string | null, width: number | null, height: number | null, kind: string): Image => ({
    url: url ?? `${view.origin}/v1/static/default-${kind}.png`,
    width: (url && width) || DEFAULT_IMAGE.width,
    height: (url && height) || DEFAULT_IMAGE.height,
    is_default: url == null,
  });
  // Built field by field, not with spreads of optional parts: users are rendered for every post of
  // every page, and the spreads' copies were most of this function's cost under the benchmark mix.
  const out: Record<string, unknown> = {
    id: String(u.id),
    created_at: iso(u.createdAt),
    username: u.username,
    name: u.name ?? "",
    type: u.type,
    locale: u.locale,
    timezone: u.timezone,
  };
  if (u.badgeId != null && u.badgeName != null) out.badge = { id: String(u.badgeId), name: u.badgeName };
  const check = verified(u.verifiedUrl);
  if (check) out.verified = check;
  const content: Record<string, unknown> = {};
  for (const key in description) if (key !== "html") content[key] = description[key as keyof StoredContent];
  if (shape.userHtml) content.html = description.html;
  if (self) content.markdown_text = u.descriptionMarkdown ?? description.text;
  content.avatar_image = image(u.avatarUrl, u.avatarWidth, u.avatarHeight, "avatar");
  content.cover_image = image(u.coverUrl, u.coverWidth, u.coverHeight, "cover");
  out.content = content;
  if (shape.counts) out.counts = { bookmarks: u.bookmarks, clients: u.clients, followers: u.followers, following: u.following, posts: u.posts };
  out.follows_you = rel?.followsYou ?? false;
  out.you_follow = rel?.youFollow ?? false;
  out.you_muted = rel?.youMuted ?? false;
  out.you_blocked = rel?.youBlocked ?? false;
  out.you_can_follow = view.viewerId != null && !self && !(rel?.youBlocked || rel?.blocksYou);
  if (shape.presence) out.presence = u.presence ?? "offline";
  if (shape.userRaw && u.raw != null) out.raw = u.raw;
  if (opts.email) out.data = { email: u.email ?? null };
  return out as unknown as RenderedUser;
}

/**
 * An object's author: `{user}` embedded, or `{user_id}` when the request says `include_user=0`
 * or the user is not at hand.
 */
export function embedUser(user: RenderableUser | null | undefined, userId: number, view: ViewContext) {
  return user && shapeOfView(view).includeUser ? { user: renderUser(user, view) } : { user_id: String(userId) };
}
