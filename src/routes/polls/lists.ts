import { z } from "@hono/zod-openapi";
import { currentUser, PUBLIC } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { examplePoll, examplePollResponse } from "../../http/examples";
import type { Context } from "hono";
import { finishPage, pageQuery, parsePage, type Page } from "../../http/pagination";
import { queryFlag } from "../../http/params";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { iso, now, parseIso } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { searchPolls, type PollSearch } from "../../stores/poll-search";
import { pollsByCreator, responsesToCreator, type LoadedPoll } from "../../stores/polls";
import { viewContext } from "../../views/context";
import { renderAbbreviatedPoll, renderPoll } from "../../views/poll";
import { renderUser } from "../../views/user";
import { bit, csv, intParam } from "../channels/input";
import { POLLS, PollResponseItemSchema, PollSchema, allowedTypes, listFilters, parseIds, pollErrors, pollListQuery } from "./common";

// Lists of polls: the caller's polls, the responses to them, and poll search.

const searchQuery = pollListQuery.extend({
  ...pageQuery,
  order: z.enum(["id", "closed_at"]).optional().openapi({ description: "`id` (default: newest poll first) or `closed_at` (latest closing first; ties by id)" }),
  created_after: z.string().optional().openapi({ description: "Only polls created after this ISO 8601 time (exclusive)", example: "2026-03-01T00:00:00Z" }),
  created_before: z.string().optional().openapi({ description: "Only polls created before this ISO 8601 time (exclusive)" }),
  creator_id: z.string().optional().openapi({ description: "Only polls created by this user: an integer id, `@username`, or `me`" }),
  file_id: z.string().optional().openapi({ description: "Only polls whose raw names this file (an integer file id)" }),
  is_anonymous: queryFlag("`1`: only anonymous polls; `0`: only polls that are not"),
  is_closed: queryFlag("`1`: only closed polls; `0`: only open ones"),
  is_public: queryFlag("`1`: only public polls; `0`: only private ones"),
  raw_types: z.string().optional().openapi({ description: "Only polls carrying `raw` of any of these types (comma-separated)" }),
  you_responded: queryFlag("`1`: only polls the caller has responded to; `0`: only those they have not (needs a user token)"),
});
type SearchQuery = z.infer<typeof searchQuery>;

function isoParam(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === "") return undefined;
  const t = parseIso(v);
  if (t === null) throw ApiError.badRequest(`'${name}' must be an ISO 8601 timestamp`);
  return t;
}

/** Validates the search query; `me` and `you_responded` need a user. */
function parseSearch(auth: AppEnv["Variables"]["auth"], q: SearchQuery): PollSearch {
  let creator: PollSearch["creator"];
  const v = q.creator_id;
  if (v !== undefined && v !== "") {
    if (/^\d{1,18}$/.test(v)) creator = { id: Number(v) };
    else if (v === "me" && auth?.user) creator = { id: auth.user.id };
    else if (/^@[A-Za-z0-9_]{1,20}$/.test(v)) creator = { username: v.slice(1).toLowerCase() };
    else throw ApiError.badRequest("'creator_id' must be an integer user id, '@username' or 'me' (with a user token)");
  }
  const youResponded = bit("you_responded", q.you_responded);
  if (youResponded !== undefined && !auth?.user) {
    throw auth ? ApiError.forbidden("'you_responded' needs a user token") : ApiError.unauthorized("'you_responded' needs a user token");
  }
  return {
    order: q.order ?? "id",
    createdAfter: isoParam("created_after", q.created_after),
    createdBefore: isoParam("created_before", q.created_before),
    creator,
    fileId: intParam("file_id", q.file_id),
    isAnonymous: bit("is_anonymous", q.is_anonymous),
    isClosed: bit("is_closed", q.is_closed),
    isPublic: bit("is_public", q.is_public),
    rawTypes: csv(q.raw_types).slice(0, 100),
    youResponded,
    list: listFilters(q),
  };
}

/** A page of polls, each with its pagination id (the poll's id). */
function okPollPage(c: Context<AppEnv>, rows: LoadedPoll[], page: Page) {
  const { items, meta } = finishPage(rows, page, (p) => p.poll.id);
  const view = viewContext(c);
  return ok(
    c,
    items.map((p) => ({ ...renderPoll(p, view), pagination_id: String(p.poll.id) })),
    meta,
  );
}

export const pollListRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/polls/search",
      tags: ["Polls"],
      summary: "Search polls: public ones, and private ones you created or responded to",
      description:
        "Polls matching every filter given, newest first (`order=id`, paginated by poll id) or latest closing first (`order=closed_at`: `before_id`/`since_id` name a poll of the result list, its `pagination_id`). " +
        "Finds public polls, and private polls the caller created or responded to. Any token or none (`you_responded` and `creator_id=me` need a user token). Emits nothing.",
      request: { query: searchQuery },
      responses: { 200: Envelope(z.array(PollSchema), "Poll objects", [examplePoll], { more: false, max_id: "1", min_id: "1" }), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const search = parseSearch(c.var.auth, q);
      const page = parsePage(q);
      const rows = await searchPolls(c.var.db, search, page, viewContext(c).viewerId, now(c));
      return okPollPage(c, rows, page);
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "get",
      path: "/users/me/polls",
      tags: ["Polls"],
      summary: "Polls you created, newest first (paginated)",
      description:
        "The caller's own polls, newest first, paginated by `before_id`/`since_id`/`count`; the general poll parameters filter them (`include_closed`, `include_private`, `poll_types`, `exclude_poll_types`). Needs a user token with `polls`; emits nothing.",
      request: { query: pollListQuery.extend(pageQuery) },
      responses: { 200: Envelope(z.array(PollSchema), "Poll objects", [examplePoll], { more: false, max_id: "1", min_id: "1" }), ...pollErrors },
    }),
    async (c) => {
      const user = currentUser(c);
      const q = c.req.valid("query");
      const page = parsePage(q);
      const rows = await pollsByCreator(c.var.db, user.id, page, allowedTypes(c.var.auth!.scopes), now(c), listFilters(q));
      return okPollPage(c, rows, page);
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "get",
      path: "/users/me/polls/responses",
      tags: ["Polls"],
      summary: "Responses to polls you created, newest first, as abbreviated polls (paginated)",
      description:
        "One item per current response to the caller's polls, newest first: the abbreviated poll with the response's `created_at` and `pagination_id`, and the respondent unless the poll is anonymous. Needs a user token with `polls`; emits nothing.",
      request: {
        query: pollListQuery.extend({
          ...pageQuery,
          ids: z.string().optional().openapi({ description: "Only responses to these polls (comma-separated ids)" }),
        }),
      },
      responses: {
        200: Envelope(z.array(PollResponseItemSchema), "Abbreviated polls, one per response", [examplePollResponse], { more: false, max_id: "1", min_id: "1" }),
        ...pollErrors,
      },
    }),
    async (c) => {
      const user = currentUser(c);
      const q = c.req.valid("query");
      const page = parsePage(q);
      const ids = q.ids?.trim() ? parseIds(q.ids, "ids") : null;
      const rows =
        ids && !ids.length
          ? []
          : await responsesToCreator(c.var.db, user.id, page, ids, allowedTypes(c.var.auth!.scopes), { now: now(c), list: listFilters(q) });
      const { items, meta } = finishPage(rows, page, (r) => r.id);
      const view = viewContext(c);
      return ok(
        c,
        items.map((r) => ({
          ...renderAbbreviatedPoll(r.poll, r.options, view),
          created_at: iso(r.createdAt),
          ...(r.poll.isAnonymous ? {} : { user: renderUser(r.responder, view) }),
          pagination_id: String(r.id),
        })),
        meta,
      );
    },
  );
