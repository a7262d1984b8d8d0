import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../../auth/access";
import { ApiError } from "../../http/errors";
import { finishPage, pageQuery, parsePage } from "../../http/pagination";
import { resolveUserRef } from "../../http/refs";
import { createRouter, defineRoute, errors } from "../../http/route";
import { now } from "../../http/time";
import { CHAT_SETTINGS, searchChannels } from "../../stores/channel-lists";
import type { ChannelRecord } from "../../stores/channels";
import type { MessageRecord } from "../../stores/messages";
import { channelMessages } from "../../stores/messages";
import { readList } from "../../stores/post-lists";
import { readPosts, type PostSet, type PostView } from "../../stores/posts";
import { postSearchPage } from "../../stores/search/posts";
import { normalizeTag } from "../../text";
import { viewContext } from "../../views/context";
import { fillTemplate, renderRss, RSS_CONTENT_TYPE, titleOf, xml, type LinkParts, type RssChannel, type RssItem } from "../../views/rss";
import { channelExtras, channelFilters, channelParams } from "../channels/common";
import { channelSearchOf, searchQuery } from "../channels/lists";
import { messageListQuery, requireReadable } from "../messages/common";
import { listFilters, ListQuery, userParam, type Ctx } from "../posts/common";
import { parseSearch, SearchQuery } from "../posts/search";

// The RSS feeds (the reference's "RSS"): tagged posts, a user's posts, post search, a channel's
// messages and channel search, as RSS 2.0. Each reads the same page the JSON list reads (the same
// stores, pagination and filter parameters); deleted posts and messages are never items.

const uriTemplate = {
  uri_template: z
    .string()
    .max(2048)
    .optional()
    .openapi({
      description:
        "Where items link: an http(s) URL with any of `{post_id}`, `{channel_id}`, `{message_id}`, `{username}`, `{user_id}` (URL-encoded). " +
        "Default: the item's own API URL.",
      example: "https://app.example.com/c/{channel_id}/{message_id}",
    }),
};

const rssResponse = (description: string) => ({ 200: { description, content: { "application/rss+xml": { schema: z.string() } } }, ...errors(400, 401, 404) });

const feedDoc = (json: string) =>
  `The RSS 2.0 form of \`${json}\`: the same page (\`count\`, \`before_id\`, \`since_id\`) and filter parameters; deleted items are left out. ` +
  "`uri_template` sets where items link. `application/rss+xml`; errors are the JSON envelope. Emits nothing.";

/** The request's link template, checked: an absolute http(s) URL. */
function template(c: Ctx, fallback: string): string {
  const t = c.req.query("uri_template");
  if (t === undefined || t === "") return fallback;
  let url: URL | undefined;
  try {
    url = new URL(t.replace(/[{}]/g, ""));
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) throw ApiError.badRequest("'uri_template' must be an http(s) URL");
  return t;
}

/** The request's URL without its `access_token` (a feed is shared and cached; the token must not travel in it). */
function urlWithoutToken(c: Ctx, drop: string[] = []): URL {
  const u = new URL(c.req.url);
  for (const name of ["access_token", ...drop]) u.searchParams.delete(name);
  return u;
}

/** The JSON list's URL for a search feed's `<link>`: the search's parameters, without the token or `uri_template`. */
const searchLink = (c: Ctx, origin: string, path: string) => {
  const query = urlWithoutToken(c, ["uri_template"]).searchParams.toString();
  return `${origin}/v1${path}${query ? `?${query}` : ""}`;
};

function rss(c: Ctx, ch: Omit<RssChannel, "self">, items: RssItem[]) {
  const body = renderRss({ ...ch, self: urlWithoutToken(c).toString() }, items, now(c));
  return c.body(body, 200, { "Content-Type": RSS_CONTENT_TYPE }) as never;
}

/** A post as an RSS item: a repost shows its original (`@a reposted @b: …`). */
function postItem(v: PostView, set: PostSet, link: string, origin: string): RssItem {
  const original = v.post.repostOf != null ? set.byId.get(v.post.repostOf) : undefined;
  const shown = original ?? v;
  const author = v.user?.username ?? `user ${v.post.userId}`;
  const prefix = original ? `@${author} reposted @${original.user?.username ?? original.post.userId}` : `@${author}`;
  const parts: LinkParts = { post_id: String(shown.post.id), user_id: String(shown.post.userId), username: shown.user?.username ?? "" };
  return {
    title: titleOf(prefix, shown.post.text ?? ""),
    link: fillTemplate(link, parts),
    guid: `${origin}/v1/posts/${v.post.id}`,
    pubDate: v.post.createdAt,
    description: shown.post.html ?? xml(shown.post.text ?? ""),
    creator: author,
  };
}

/** The live posts of a page as items (a repost whose original is deleted is left out too). */
function postItems(c: Ctx, set: PostSet, page: ReturnType<typeof parsePage>): RssItem[] {
  const origin = viewContext(c).origin;
  const link = template(c, `${origin}/v1/posts/{post_id}`);
  const { items } = finishPage(set.page, page, (r) => r.pid ?? r.post.id);
  return items
    .filter((v) => !v.post.isDeleted && (v.post.repostOf == null || set.byId.get(v.post.repostOf)?.post.isDeleted === false))
    .map((v) => postItem(v, set, link, origin));
}

/** The list filters of the request, with deleted posts always left out. */
const liveFilters = (c: Ctx) => ({ ...listFilters(c), deleted: false });

/** The chat-settings name (and description) of a channel, if it has them. */
function chatSettings(ch: ChannelRecord): { name?: string; description?: string } {
  const raw = ch.raw as Record<string, unknown> | null;
  const first = Array.isArray(raw?.[CHAT_SETTINGS]) ? (raw![CHAT_SETTINGS] as unknown[])[0] : undefined;
  if (!first || typeof first !== "object") return {};
  const s = first as Record<string, unknown>;
  // The description is stored processed (`{text, html, entities}`); older rows hold a plain string.
  const d = s.description as { text?: unknown } | string | undefined;
  const description = typeof d === "string" ? d : typeof d?.text === "string" ? d.text : undefined;
  return { ...(typeof s.name === "string" ? { name: s.name } : {}), ...(description !== undefined ? { description } : {}) };
}

const channelTitle = (ch: ChannelRecord) => chatSettings(ch).name || `Channel ${ch.id}`;

function messageItem(m: MessageRecord, link: string, origin: string): RssItem {
  const author = m.user?.username ?? `user ${m.userId}`;
  const parts: LinkParts = { channel_id: String(m.channelId), message_id: String(m.id), user_id: String(m.userId), username: m.user?.username ?? "" };
  return {
    title: titleOf(`@${author}`, m.text ?? ""),
    link: fillTemplate(link, parts),
    guid: `${origin}/v1/channels/${m.channelId}/messages/${m.id}`,
    pubDate: m.createdAt,
    description: m.html ?? xml(m.text ?? ""),
    creator: author,
  };
}

export const feedRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/feed/rss/posts/tags/{tag}",
      tags: ["Feeds"],
      summary: "Posts with a tag, as RSS",
      description: feedDoc("GET /posts/tags/{tag}") + " No token needed.",
      request: {
        params: z.object({
          tag: z
            .string()
            .min(1)
            .max(256)
            .openapi({ param: { name: "tag", in: "path" }, description: "The tag, with or without `#`", example: "oldies" }),
        }),
        query: ListQuery.extend(uriTemplate),
      },
      responses: rssResponse("RSS 2.0 of the tag's posts, newest first"),
    }),
    async (c) => {
      const tag = normalizeTag(c.req.valid("param").tag.replace(/^#/, ""));
      if (!tag) throw ApiError.badRequest("'tag' must name a tag");
      const page = parsePage(c.req.valid("query"));
      const { set } = await readList(c.var.db, { kind: "tag", tag }, page, viewContext(c).viewerId, { filters: liveFilters(c) });
      const origin = viewContext(c).origin;
      return rss(
        c,
        { title: `Posts tagged #${tag}`, link: `${origin}/v1/posts/tags/${encodeURIComponent(tag)}`, description: `Posts tagged #${tag}` },
        postItems(c, set, page),
      );
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/feed/rss/users/{user_id}/posts",
      tags: ["Feeds"],
      summary: "A user's posts and reposts, as RSS",
      description: feedDoc("GET /users/{user_id}/posts") + " No token needed (`me` needs a user token).",
      request: { params: userParam, query: ListQuery.extend(uriTemplate) },
      responses: rssResponse("RSS 2.0 of the user's posts, newest first"),
    }),
    async (c) => {
      const userId = await resolveUserRef(c, c.req.valid("param").user_id);
      const page = parsePage(c.req.valid("query"));
      const { found, set } = await readList(c.var.db, { kind: "user", userId }, page, viewContext(c).viewerId, { filters: liveFilters(c) });
      if (!found) throw ApiError.notFound("no such user");
      const origin = viewContext(c).origin;
      // The user's name from their own items (every item is theirs); a user without posts is named by id.
      const name = set.page.find((v) => v.post.userId === userId)?.user?.username;
      const who = name ? `@${name}` : `user ${userId}`;
      return rss(
        c,
        { title: `Posts by ${who}`, link: `${origin}/v1/users/${userId}/posts`, description: `Posts and reposts by ${who}` },
        postItems(c, set, page),
      );
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/feed/rss/posts/search",
      tags: ["Feeds"],
      summary: "Post search results, as RSS",
      description: feedDoc("GET /posts/search") + " Takes every search parameter. No token needed.",
      request: { query: SearchQuery.extend(uriTemplate) },
      responses: rssResponse("RSS 2.0 of the matching posts"),
    }),
    async (c) => {
      const q = c.req.valid("query");
      const search = parseSearch(c, q);
      const page = parsePage(q);
      const viewerId = viewContext(c).viewerId;
      const set = await readPosts(c.var.db, viewerId, postSearchPage(search, page, viewerId, liveFilters(c)), { paged: true });
      const origin = viewContext(c).origin;
      const what = q.q ? `Posts matching “${q.q}”` : "Post search";
      return rss(c, { title: what, link: searchLink(c, origin, "/posts/search"), description: what }, postItems(c, set, page));
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/feed/rss/channels/{channel_id}/messages",
      tags: ["Feeds"],
      summary: "A channel's messages, as RSS",
      description:
        feedDoc("GET /channels/{channel_id}/messages") +
        " Public channels need no token; others need the reader's token (a feed reader sends it as `?access_token=`). A channel the caller may not read is a 404.",
      request: { params: channelParams, query: messageListQuery.extend({ ...pageQuery, ...uriTemplate }) },
      responses: rssResponse("RSS 2.0 of the channel's messages, newest first"),
    }),
    async (c) => {
      const id = Number(c.req.valid("param").channel_id);
      const view = viewContext(c);
      const page = parsePage(c.req.valid("query"));
      const res = await channelMessages(c.var.db, id, view.viewerId, page, { includeDeleted: false });
      const { ch } = requireReadable(res.channel, view.viewerId);
      const link = template(c, `${view.origin}/v1/channels/{channel_id}/messages/{message_id}`);
      const { items } = finishPage(res.messages, page, (m) => m.paginationId!);
      const title = channelTitle(ch);
      return rss(
        c,
        { title, link: `${view.origin}/v1/channels/${id}/messages`, description: chatSettings(ch).description || `Messages of ${title}` },
        items.filter((m) => !m.isDeleted).map((m) => messageItem(m, link, view.origin)),
      );
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/feed/rss/channels/search",
      tags: ["Feeds"],
      summary: "Channel search results, as RSS",
      description:
        feedDoc("GET /channels/search") +
        " Takes every search parameter. Each item is a channel: its chat-settings name and description, linked by `{channel_id}` (default: the channel's API URL).",
      request: { query: searchQuery.extend(uriTemplate) },
      responses: rssResponse("RSS 2.0 of the matching channels"),
    }),
    async (c) => {
      const q = c.req.valid("query");
      const search = channelSearchOf(q);
      const page = parsePage(q);
      const view = viewContext(c);
      const read = await searchChannels(c.var.db, search, view.viewerId, page, channelFilters(q), channelExtras({}));
      const link = template(c, `${view.origin}/v1/channels/{channel_id}`);
      const { items } = finishPage(read.channels, page, (r) => r.paginationId!);
      const what = search.q ? `Channels matching “${search.q}”` : "Channel search";
      return rss(
        c,
        { title: what, link: searchLink(c, view.origin, "/channels/search"), description: what },
        items.map((ch) => ({
          title: channelTitle(ch),
          link: fillTemplate(link, { channel_id: String(ch.id), user_id: String(ch.ownerId), username: ch.owner?.username ?? "" }),
          guid: `${view.origin}/v1/channels/${ch.id}`,
          pubDate: ch.createdAt,
          description: xml(chatSettings(ch).description ?? ""),
          ...(ch.owner ? { creator: ch.owner.username } : {}),
        })),
      );
    },
  );
