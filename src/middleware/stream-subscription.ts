import type { MiddlewareHandler } from "hono";
import { MORE_LIMITS } from "../config";
import { userHubFor } from "../events/hubs";
import { addMeta } from "../http/envelope";
import { ApiError } from "../http/errors";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import { flagsOf, subscriptionParamsOf } from "../events/stream-params";
import type { SubscriptionTarget } from "../objects/user-connections";
import type { StreamEndpoint } from "../stores/stream-subscriptions";

/**
 * The subscribable endpoints of the reference (how-to/user-streams.md, GET only) and what each
 * subscription listens to; `id` says whether the path's number is a channel or a post.
 * `/users/me/channels/subscribed` is `/channels` (the caller's subscribed channels) by its newer name.
 */
const SUBSCRIBABLE: { path: RegExp; endpoint: StreamEndpoint; id?: "channel" | "post" }[] = [
  { path: /^\/v1\/posts\/streams\/me\/?$/, endpoint: "posts_me" },
  { path: /^\/v1\/posts\/streams\/unified\/?$/, endpoint: "posts_unified" },
  { path: /^\/v1\/users\/me\/mentions\/?$/, endpoint: "mentions" },
  { path: /^\/v1\/users\/me\/posts\/?$/, endpoint: "user_posts" },
  { path: /^\/v1\/posts\/(\d{1,18})\/thread\/?$/, endpoint: "post_thread", id: "post" },
  { path: /^\/v1\/users\/me\/following\/?$/, endpoint: "following" },
  { path: /^\/v1\/users\/me\/followers\/?$/, endpoint: "followers" },
  { path: /^\/v1\/channels\/(\d{1,18})\/messages\/?$/, endpoint: "channel_messages", id: "channel" },
  { path: /^\/v1\/channels\/?$/, endpoint: "channels" },
  { path: /^\/v1\/users\/me\/channels\/subscribed\/?$/, endpoint: "channels" },
  { path: /^\/v1\/channels\/(\d{1,18})\/subscribers\/?$/, endpoint: "channel_subscribers", id: "channel" },
  { path: /^\/v1\/channels\/(\d{1,18})\/presence\/?$/, endpoint: "channel_presence", id: "channel" },
  { path: /^\/v1\/token\/?$/, endpoint: "token" },
  { path: /^\/v1\/users\/me\/files\/?$/, endpoint: "files" },
  { path: /^\/v1\/presence\/?$/, endpoint: "presence" },
];

/** The subscription a GET of `path` with `query` asks for, or null when the path is not subscribable. */
function subscribable(path: string, query: Record<string, string>): SubscriptionTarget | null {
  for (const s of SUBSCRIBABLE) {
    const m = s.path.exec(path);
    if (!m) continue;
    const params = subscriptionParamsOf(query);
    return {
      endpoint: s.endpoint,
      channelId: s.id === "channel" ? Number(m[1]) : null,
      targetId: s.id === "post" ? Number(m[1]) : null,
      flags: flagsOf(s.endpoint, params),
      params,
    };
  }
  return null;
}

const UNKNOWN_CONNECTION = "'connection_id' names no open user stream of this user";

/**
 * User stream subscriptions (decisions §8): a GET of a subscribable endpoint with
 * `?connection_id=` subscribes that connection of the caller's user stream to the endpoint and
 * adds `meta.subscription_id` to the normal response. The subscription is made before the
 * handler runs, so no event between the page read and the subscription is lost, and undone if
 * the handler fails (its own access rules and validation decide, as without `connection_id`);
 * the error then carries no `subscription_id`.
 * Its subscription parameters (SUBSCRIPTION_PARAMS) are kept with it: the same endpoint with
 * the same parameters on one connection gives the same subscription, other parameters another; at most
 * MORE_LIMITS.subscriptionsPerConnection per connection (400).
 */
export const streamSubscription: MiddlewareHandler<AppEnv> = async (c, next) => {
  const connectionId = c.req.query("connection_id");
  const target = c.req.method === "GET" && connectionId !== undefined ? subscribable(c.req.path, c.req.query()) : null;
  const auth = c.var.auth;
  // Without a token the route itself answers (401 where it needs one).
  if (!target || !auth) return next();
  if (!auth.user) throw ApiError.forbidden("'connection_id' subscribes a user stream: it needs a user token");
  if (!/^[0-9a-f]{32}$/.test(connectionId!)) throw ApiError.badRequest(UNKNOWN_CONNECTION);

  const hub = userHubFor(c.env, auth.user.id);
  const result = await hub.subscribe(auth.user.id, connectionId!, target, now(c));
  if ("error" in result) {
    throw ApiError.badRequest(
      result.error === "full" ? `'connection_id' already has ${MORE_LIMITS.subscriptionsPerConnection} subscriptions` : UNKNOWN_CONNECTION,
    );
  }
  addMeta(c, { subscription_id: result.subscriptionId });
  await next();
  if (!c.error && c.res.status < 300) return;
  // Refused: an error must not look like a subscription (the error envelope carries extra meta).
  c.res = await withoutSubscriptionId(c.res);
  if (result.created) {
    await hub
      .unsubscribe(auth.user!.id, connectionId!, result.subscriptionId)
      .catch((e) => console.error(JSON.stringify({ error: "undoing a subscription failed", detail: String(e) })));
  }
};

/** The same error response, minus `meta.subscription_id` (error bodies are small envelopes). */
async function withoutSubscriptionId(res: Response): Promise<Response> {
  const body = (await res
    .clone()
    .json()
    .catch(() => null)) as { meta?: Record<string, unknown> } | null;
  if (!body?.meta || !("subscription_id" in body.meta)) return res;
  delete body.meta.subscription_id;
  return new Response(JSON.stringify(body), res);
}
