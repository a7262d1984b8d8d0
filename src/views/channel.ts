import { iso } from "../http/time";
import type { LimitedUser } from "../stores/channel-lists";
import { channelAccess, type ChannelRecord } from "../stores/channels";
import type { MessageRecord } from "../stores/messages";
import type { ViewContext } from "./context";
import { renderMarkerMeta } from "./marker";
import { renderMessage } from "./message";
import { embedUser } from "./user";

const ids = (list: number[]) => list.map(String);

/** What the general channel parameters add to a rendered channel. */
export interface ChannelRenderOptions {
  /** `include_raw` / `include_channel_raw`. */
  raw?: boolean;
  /** `include_marker`: the viewer's `channel:{id}` marker (`{name}` alone when unset). */
  marker?: boolean;
  /** `include_recent_message`: the messages read with the channels, and whether they show raw. */
  recent?: { messages: Map<number, MessageRecord>; raw: boolean };
  /** `include_limited_users`: the ACL members read with the channels. */
  limitedUsers?: Map<number, LimitedUser>;
}

/** The limited user of an ACL list: id, username, name if set, avatar URL, presence unless offline. */
function renderLimitedUser(u: LimitedUser, view: ViewContext) {
  return {
    id: String(u.id),
    username: u.username,
    ...(u.name ? { name: u.name } : {}),
    avatar_image: { url: u.avatarUrl ?? `${view.origin}/v1/static/default-avatar.png` },
    ...(u.presence ? { presence: u.presence } : {}),
  };
}

/**
 * The Channel object (decisions §4) as the viewer sees it: `acl.*.you` says whether the viewer
 * has that access; `raw`, `marker`, `recent_message` and `acl.*.users` only when asked for.
 */
export function renderChannel(ch: ChannelRecord, view: ViewContext, opts: ChannelRenderOptions = {}) {
  const you = channelAccess(ch, view.viewerId);
  const users = (list: number[]) => {
    const map = opts.limitedUsers;
    return map ? { users: list.flatMap((id) => (map.has(id) ? [renderLimitedUser(map.get(id)!, view)] : [])) } : {};
  };
  const recent = (id: number | null, field: string) => {
    const m = id != null ? opts.recent?.messages.get(id) : undefined;
    return m ? { [field]: renderMessage(m, view, { raw: opts.recent!.raw }) } : {};
  };
  const userViewer = view.viewerId != null && ch.hasUnread !== undefined;
  return {
    id: String(ch.id),
    type: ch.type,
    created_at: iso(ch.createdAt),
    ...embedUser(ch.owner, ch.ownerId, view),
    acl: {
      full: { immutable: ch.fullImmutable, you: you.full, user_ids: ids(ch.acl.full), ...users(ch.acl.full) },
      write: { any_user: ch.writeAnyUser, immutable: ch.writeImmutable, you: you.write, user_ids: ids(ch.acl.write), ...users(ch.acl.write) },
      read: {
        any_user: ch.readAnyUser,
        immutable: ch.readImmutable,
        public: ch.readPublic,
        you: you.read,
        user_ids: ids(ch.acl.read),
        ...users(ch.acl.read),
      },
    },
    counts: { messages: ch.messages, subscribers: ch.subscribers },
    has_sticky_messages: ch.hasStickyMessages,
    is_active: ch.isActive,
    recent_message_id: ch.recentMessageId == null ? null : String(ch.recentMessageId),
    ...recent(ch.recentMessageId, "recent_message"),
    ...(ch.recentDeletedMessageId != null ? { recent_deleted_message_id: String(ch.recentDeletedMessageId) } : {}),
    ...recent(ch.recentDeletedMessageId, "recent_deleted_message"),
    you_muted: ch.youMuted,
    you_subscribed: ch.youSubscribed,
    // Only for a user viewer (their `channel:{id}` marker); events and anonymous reads have none.
    ...(userViewer ? { has_unread: ch.hasUnread } : {}),
    ...(userViewer && opts.marker ? { marker: renderMarkerMeta(`channel:${ch.id}`, ch.marker ?? null) } : {}),
    ...(opts.raw && ch.raw != null ? { raw: ch.raw } : {}),
    ...(ch.paginationId != null ? { pagination_id: String(ch.paginationId) } : {}),
  };
}
