import { iso } from "../http/time";
import { channelAccess, type ChannelRecord } from "../stores/channels";
import type { ViewContext } from "./context";
import { embedUser } from "./user";

const ids = (list: number[]) => list.map(String);

/**
 * The Channel object (decisions §4) as the viewer sees it: `acl.*.you` says whether the viewer
 * has that access; `raw` only when asked for (`include_raw` / `include_channel_raw`).
 */
export function renderChannel(ch: ChannelRecord, view: ViewContext, opts: { raw?: boolean } = {}) {
  const you = channelAccess(ch, view.viewerId);
  return {
    id: String(ch.id),
    type: ch.type,
    created_at: iso(ch.createdAt),
    ...embedUser(ch.owner, ch.ownerId, view),
    acl: {
      full: { immutable: ch.fullImmutable, you: you.full, user_ids: ids(ch.acl.full) },
      write: { any_user: ch.writeAnyUser, immutable: ch.writeImmutable, you: you.write, user_ids: ids(ch.acl.write) },
      read: {
        any_user: ch.readAnyUser,
        immutable: ch.readImmutable,
        public: ch.readPublic,
        you: you.read,
        user_ids: ids(ch.acl.read),
      },
    },
    counts: { messages: ch.messages, subscribers: ch.subscribers },
    is_active: ch.isActive,
    recent_message_id: ch.recentMessageId == null ? null : String(ch.recentMessageId),
    you_muted: ch.youMuted,
    you_subscribed: ch.youSubscribed,
    // Only for a user viewer (their `channel:{id}` marker); events and anonymous reads have none.
    ...(view.viewerId != null && ch.hasUnread !== undefined ? { has_unread: ch.hasUnread } : {}),
    ...(opts.raw && ch.raw != null ? { raw: ch.raw } : {}),
    ...(ch.paginationId != null ? { pagination_id: String(ch.paginationId) } : {}),
  };
}
