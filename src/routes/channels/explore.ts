import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { finishPage, pageQuery, parsePage } from "../../http/pagination";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { CHANNEL_EXPLORE_STREAMS, exploreChannels, type ChannelExploreSlug } from "../../stores/channel-explore";
import { viewContext } from "../../views/context";
import { ChannelSchema, channelExtras, channelFilters, channelListExample, channelListParams, channelRenderer, exampleChannel } from "./common";

// The channel explore streams (the reference's channels/explore): their list, and each one's channels.

const ExploreStreamSchema = z.object({ slug: z.string(), title: z.string(), description: z.string(), url: z.string() }).openapi("ChannelExploreStream");

const slugParam = z.object({
  slug: z.string().openapi({
    param: { name: "slug", in: "path" },
    description: `One of ${CHANNEL_EXPLORE_STREAMS.map((s) => s.slug).join(", ")}`,
    example: "conversations",
  }),
});

export const channelExploreRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/streams/explore",
      tags: ["Channels"],
      summary: "The channel explore streams",
      description: "No token needed. Each stream's `url` is its list of channels. Emits nothing.",
      responses: {
        200: Envelope(z.array(ExploreStreamSchema), "Channel explore streams", [
          {
            slug: "conversations",
            title: "Conversations",
            description: CHANNEL_EXPLORE_STREAMS[0].description,
            url: "https://api.example.social/v1/channels/streams/explore/conversations",
          },
        ]),
      },
    }),
    (c) => {
      const origin = viewContext(c).origin;
      const streams = CHANNEL_EXPLORE_STREAMS.map((s) => ({
        slug: s.slug,
        title: s.title,
        description: s.description,
        url: `${origin}/v1/channels/streams/explore/${s.slug}`,
      }));
      return ok(c, streams);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/streams/explore/{slug}",
      tags: ["Channels"],
      summary: "The channels of an explore stream",
      description:
        "No token needed. Public channels only (never private-message channels): " +
        CHANNEL_EXPLORE_STREAMS.map((s) => `\`${s.slug}\`: ${s.description}`).join(" ") +
        " Paginated (`count`, `before_id`, `since_id`); takes the general channel parameters. An unknown slug is a 404. Emits nothing.",
      request: { params: slugParam, query: z.object({ ...pageQuery, ...channelListParams }) },
      responses: {
        200: Envelope(z.array(ChannelSchema), "Channel objects", [{ ...exampleChannel, pagination_id: "1" }], channelListExample()),
        ...errors(400, 404),
      },
    }),
    async (c) => {
      const slug = c.req.valid("param").slug;
      if (!CHANNEL_EXPLORE_STREAMS.some((s) => s.slug === slug)) throw ApiError.notFound(`no explore stream '${slug.slice(0, 64)}'`);
      const q = c.req.valid("query");
      const page = parsePage(q);
      const read = await exploreChannels(c.var.db, slug as ChannelExploreSlug, viewContext(c).viewerId, page, channelFilters(q), channelExtras(q));
      const { items, meta } = finishPage(read.channels, page, (r) => r.paginationId!);
      return ok(c, items.map(channelRenderer(c, read, true)), meta);
    },
  );
