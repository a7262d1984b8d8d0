import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../http/types";
import { flagValue, postParams } from "../../http/params";
import { EXAMPLE_USER } from "./common";
import { ANY_TOKEN } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { finishPage, pageQuery, parsePage } from "../../http/pagination";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { readAlongsideToken } from "../../auth/authenticate";
import {
  decodeInteractionPage,
  INTERACTION_ACTIONS,
  interactionPageQueries,
  readInteractions,
  USERS_PER_INTERACTION,
  type InteractionAction,
} from "../../stores/interactions";
import { viewContext } from "../../views/context";
import { renderInteraction } from "../../views/interaction";

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
  z
    .string()
    .optional()
    .openapi({ description: `Comma-separated actions ${what}: ${INTERACTION_ACTIONS.join(", ")}` });

/** Comma-separated actions of `allowed`; any other is a 400 naming the parameter. Empty: not given. */
export function parseActions(
  name: string,
  v: string | undefined,
  allowed: readonly InteractionAction[] = INTERACTION_ACTIONS,
): InteractionAction[] | undefined {
  const list = (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!list.length) return undefined;
  const bad = list.find((a) => !(allowed as readonly string[]).includes(a));
  if (bad !== undefined) throw ApiError.badRequest(`'${name}' has unknown action '${bad.slice(0, 32)}' (allowed: ${allowed.join(", ")})`);
  return list as InteractionAction[];
}

const interactionsRoute = (path: string, deprecated: boolean) =>
  defineRoute(ANY_TOKEN, {
    method: "get",
    path,
    tags: ["Interactions"],
    summary: deprecated
      ? "Interactions with the caller's posts, polls and account (the older path of `GET /users/me/interactions`)"
      : "Interactions with the caller's posts, polls and account, newest first",
    ...(deprecated ? { deprecated: true } : {}),
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
        ...postParams,
      }),
    },
    responses: {
      200: Envelope(
        z.array(InteractionSchema),
        "Paginated Interaction objects",
        [{ pagination_id: "9021", event_date: "2026-11-20T18:20:00Z", action: "follow", objects: [EXAMPLE_USER], users: [EXAMPLE_USER] }],
        { more: false, min_id: "9021", max_id: "9021" },
      ),
      ...errors(400, 401, 403),
    },
  });

type InteractionsQuery = { count?: string; since_id?: string; before_id?: string; filters?: string; exclude?: string };

/** The page and the actions a query asks for. */
function parseInteractionsQuery(q: InteractionsQuery) {
  const page = parsePage(q);
  const filters = parseActions("filters", q.filters);
  const excluded = filters ? undefined : parseActions("exclude", q.exclude);
  const actions = filters ? INTERACTION_ACTIONS.filter((a) => filters.includes(a)) : INTERACTION_ACTIONS.filter((a) => !excluded?.includes(a));
  return { page, actions };
}

/** Whether the users shown carry their presence (`include_presence`): else it is not read. */
const withPresence = (c: Context<AppEnv>) => flagValue(c.req.query("include_presence"), false);

async function interactions(c: Context<AppEnv>, q: InteractionsQuery) {
  const user = c.var.auth?.user;
  if (!user) throw ApiError.forbidden("'me' needs a user token");
  const { page, actions } = parseInteractionsQuery(q);
  if (!actions.length) return ok(c, [], { more: false });
  // The page was read with the token lookup (one round trip), from the same parameters.
  const read = c.get("alongside");
  const data = read ? decodeInteractionPage(read) : await readInteractions(c.var.db, user.id, actions, page, withPresence(c));
  const { items, meta } = finishPage(data.groups, page, (g) => g.latestEventId);
  const view = viewContext(c);
  return ok(
    c,
    items.flatMap((g) => renderInteraction(g, data, view) ?? []),
    meta,
  );
}

for (const path of ["/users/me/interactions", "/users/me/actions"]) {
  readAlongsideToken(path, (c, viewer) => {
    const { page, actions } = parseInteractionsQuery(c.req.query());
    return actions.length ? [...interactionPageQueries(viewer, actions, page, withPresence(c))] : undefined;
  });
}

export const interactionRoutes = createRouter()
  .openapi(interactionsRoute("/users/me/interactions", false), (c) => interactions(c, c.req.valid("query")))
  .openapi(interactionsRoute("/users/me/actions", true), (c) => interactions(c, c.req.valid("query")));
