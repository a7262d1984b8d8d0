import { z } from "@hono/zod-openapi";
import { PUBLIC, currentUser, userToken } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { exampleUser } from "../../http/examples";
import { finishPage, pageQuery, parsePage } from "../../http/pagination";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { now } from "../../http/time";
import { channelSubscribers, listMuted, listSubscribed } from "../../stores/channel-lists";
import { mute, subscribe, unmute, unsubscribe } from "../../stores/channels";
import { viewContext } from "../../views/context";
import { renderUser } from "../../views/user";
import {
  ChannelSchema,
  channelExtras,
  channelFilters,
  channelListExample,
  channelListParams,
  channelParams,
  channelQuery,
  channelRenderer,
  exampleChannel,
  publishSubscription,
  subscriptionReservation,
  renderPlain,
} from "./common";
import { userParams } from "../../http/params";
import { readableChannel } from "./channels";
import { requireChannelScope } from "./input";

// Subscribing and muting (the reference's "Channel Subscribing" and "Channel Muting"): the
// caller's inbox, their muted channels and a channel's subscribers.

const listQuery = z.object({ ...pageQuery, ...channelListParams });

export const channelSubscriptionRoutes = createRouter()
  .openapi(
    defineRoute(userToken("messages"), {
      method: "get",
      path: "/users/me/channels/subscribed",
      tags: ["Channels"],
      summary: "The caller's inbox: subscribed channels, most recent message first",
      description:
        "Channels the caller subscribes to, most recently active first: by the time of their newest live message (of their creation " +
        "when they have none); `pagination_id` is an opaque integer key of that order. `meta.unread_counts` counts unread subscribed channels of the " +
        "private-message and chat types. Takes the general channel parameters (`include_marker` defaults to 1). Needs `messages`; emits nothing.",
      request: { query: listQuery },
      responses: {
        200: Envelope(
          z.array(ChannelSchema),
          "Channel objects",
          [exampleChannel],
          channelListExample({ unread_counts: { "io.example.core.pm": 0, "io.example.core.chat": 0 } }),
        ),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const user = currentUser(c);
      const q = c.req.valid("query");
      const page = parsePage(q);
      const { read, unreadCounts } = await listSubscribed(c.var.db, user.id, page, channelFilters(q), channelExtras(q));
      const { items, meta } = finishPage(read.channels, page, (r) => r.paginationId!);
      return ok(c, items.map(channelRenderer(c, read, true)), { ...meta, unread_counts: unreadCounts });
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/{channel_id}/subscribers",
      tags: ["Channels"],
      summary: "Users subscribed to a channel, most recently subscribed first",
      description:
        "Paginated by subscription (`pagination_id`). Anyone who may read the channel (public channels need no token); others get 404. " +
        "Takes the general user parameters; emits nothing.",
      request: { params: channelParams, query: z.object({ ...pageQuery, ...userParams }) },
      responses: {
        200: Envelope(z.array(z.object({ id: z.string() }).passthrough()), "User objects", [{ ...exampleUser, pagination_id: "1" }], channelListExample()),
        ...errors(400, 401, 404),
      },
    }),
    async (c) => {
      const page = parsePage(c.req.valid("query"));
      const viewerId = c.var.auth?.user?.id ?? null;
      const { channel, users } = await channelSubscribers(c.var.db, Number(c.req.valid("param").channel_id), viewerId, page);
      if (!channel) throw ApiError.notFound("no such channel");
      const { items, meta } = finishPage(users, page, (u) => u.pid);
      const view = viewContext(c);
      return ok(
        c,
        items.map((u) => ({ ...renderUser(u, view), pagination_id: String(u.pid) })),
        meta,
      );
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "put",
      path: "/channels/{channel_id}/subscribe",
      tags: ["Channels"],
      summary: "Subscribe to a channel (lifts the caller's mute of it)",
      description:
        "Subscribes the caller to an active channel they may read (a deactivated one is a 400); subscribing lifts their own mute of it. Repeating it changes nothing. Needs a user token with `messages` (or the type's extended scope). Emits a `channel_subscription` event.",
      request: { params: channelParams, query: channelQuery },
      responses: { 200: Envelope(ChannelSchema, "The Channel", exampleChannel), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const ch = await readableChannel(c, Number(c.req.valid("param").channel_id));
      requireChannelScope(c, ch);
      if (!ch.isActive) throw ApiError.badRequest("this channel was deactivated: it cannot be subscribed to");
      // The event is reserved in the batch when the read above saw the user not subscribed (see `subscribe`).
      const res = await subscribe(c.var.db, ch.id, user.id, now(c), ch.youSubscribed ? [] : [subscriptionReservation(c, user.id, true, ch.id)]);
      if (res.changed || res.seqs[0] !== undefined) publishSubscription(c, user, res.channel, true, res.seqs[0]);
      return ok(c, renderPlain(c, res.channel));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "delete",
      path: "/channels/{channel_id}/subscribe",
      tags: ["Channels"],
      summary: "Unsubscribe from a channel (deletes the caller's marker of it)",
      description:
        "Unsubscribes the caller and deletes their `channel:{id}` stream marker; later messages do not subscribe them again unless the channel is a private-message channel they have not muted. Needs a user token with `messages` (or the type's extended scope). Emits a `channel_subscription` event.",
      request: { params: channelParams, query: channelQuery },
      responses: { 200: Envelope(ChannelSchema, "The Channel", exampleChannel), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const ch = await readableChannel(c, Number(c.req.valid("param").channel_id));
      requireChannelScope(c, ch);
      const res = await unsubscribe(c.var.db, ch.id, user.id, ch.youSubscribed ? [subscriptionReservation(c, user.id, false, ch.id)] : []);
      if (res.changed || res.seqs[0] !== undefined) publishSubscription(c, user, res.channel, false, res.seqs[0]);
      return ok(c, renderPlain(c, res.channel));
    },
  )
  .openapi(
    defineRoute(userToken("messages"), {
      method: "put",
      path: "/channels/{channel_id}/mute",
      tags: ["Channel muting"],
      summary: "Mute a channel: unsubscribes the caller; others can no longer auto-subscribe them",
      description:
        "Mutes a channel: the caller is unsubscribed and no longer auto-subscribed (for example by new private messages). Needs a user token with `messages`. Emits a `channel_subscription` event when it unsubscribes.",
      request: { params: channelParams, query: channelQuery },
      responses: {
        200: Envelope(ChannelSchema, "The muted Channel", { ...exampleChannel, you_muted: true, you_subscribed: false }),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const user = currentUser(c);
      const res = await mute(c.var.db, Number(c.req.valid("param").channel_id), user.id, now(c));
      if (!res) throw ApiError.notFound("no such channel");
      if (res.unsubscribed) publishSubscription(c, user, res.channel, false);
      return ok(c, renderPlain(c, res.channel));
    },
  )
  .openapi(
    defineRoute(userToken("messages"), {
      method: "delete",
      path: "/channels/{channel_id}/mute",
      tags: ["Channel muting"],
      summary: "Unmute a channel (does not resubscribe)",
      description: "Lifts the caller's mute; it does not subscribe them again. Needs a user token with `messages`; emits nothing.",
      request: { params: channelParams, query: channelQuery },
      responses: { 200: Envelope(ChannelSchema, "The unmuted Channel", exampleChannel), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const ch = await unmute(c.var.db, Number(c.req.valid("param").channel_id), user.id);
      if (!ch) throw ApiError.notFound("no such channel");
      return ok(c, renderPlain(c, ch));
    },
  )
  .openapi(
    defineRoute(userToken("messages"), {
      method: "get",
      path: "/users/me/channels/muted",
      tags: ["Channel muting"],
      summary: "Channels the caller muted, most recently muted first",
      description:
        "The channels the caller muted, most recently muted first, paginated; takes the general channel parameters. Needs a user token with `messages`; emits nothing.",
      request: { query: listQuery },
      responses: {
        200: Envelope(z.array(ChannelSchema), "Channel objects", [{ ...exampleChannel, you_muted: true, you_subscribed: false }], channelListExample()),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const user = currentUser(c);
      const q = c.req.valid("query");
      const page = parsePage(q);
      const read = await listMuted(c.var.db, user.id, page, channelFilters(q), channelExtras(q));
      const { items, meta } = finishPage(read.channels, page, (r) => r.paginationId!);
      return ok(c, items.map(channelRenderer(c, read, true)), meta);
    },
  );
