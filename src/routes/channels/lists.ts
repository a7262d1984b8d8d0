import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { PUBLIC, currentUser, userToken } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { finishPage, pageQuery, parsePage } from "../../http/pagination";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { now, parseIso } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { PM_TYPE } from "../../stores/channel-sql";
import {
  existingPm,
  listOwned,
  lookupChannels,
  markAllRead,
  searchChannels,
  unreadCounts,
  type ChannelSearch,
  type SearchOrder,
} from "../../stores/channel-lists";
import { pmKeyOf } from "../../stores/channels";
import { newVersion } from "../../stores/markers";
import {
  ChannelSchema,
  channelExtras,
  channelFilters,
  channelListExample,
  channelListParams,
  channelRenderer,
  channelRenderParams,
  exampleChannel,
  idList,
} from "./common";
import { bit, csv, intParam, normalizeUserRef, resolveUserLists, TYPE_PATTERN } from "./input";

// Lookups and lists of channels (the reference's "Channel Lookup" and "Channel Search"):
// by ids, the caller's own, search, the private-message channel of a set of users, unread counts.

/** Most channel types num_unread takes at once (the reference's changelog: up to 10). */
const MAX_UNREAD_TYPES = 10;

const channelArray = z.array(ChannelSchema);
const countsSchema = z.record(z.string(), z.number()).openapi("UnreadCounts");

/** The `channel_types` of num_unread: valid type names, at most MAX_UNREAD_TYPES; default the private-message type. */
function unreadTypes(v: string | undefined): string[] {
  const types = [...new Set(csv(v))];
  if (types.some((t) => !TYPE_PATTERN.test(t) || t.length > 255)) throw ApiError.badRequest("'channel_types' must be comma-separated channel types");
  if (types.length > MAX_UNREAD_TYPES) throw ApiError.badRequest(`'channel_types' takes at most ${MAX_UNREAD_TYPES} types`);
  return types.length ? types : [PM_TYPE];
}

const unreadQuery = z.object({
  channel_types: z
    .string()
    .max(2600)
    .optional()
    .openapi({ description: `Comma-separated channel types (at most ${MAX_UNREAD_TYPES}); default \`${PM_TYPE}\``, example: PM_TYPE }),
});

async function getUnread(c: Context<AppEnv>, types: string[]) {
  return ok(c, await unreadCounts(c.var.db, currentUser(c).id, types));
}

async function deleteUnread(c: Context<AppEnv>, types: string[]) {
  await markAllRead(c.var.db, currentUser(c).id, types, newVersion(), now(c));
  return ok(c, Object.fromEntries(types.map((t) => [t, 0])));
}

function unreadDoc(method: "get" | "delete", legacy: boolean) {
  const summary =
    method === "get"
      ? legacy
        ? `Unread private-message channels (older path: num_unread with channel_types=${PM_TYPE})`
        : "How many subscribed channels of each type are unread"
      : legacy
        ? "Mark every private-message channel read (older path)"
        : "Mark every subscribed channel of the types read";
  const description =
    method === "get"
      ? "Per channel type: the caller's subscribed, active channels whose newest live message is above their `channel:{id}` marker " +
        "(no marker: unread). Needs `messages`; emits nothing."
      : "Moves the caller's `channel:{id}` marker of every unread subscribed channel of the types to its newest message (one " +
        "statement; `last_read_id` never moves back). Returns each type with 0. Needs `messages`; emits nothing.";
  return {
    tags: ["Channels"],
    summary,
    description,
    responses: { 200: Envelope(countsSchema, "Unread channels per type", { [PM_TYPE]: method === "get" ? 2 : 0 }), ...errors(400, 401, 403) },
  };
}

const unreadRoute = <M extends "get" | "delete">(method: M) =>
  defineRoute(userToken("messages"), { ...unreadDoc(method, false), method, path: "/users/me/channels/num_unread", request: { query: unreadQuery } });
const legacyUnreadRoute = <M extends "get" | "delete">(method: M) =>
  defineRoute(userToken("messages"), { ...unreadDoc(method, true), method, path: "/users/me/channels/num_unread/pm" });

export const searchQuery = z.object({
  ...pageQuery,
  ...channelListParams,
  q: z
    .string()
    .max(256)
    .optional()
    .openapi({ description: "Text searched for in the `name` and `description` of the channel's `io.example.core.chat-settings` raw" }),
  order: z
    .enum(["activity", "id", "popularity"])
    .optional()
    .openapi({ description: "activity (most recent message, default), id (newest channel) or popularity (most messages; one page)" }),
  categories: z.string().max(512).optional().openapi({ description: "Comma-separated categories of the chat-settings raw (any matches)", example: "fun,tech" }),
  created_after: z.string().optional().openapi({ description: "ISO 8601 time the channels were created after" }),
  created_before: z.string().optional().openapi({ description: "ISO 8601 time the channels were created before" }),
  owner_id: z.string().optional().openapi({ description: "Channels owned by this user id" }),
  file_id: z.string().optional().openapi({ description: "Channels whose raw names this file id" }),
  is_public: z.string().optional().openapi({ description: "1: only public channels; 0: only channels that are not public" }),
  raw_types: z.string().max(2600).optional().openapi({ description: "Comma-separated raw types; channels with any of them" }),
});

function isoParam(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === "") return undefined;
  const t = parseIso(v);
  if (t === null) throw ApiError.badRequest(`'${name}' must be an ISO 8601 time`);
  return t;
}

/** The search criteria of a GET /channels/search query (also its RSS feed's); a bad value is a 400. */
export function channelSearchOf(q: z.infer<typeof searchQuery>): ChannelSearch {
  const order: SearchOrder = q.order ?? "activity";
  if (order === "popularity" && (q.since_id || q.before_id)) throw ApiError.badRequest("'order=popularity' is one page: it takes no 'since_id' or 'before_id'");
  return {
    q: q.q?.trim() || undefined,
    order,
    categories: csv(q.categories).map((s) => s.toLowerCase()),
    createdAfter: isoParam("created_after", q.created_after),
    createdBefore: isoParam("created_before", q.created_before),
    ownerId: intParam("owner_id", q.owner_id),
    fileId: intParam("file_id", q.file_id),
    isPublic: bit("is_public", q.is_public),
    rawTypes: csv(q.raw_types),
  };
}

export const channelListRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels",
      tags: ["Channels"],
      summary: "Channels by id (at most the first 200; ones the caller may not read are left out)",
      description:
        "A lookup by ids in the order given; unknown ids and channels the caller may not read are skipped. Without `ids` (or with " +
        "an empty one) nothing is asked for, so nothing is found: an empty list, as the reference's lookup of the channels specified. " +
        "Public channels need no token. Takes the general channel parameters (a lookup keeps deactivated channels). The caller's " +
        "subscriptions are GET /users/me/channels/subscribed. Emits nothing.",
      request: {
        query: z.object({
          ...channelListParams,
          ids: z.string().optional().openapi({ description: "Comma-separated channel ids; none: an empty list", example: "1,2" }),
        }),
      },
      responses: { 200: Envelope(channelArray, "Channel objects", [exampleChannel]), ...errors(400, 401) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      if (!q.ids?.trim()) return ok(c, []);
      const ids = idList("ids", q.ids);
      const viewerId = c.var.auth?.user?.id ?? null;
      const read = await lookupChannels(c.var.db, ids, viewerId, { ...channelFilters(q), includeInactive: true }, channelExtras(q));
      return ok(c, read.channels.map(channelRenderer(c, read, true)));
    },
  )
  .openapi(
    defineRoute(userToken("messages"), {
      method: "get",
      path: "/users/me/channels",
      tags: ["Channels"],
      summary: "Channels the caller owns, newest first",
      description:
        "Channels the caller created or was given (private-message channels, which have no real owner, are left out), paginated by " +
        "channel id; takes the general channel parameters. Needs `messages`; emits nothing.",
      request: { query: z.object({ ...pageQuery, ...channelListParams }) },
      responses: {
        200: Envelope(channelArray, "Channel objects", [{ ...exampleChannel, pagination_id: "1" }], channelListExample()),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const page = parsePage(q);
      const read = await listOwned(c.var.db, currentUser(c).id, page, channelFilters(q), channelExtras(q));
      const { items, meta } = finishPage(read.channels, page, (r) => r.paginationId!);
      return ok(c, items.map(channelRenderer(c, read, true)), meta);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/search",
      tags: ["Channels"],
      summary: "Search channels the caller may read",
      description:
        "Filters by the chat-settings raw (`q`, `categories`), type, creation time, owner, attached file, publicness and raw types; " +
        "orders by activity, id or popularity. Public channels need no token. Takes the general channel parameters. Emits nothing.",
      request: { query: searchQuery },
      responses: { 200: Envelope(channelArray, "Channel objects", [{ ...exampleChannel, pagination_id: "1" }], channelListExample()), ...errors(400, 401) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const order = q.order ?? "activity";
      const page = parsePage(q);
      const read = await searchChannels(c.var.db, channelSearchOf(q), c.var.auth?.user?.id ?? null, page, channelFilters(q), channelExtras(q));
      const { items, meta } = finishPage(read.channels, page, (r) => r.paginationId!);
      return ok(c, items.map(channelRenderer(c, read, true)), order === "popularity" ? { more: meta.more } : meta);
    },
  )
  .openapi(
    defineRoute(userToken("messages"), {
      method: "get",
      path: "/users/me/channels/existing_pm",
      tags: ["Channels"],
      summary: "The private-message channel between exactly these users, if it exists",
      description:
        "`ids`: user ids or @usernames; the caller is included whether named or not. 404 when no such channel exists (or the caller " +
        "may not read it); an unknown @username is a 400. Takes the general channel parameters. Needs `messages`; emits nothing.",
      request: {
        query: z.object({
          ...channelRenderParams,
          ids: z.string({ message: "is required" }).max(4096).openapi({ description: "Comma-separated user ids or @usernames", example: "2,@ada" }),
        }),
      },
      responses: { 200: Envelope(ChannelSchema, "Channel object", { ...exampleChannel, type: PM_TYPE }), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const q = c.req.valid("query");
      const refs = csv(q.ids);
      if (!refs.length) throw ApiError.badRequest("'ids' must name at least one user");
      if (refs.length > 200) throw ApiError.badRequest("'ids' names at most 200 users");
      // Ids need no lookup (an unknown id simply has no channel); @usernames are resolved first.
      const numeric = refs.every((r) => /^\d{1,18}$/.test(r));
      const ids = numeric ? refs.map(Number) : (await resolveUserLists(c, { ids: refs.map(normalizeUserRef) }, user.id)).ids.ids;
      const read = await existingPm(c.var.db, pmKeyOf([...ids, user.id]), user.id, channelExtras(q));
      const ch = read.channels[0];
      if (!ch) throw ApiError.notFound("no private-message channel between these users");
      return ok(c, channelRenderer(c, read, false)(ch));
    },
  )
  .openapi(unreadRoute("get"), async (c) => getUnread(c, unreadTypes(c.req.valid("query").channel_types)))
  .openapi(unreadRoute("delete"), async (c) => deleteUnread(c, unreadTypes(c.req.valid("query").channel_types)))
  .openapi(legacyUnreadRoute("get"), async (c) => getUnread(c, [PM_TYPE]))
  .openapi(legacyUnreadRoute("delete"), async (c) => deleteUnread(c, [PM_TYPE]));
