import { iso } from "../http/time";
import type { UserRecord, UserView } from "../stores/users";
import { emptyContent, type StoredContent } from "./content";
import type { ViewContext } from "./context";

const DEFAULT_AVATAR = { width: 200, height: 200 };

/** The User object (decisions §4) as `viewer` sees it. */
export function renderUser(u: UserRecord | UserView, view: ViewContext, opts: { email?: boolean } = {}) {
  const self = view.viewerId === u.id;
  const rel = "youFollow" in u ? u : null;
  const content = (u.description as StoredContent | null) ?? emptyContent(view.schemaBase, "User");
  const image = (url: string | null, kind: string) => ({
    url: url ?? `${view.origin}/v1/static/default-${kind}.png`,
    ...DEFAULT_AVATAR,
    is_default: url == null,
  });
  return {
    id: String(u.id),
    created_at: iso(u.createdAt),
    username: u.username,
    name: u.name ?? "",
    type: u.type,
    locale: u.locale,
    timezone: u.timezone,
    content: {
      ...content,
      ...(self ? { markdown_text: u.descriptionMarkdown ?? content.text } : {}),
      avatar_image: image(u.avatarUrl, "avatar"),
      cover_image: image(u.coverUrl, "cover"),
    },
    counts: { bookmarks: u.bookmarks, clients: u.clients, followers: u.followers, following: u.following, posts: u.posts },
    follows_you: rel?.followsYou ?? false,
    you_follow: rel?.youFollow ?? false,
    you_muted: rel?.youMuted ?? false,
    you_blocked: rel?.youBlocked ?? false,
    you_can_follow: view.viewerId != null && !self && !(rel?.youBlocked || rel?.blocksYou),
    ...(opts.email ? { data: { email: u.email ?? null } } : {}),
  };
}
