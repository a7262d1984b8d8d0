import { iso } from "../http/time";
import type { MessageRecord } from "../stores/messages";
import { renderClientRef } from "./client";
import type { StoredContent } from "./content";
import type { ViewContext } from "./context";
import { embedUser } from "./user";

/**
 * The Message object (decisions §4) as the viewer sees it. A deleted message keeps its id,
 * thread, author and counts but loses `content` and `raw`; `is_deleted` and `is_nsfw` appear
 * only when true; `raw` only when asked for (`include_raw` / `include_message_raw`).
 */
export function renderMessage(m: MessageRecord, view: ViewContext, opts: { raw?: boolean } = {}) {
  const content: StoredContent | null =
    m.isDeleted || m.text == null ? null : { text: m.text, html: m.html ?? "", entities: m.entities ?? { links: [], mentions: [], tags: [] } };
  return {
    id: String(m.id),
    channel_id: String(m.channelId),
    created_at: iso(m.createdAt),
    thread_id: String(m.threadId),
    ...(m.replyTo != null ? { reply_to: String(m.replyTo) } : {}),
    ...(content ? { content } : {}),
    counts: { replies: m.replies },
    source: renderClientRef(m.source),
    ...embedUser(m.user, m.userId, view),
    is_sticky: m.isSticky,
    ...(m.isDeleted ? { is_deleted: true } : {}),
    ...(m.isNsfw ? { is_nsfw: true } : {}),
    ...(opts.raw && !m.isDeleted && m.raw != null ? { raw: m.raw } : {}),
    ...(m.paginationId != null ? { pagination_id: String(m.paginationId) } : {}),
  };
}
