import { z } from "@hono/zod-openapi";
import { ANY_TOKEN } from "../auth/access";
import { ok } from "../http/envelope";
import { ApiError } from "../http/errors";
import { finishPage, pageQuery, parsePage } from "../http/pagination";
import { createRouter, defineRoute, Envelope, errors } from "../http/route";
import { INTERACTION_ACTIONS, readInteractions, USERS_PER_INTERACTION, type InteractionAction } from "../stores/interactions";
import { viewContext } from "../views/context";
import { renderInteraction } from "../views/interaction";

const InteractionSchema = z
  .object({
    pagination_id: z.string(),
    event_date: z.string(),
    action: z.enum(INTERACTION_ACTIONS as [InteractionAction, ...InteractionAction[]]),
    objects: z.array(z.object({}).passthrough()),
    users: z.array(z.object({}).passthrough()),
  })
  .openapi("Interaction");

const actionList = (what: string) =>
  z.string().optional().openapi({ description: `Comma-separated actions ${what}: ${INTERACTION_ACTIONS.join(", ")}` });

/** Comma-separated actions; an unknown one is a 400 naming the parameter. Empty: not given. */
function parseActions(name: string, v: string | undefined): InteractionAction[] | undefined {
  const list = (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!list.length) return undefined;
  const bad = list.find((a) => !(INTERACTION_ACTIONS as readonly string[]).includes(a));
  if (bad !== undefined) throw ApiError.badRequest(`'${name}' has unknown action '${bad.slice(0, 32)}' (allowed: ${INTERACTION_ACTIONS.join(", ")})`);
  return list as InteractionAction[];
}

const on = (v: string | undefined) => v === "1" || v === "true";

export const interactionRoutes = createRouter().openapi(
  defineRoute(ANY_TOKEN, {
    method: "get",
    path: "/users/me/interactions",
    tags: ["Interactions"],
    summary: "Interactions with the caller's posts, polls and account, newest first",
    description:
      "Bookmarks, reposts and replies of the caller's posts, follows of the caller and responses to the caller's polls " +
      "(decisions §11). Events of the same action on the same object merge while each is within 24 hours of the item's " +
      `latest; \`pagination_id\` and \`event_date\` are the latest event's. \`users\`: the ${USERS_PER_INTERACTION} most ` +
      "recent distinct actors, newest first (none for anonymous polls). `objects`: the post acted on (for a reply, the " +
      "caller's post that was replied to), the followed user, or the abbreviated poll. `exclude` is ignored when `filters` " +
      "is set. Needs a user token (an app token has no 'me').",
    request: {
      query: z.object({
        ...pageQuery,
        filters: actionList("to include"),
        exclude: actionList("to leave out (ignored when `filters` is set)"),
        include_raw: z.string().optional().openapi({ description: "1: include `raw` on posts" }),
        include_post_raw: z.string().optional().openapi({ description: "1: include `raw` on posts" }),
      }),
    },
    responses: { 200: Envelope(z.array(InteractionSchema), "Paginated Interaction objects"), ...errors(400, 401, 403) },
  }),
  async (c) => {
    const user = c.var.auth?.user;
    if (!user) throw ApiError.forbidden("'me' needs a user token");
    const q = c.req.valid("query");
    const page = parsePage(q);
    const filters = parseActions("filters", q.filters);
    const excluded = filters ? undefined : parseActions("exclude", q.exclude);
    const actions = filters
      ? INTERACTION_ACTIONS.filter((a) => filters.includes(a))
      : INTERACTION_ACTIONS.filter((a) => !excluded?.includes(a));
    if (!actions.length) return ok(c, [], { more: false });
    const data = await readInteractions(c.var.db, user.id, actions, page);
    const { items, meta } = finishPage(data.groups, page, (g) => g.latestEventId);
    const view = viewContext(c);
    const opts = { raw: on(q.include_raw) || on(q.include_post_raw) };
    return ok(
      c,
      items.flatMap((g) => renderInteraction(g, data, view, opts) ?? []),
      meta,
    );
  },
);
