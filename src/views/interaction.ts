import { iso } from "../http/time";
import type { InteractionGroup, InteractionPage } from "../stores/interactions";
import type { ViewContext } from "./context";
import { renderAbbreviatedPoll } from "./poll";
import { renderPost } from "./post";
import { renderUser } from "./user";

/**
 * The Interaction object (api.md, decisions §11) for one group of the page: `objects` are what was
 * acted on (the post bookmarked, reposted or replied to; the user followed; the abbreviated poll
 * responded to), `users` who acted, newest first (empty for an anonymous poll). Undefined when
 * the object is gone (a deleted poll), so the item is left out.
 */
export function renderInteraction(g: InteractionGroup, data: InteractionPage, view: ViewContext) {
  let object: Record<string, unknown> | undefined;
  let anonymous = false;
  if (g.action === "follow") {
    const u = data.users.get(g.objectId);
    if (u) object = renderUser(u, view);
  } else if (g.action === "poll_response") {
    const p = data.polls.get(g.objectId);
    if (p && !p.isDeleted) {
      object = renderAbbreviatedPoll(p, p.options, view);
      anonymous = p.isAnonymous;
    }
  } else {
    const p = data.posts.byId.get(g.objectId);
    if (p) object = renderPost(p, data.posts.byId, view);
  }
  if (!object) return undefined;
  return {
    pagination_id: String(g.latestEventId),
    event_date: iso(g.latestAt),
    action: g.action,
    objects: [object],
    users: anonymous ? [] : (data.actors.get(g.id) ?? []).map((u) => renderUser(u, view)),
  };
}
