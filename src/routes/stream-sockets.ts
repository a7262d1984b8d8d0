import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { APP_TOKEN, currentUser, userToken } from "../auth/access";
import { appHubFor, userHubFor } from "../events/hubs";
import { ApiError } from "../http/errors";
import { createRouter, defineRoute, errors } from "../http/route";
import type { AppEnv } from "../http/types";
import type { AppStreamConnect } from "../objects/app-stream-hub";
import type { UserStreamConnect } from "../objects/user-stream-hub";
import { getAppStream } from "../stores/app-streams";
import { viewContext } from "../views/context";
import { streamUrl } from "../views/stream";

const upgraded = { 101: { description: "Switching Protocols: the WebSocket. The first frame carries `meta.connection_id`." } };

/** A plain GET is refused before any work: these endpoints only speak WebSocket. */
function requireUpgrade(c: Context<AppEnv>): void {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw ApiError.badRequest("this endpoint is a WebSocket: connect with 'Upgrade: websocket'");
  }
}

/** The request the Worker forwards to a hub: the upgrade plus what it checked, in a header. */
const hubRequest = (header: string, value: unknown) =>
  new Request("https://stream-hub/connect", { headers: { Upgrade: "websocket", [header]: JSON.stringify(value) } });

/**
 * The stream sockets (decisions §8). Send the text `ping` at least every 60 s (it is answered
 * `pong`; any other message counts as well) or the socket is closed with code 4000.
 */
export const streamSocketRoutes = createRouter()
  .openapi(
    defineRoute(APP_TOKEN, {
      method: "get",
      path: "/app",
      tags: ["App streams"],
      summary: "App stream socket (WebSocket upgrade)",
      description:
        "`GET {stream_url}/v1/app?access_token=<app token>&key=<stream key>`. First frame: " +
        '`{"meta":{"connection_id","stream":{key, endpoint, object_types}}}`; then events `{"meta":{type, id, timestamp, is_deleted?}, "data"}`. ' +
        "At most 2 connections per stream key (a third: 429).",
      request: { query: z.object({ key: z.string({ error: "is required" }).min(1, { message: "is required" }), access_token: z.string().optional() }) },
      responses: { ...upgraded, ...errors(400, 401, 403, 404, 429) },
    }),
    async (c) => {
      requireUpgrade(c);
      const { key } = c.req.valid("query");
      const appId = c.var.auth!.app.id;
      const stream = await getAppStream(c.var.db, appId, key);
      if (!stream) throw ApiError.notFound(`no app stream with key '${key}'`);
      const connect: AppStreamConnect = {
        appId,
        key,
        objectTypes: stream.objectTypes,
        endpoint: `${streamUrl(viewContext(c).origin)}/v1/app`,
      };
      return (await appHubFor(c.env, appId, key).fetch(hubRequest("X-Stream", connect))) as never;
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/user",
      tags: ["User streams"],
      summary: "User stream socket (WebSocket upgrade)",
      description:
        "`GET {stream_url}/v1/user?access_token=<user token>`. First frame: `{\"meta\":{\"connection_id\"}}`. Subscribe by calling a " +
        "subscribable endpoint with `?connection_id=`; events arrive as `{\"meta\":{id, timestamp, type, subscription_ids, is_deleted?}, \"data\"}`.",
      request: { query: z.object({ access_token: z.string().optional() }) },
      responses: { ...upgraded, ...errors(400, 401, 403, 429) },
    }),
    async (c) => {
      requireUpgrade(c);
      const auth = c.var.auth!;
      const connect: UserStreamConnect = { userId: currentUser(c).id, appId: auth.app.id, tokenId: auth.token.id };
      return (await userHubFor(c.env, connect.userId).fetch(hubRequest("X-Connection", connect))) as never;
    },
  );
