import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { currentUser, userToken } from "../../auth/access";
import { userHubFor } from "../../events/hubs";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, errors } from "../../http/route";
import type { AppEnv } from "../../http/types";

const ConnectionParams = z.object({
  connection_id: z.string().openapi({ description: "The user stream's `connection_id` (its first frame's `meta.connection_id`)" }),
});
const SubscriptionParams = ConnectionParams.extend({
  subscription_id: z.string().openapi({ description: "A subscription of that connection (`meta.subscription_id` of the subscribing GET)" }),
});
const GET_TOO = " GET does the same as DELETE, because the published examples use it.";
const noContent = { 204: { description: "Done, no body" }, ...errors(401, 403, 404, 429) };

/** Closes one of the caller's user stream connections (its subscriptions go with it). */
async function closeConnection(c: Context<AppEnv>, connectionId: string) {
  if (!(await userHubFor(c.env, currentUser(c).id).closeConnection(currentUser(c).id, connectionId))) {
    throw ApiError.notFound("no open user stream with this 'connection_id'");
  }
  return c.body(null, 204) as never;
}

async function unsubscribe(c: Context<AppEnv>, connectionId: string, subscriptionId: string) {
  const result = await userHubFor(c.env, currentUser(c).id).unsubscribe(currentUser(c).id, connectionId, subscriptionId);
  if (result === "no_connection") throw ApiError.notFound("no open user stream with this 'connection_id'");
  if (result === "no_subscription") throw ApiError.notFound("no subscription with this 'subscription_id' on this connection");
  return c.body(null, 204) as never;
}

const connectionRoute = (method: "get" | "delete") =>
  defineRoute(userToken(), {
    method,
    path: "/users/me/streams/{connection_id}",
    tags: ["User streams"],
    summary: "Delete a user stream (closes the connection)",
    description:
      "Closes one of the caller's user stream connections and ends its subscriptions; a closed connection cannot be resumed. User token only; 404 for a connection the caller does not have. Events: none." +
      (method === "get" ? GET_TOO : ""),
    request: { params: ConnectionParams },
    responses: noContent,
  });

const subscriptionRoute = (method: "get" | "delete") =>
  defineRoute(userToken(), {
    method,
    path: "/users/me/streams/{connection_id}/{subscription_id}",
    tags: ["User streams"],
    summary: "Delete a subscription of a user stream",
    description:
      "Ends one subscription of one of the caller's user stream connections; the connection stays open. User token only; 404 for an unknown connection or subscription. Events: none." +
      (method === "get" ? GET_TOO : ""),
    request: { params: SubscriptionParams },
    responses: noContent,
  });

/** User stream deletion (api.md "User streams", decisions §8): 204 for both methods. */
export const userStreamRoutes = createRouter()
  .openapi(connectionRoute("delete"), (c) => closeConnection(c, c.req.valid("param").connection_id))
  .openapi(connectionRoute("get"), (c) => closeConnection(c, c.req.valid("param").connection_id))
  .openapi(subscriptionRoute("delete"), (c) => {
    const p = c.req.valid("param");
    return unsubscribe(c, p.connection_id, p.subscription_id);
  })
  .openapi(subscriptionRoute("get"), (c) => {
    const p = c.req.valid("param");
    return unsubscribe(c, p.connection_id, p.subscription_id);
  });
