import { iso } from "../http/time";
import type { MessageRecord } from "../stores/messages";
import { renderClientRef } from "./client";
import type { StoredContent } from "./content";
import { shapeOfView, type ViewContext } from "./context";
import { embedUser } from "./user";

/**
 * The Message object (decisions §4) as the viewer sees it, shaped by the general message
 * parameters. A deleted message keeps its id, thread, author and counts but loses `content` and
 * `raw`, and names `deleted_by` when a moderator (not its author) deleted it; `is_deleted` and
 * `is_nsfw` appear only when true; `raw` only when asked for (`opts.raw`, `include_raw`,
 * `include_message_raw`); `html` unless `include_html=0`/`include_message_html=0`; `source` is the
 * client id with `include_client=0`.
 */
export function renderMessage(m: MessageRecord, view: ViewContext, opts: { raw?: boolean } = {}) {
  const shape = shapeOfView(view);
  let content: Partial<StoredContent> | null =
    m.isDeleted || m.text == null ? null : { text: m.text, html: m.html ?? "", entities: m.entities ?? { links: [], mentions: [], tags: [] } };
  if (content && !shape.messageHtml) {
    const { html: _html, ...rest } = content;
    content = rest;
  }
  const source = renderClientRef(m.source);
  return {
    id: String(m.id),
    channel_id: String(m.channelId),
    created_at: iso(m.createdAt),
    thread_id: String(m.threadId),
    ...(m.replyTo != null ? { reply_to: String(m.replyTo) } : {}),
    ...(content ? { content } : {}),
    counts: { replies: m.replies },
    source: shape.client ? source : source.id,
    ...embedUser(m.user, m.userId, view),
    is_sticky: m.isSticky,
    ...(m.isDeleted ? { is_deleted: true } : {}),
    ...(m.isDeleted && m.deletedBy != null && m.deletedBy !== m.userId ? { deleted_by: String(m.deletedBy) } : {}),
    ...(m.isNsfw ? { is_nsfw: true } : {}),
    ...((opts.raw || shape.messageRaw) && !m.isDeleted && m.raw != null ? { raw: m.raw } : {}),
    ...(m.paginationId != null ? { pagination_id: String(m.paginationId) } : {}),
  };
}
