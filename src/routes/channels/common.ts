import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Reservation } from "../../events/outbox";
import { publish } from "../../events/publish";
import { now } from "../../http/time";
import { ApiError } from "../../http/errors";
import { exampleChannel } from "../../http/examples";
import { checkIdCount, flagValue, queryFlag, userParams } from "../../http/params";
import { idString } from "../../http/route";
import type { AppEnv } from "../../http/types";
import type { ChannelExtras, ChannelFilters, ChannelRead } from "../../stores/channel-lists";
import type { ChannelRecord } from "../../stores/channels";
import type { UserRecord } from "../../stores/users";
import { renderChannel } from "../../views/channel";
import { eventContext, viewContext } from "../../views/context";
import { renderUser } from "../../views/user";
import { csv, includeRaw } from "./input";

// What every channel route shares: the schemas, the general channel parameters (the reference's
// "General Channel Parameters") and how channels are rendered with them.

export const ChannelSchema = z.object({ id: z.string(), type: z.string() }).passthrough().openapi("Channel");
export const channelParams = z.object({ channel_id: idString("channel id").openapi({ param: { name: "channel_id", in: "path" }, example: "1" }) });

/** Parameters of every endpoint that returns channels: how each channel is rendered. */
export const channelRenderParams = {
  ...userParams,
  include_channel_raw: queryFlag("1: include `raw` on channels. Default 0"),
  include_message_raw: queryFlag("1: include `raw` on the embedded recent messages. Default 0"),
  include_marker: queryFlag("1: channels carry the caller's `channel:{id}` `marker` (`{name}` alone when unset). Default 1 on lists, 0 on single channels"),
  include_recent_message: queryFlag("1: channels carry `recent_message` (and `recent_deleted_message` when the newest message is deleted). Default 0"),
  include_limited_users: queryFlag("1: each ACL section carries `users`, limited user objects (id, username, name, avatar_image.url, presence). Default 0"),
};

const typesParam = (description: string) => z.string().max(2048).optional().openapi({ description, example: "io.example.core.pm,com.example.chat" });

/** Parameters of lists of channels: which channels the list holds (plus the rendering ones). */
export const channelListParams = {
  ...channelRenderParams,
  include_read: queryFlag("0: only channels with unread messages (by the caller's `channel:{id}` marker). Default 1"),
  include_inactive: queryFlag("1: keep deactivated channels. Default 0"),
  channel_types: typesParam("Comma-separated channel types to include (all when left out)"),
  exclude_channel_types: typesParam("Comma-separated channel types to leave out (ignored when `channel_types` is given)"),
};

export const channelQuery = z.object(channelRenderParams);

type Query = Record<string, string | undefined>;

/** The filtering general channel parameters of a request. */
export function channelFilters(q: Query): ChannelFilters {
  return {
    types: csv(q.channel_types),
    excludeTypes: csv(q.exclude_channel_types),
    unreadOnly: !flagValue(q.include_read, true),
    includeInactive: flagValue(q.include_inactive, false),
  };
}

/** What the reads embed for this request. */
export const channelExtras = (q: Query): ChannelExtras => ({
  recentMessage: flagValue(q.include_recent_message, false),
  limitedUsers: flagValue(q.include_limited_users, false),
});

/**
 * A renderer of the channels of a read, shaped by the request's general channel parameters.
 * `include_marker` defaults to on for lists and off for single channels (the reference's defaults).
 */
export function channelRenderer(c: Context<AppEnv>, read: Pick<ChannelRead, "messages" | "users">, list: boolean) {
  const q = c.req.query();
  const view = viewContext(c);
  const want = channelExtras(q);
  const opts = {
    raw: includeRaw(q, "channel"),
    marker: flagValue(q.include_marker, list),
    ...(want.recentMessage ? { recent: { messages: read.messages, raw: includeRaw(q, "message") } } : {}),
    ...(want.limitedUsers ? { limitedUsers: read.users } : {}),
  };
  return (ch: ChannelRecord) => renderChannel(ch, view, opts);
}

/** A channel rendered for the response with only the rendering parameters that need no extra read. */
export const renderPlain = (c: Context<AppEnv>, ch: ChannelRecord) =>
  renderChannel(ch, viewContext(c), { raw: includeRaw(c.req.query(), "channel"), marker: flagValue(c.req.query("include_marker"), false) });

/** Events are rendered for no particular viewer (decisions §8). */
export const eventView = (c: Context<AppEnv>) => eventContext(c);

/**
 * The outbox reservations (src/events/outbox.ts) of a `channel` event and of a `channel_subscription`
 * event, for the write's batch; the relay renders them from these (src/events/outbox-render.ts).
 * `channelId` is left out when the batch creates the channel (the store fills the id in).
 */
export const channelReservation = (c: Context<AppEnv>, actorId: number, channelId?: number): Reservation => ({
  type: "channel",
  ref: {
    ...(channelId !== undefined ? { id: channelId } : {}),
    origin: eventView(c).origin,
    route: { actorId, ...(channelId !== undefined ? { channelId } : {}) },
  },
  at: now(c),
});

export const subscriptionReservation = (c: Context<AppEnv>, userId: number, subscribed: boolean, channelId?: number): Reservation => ({
  type: "channel_subscription",
  ref: {
    ...(channelId !== undefined ? { id: channelId } : {}),
    origin: eventView(c).origin,
    ...(subscribed ? {} : { isDeleted: true }),
    route: { actorId: userId, ...(channelId !== undefined ? { channelId } : {}), userIds: [userId] },
  },
  at: now(c),
});

export function publishSubscription(c: Context<AppEnv>, user: UserRecord, ch: ChannelRecord, subscribed: boolean, seq?: number) {
  const view = eventView(c);
  publish(c, {
    seq,
    type: "channel_subscription",
    data: { user: renderUser(user, view), channel: renderChannel(ch, view, { raw: true }) },
    ...(subscribed ? {} : { isDeleted: true }),
    route: { actorId: user.id, channelId: ch.id, userIds: [user.id] },
  });
}

/** Publishes a channel's new state (create, update, deactivate, owner change). */
export function publishChannel(c: Context<AppEnv>, actorId: number, ch: ChannelRecord, seq?: number) {
  publish(c, { seq, type: "channel", data: renderChannel(ch, eventView(c), { raw: true }), route: { actorId, channelId: ch.id } });
}

/** Comma-separated integer ids, at most `max`, deduplicated in order; else a 400 naming the parameter. */
export function idList(name: string, v: string | undefined, max = 200): number[] {
  const parts = csv(v);
  checkIdCount(name, parts.length);
  if (!parts.length || parts.some((s) => !/^\d{1,18}$/.test(s))) throw ApiError.badRequest(`'${name}' must be comma-separated integer ids`);
  return [...new Set(parts.map(Number))].slice(0, max);
}

export const channelListExample = (more: Record<string, unknown> = {}) => ({ more: false, max_id: "1", min_id: "1", ...more });
export { exampleChannel };
