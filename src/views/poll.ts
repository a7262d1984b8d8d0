import { iso } from "../http/time";
import type { LoadedPoll, PollRecord } from "../stores/polls";
import type { UserRecord, UserView } from "../stores/users";
import { renderClientRef } from "./client";
import { shapeOfView, type ViewContext } from "./context";
import { embedUser, renderUser } from "./user";

/** Whether a poll no longer takes responses at `now` (unix seconds). */
export const isClosed = (poll: Pick<PollRecord, "closedAt">, now: number) => poll.closedAt <= now;

/**
 * The Poll object (decisions §4) as the viewer sees it: `poll_token` only for the creator;
 * `is_your_response` only when there is a viewer; `respondents` only once closed, and
 * `respondent_ids` only once closed and never for anonymous polls; `raw` when asked for
 * (`opts.raw`, `include_raw`, `include_poll_raw`).
 */
export function renderPoll(p: LoadedPoll, view: ViewContext, opts: { raw?: boolean } = {}) {
  const { poll } = p;
  const closed = isClosed(poll, view.now);
  const mine = new Set(p.myPositions ?? []);
  return {
    id: String(poll.id),
    created_at: iso(poll.createdAt),
    closed_at: iso(poll.closedAt),
    type: poll.type,
    prompt: poll.prompt,
    is_anonymous: poll.isAnonymous,
    is_public: poll.isPublic,
    max_options: poll.maxOptions,
    options: p.options.map((o) => ({
      text: o.text,
      position: o.position,
      ...(view.viewerId != null ? { is_your_response: mine.has(o.position) } : {}),
      ...(closed ? { respondents: o.respondents } : {}),
      ...(closed && !poll.isAnonymous ? { respondent_ids: (p.respondentIds.get(o.position) ?? []).map(String) } : {}),
    })),
    ...(view.viewerId === poll.userId ? { poll_token: poll.pollToken } : {}),
    source: renderClientRef(p.app),
    ...embedUser(p.user, poll.userId, view),
    ...((opts.raw || shapeOfView(view).pollRaw) && poll.raw != null ? { raw: poll.raw } : {}),
  };
}

/**
 * The abbreviated poll (decisions §4): `{id, prompt, closed_at, poll_token?, options[{text,
 * position}]}`, static and without users; `poll_token` only for the creator.
 */
export function renderAbbreviatedPoll(
  poll: Pick<PollRecord, "id" | "prompt" | "closedAt" | "userId" | "pollToken">,
  options: { position: number; text: string }[],
  view: Pick<ViewContext, "viewerId">,
) {
  return {
    id: String(poll.id),
    prompt: poll.prompt,
    closed_at: iso(poll.closedAt),
    ...(view.viewerId === poll.userId ? { poll_token: poll.pollToken } : {}),
    options: options.map((o) => ({ text: o.text, position: o.position })),
  };
}

/**
 * Data of a `poll` event (decisions §8): `{poll, user}`, the poll rendered for no viewer (so no
 * `poll_token`, no `is_your_response`). `user` is who acted; on an anonymous poll it is left out
 * unless it is the creator (who is no secret): a respondent is never named.
 */
export function renderPollEvent(p: LoadedPoll, actor: UserRecord | UserView, view: ViewContext) {
  const nobody: ViewContext = { ...view, viewerId: null, shape: undefined };
  const named = !p.poll.isAnonymous || actor.id === p.poll.userId;
  return { poll: renderPoll(p, nobody, { raw: true }), ...(named ? { user: renderUser(actor, nobody) } : {}) };
}
