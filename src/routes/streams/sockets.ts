import { MORE_LIMITS } from "../../config";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { APP_TOKEN, currentUser, userToken } from "../../auth/access";
import { connectAppStream } from "../../events/app-ring";
import { userHubFor } from "../../events/hubs";
import { wakeRelay } from "../../events/publish";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, errors } from "../../http/route";
import type { AppEnv } from "../../http/types";
import type { AppStreamConnect } from "../../objects/app-stream-hub";
import type { UserStreamConnect } from "../../objects/user-stream-hub";
import { CONNECTION_PARAMS, connectionParamsOf } from "../../events/stream-params";
import { getAppStream } from "../../stores/app-streams";
import { viewContext } from "../../views/context";
import { streamUrl } from "../../views/stream";

const upgraded = { 101: { description: "Switching Protocols: the WebSocket. The first frame carries `meta.connection_id`." } };

const Since = z
  .string()
  .optional()
  .openapi({
    description:
      "Resume: the `meta.id` of the last event processed. Every later event still in the replay window (at least 10 minutes and " +
      "10,000 events) follows in order, then live ones. A cursor outside the window or never issued here: the first frame has " +
      "`meta.replay_gap` (`expired` or `unknown`) and the stream goes on live.",
  });

const CONNECTION_PARAM_DOCS: Record<(typeof CONNECTION_PARAMS)[number], string> = {
  include_raw: "1: channel, message, file and post objects in events carry `raw`, and so does the user of a `user` event. Default 0",
  include_post_raw: "1: posts in events carry `raw`. Default 0",
  include_user_raw: "1: the user of a `user` event (a profile change) carries `raw`; authors embedded in other objects have none. Default 0",
  include_file_raw: "1: files in events carry `raw`. Default 0",
  include_channel_raw: "1: channels in events carry `raw`. Default 0",
  include_message_raw: "1: messages in events carry `raw`. Default 0",
  include_bookmarked_by: "Accepted and kept with the connection; events are rendered for no viewer, without `bookmarked_by`",
  include_reposted_by: "Accepted and kept with the connection; events are rendered for no viewer, without `reposted_by`",
  include_marker: "Accepted and kept with the connection; markers arrive as `marker` events",
  include_recent_message: "Accepted and kept with the connection; channel events carry no `recent_message`",
  include_html: "0: leave `html` out of every `content` in events. Default 1",
};
const connectionQuery = Object.fromEntries(
  CONNECTION_PARAMS.map((name) => [
    name,
    z.enum(["0", "1", "true", "false"], { message: "must be 0 or 1" }).optional().openapi({ description: CONNECTION_PARAM_DOCS[name] }),
  ]),
);

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
        "`GET {stream_url}/v1/app?access_token=<app token>&key=<stream key>[&since=<cursor>]`. First frame: " +
        '`{"meta":{"connection_id","stream":{key, endpoint, object_types},"cursor","replay_gap"?}}`; then events ' +
        '`{"meta":{type, id, timestamp, is_deleted?}, "data"}` where `id` is the event\'s global sequence (a decimal string; it grows, with gaps, in one order for every key and hub). ' +
        "Close code 4004: the key moved to another hub; reconnect with `since`. " +
        "Connection parameters (`include_html`, `include_raw`, `include_<object>_raw`, …) shape every frame of the socket, replayed ones included. " +
        "At most 2 connections per stream key (a third: 429).",
      request: {
        query: z.object({
          key: z
            .string({ error: "is required" })
            .min(1, { message: "is required" })
            .openapi({ description: "The key of one of the app's streams (POST /v1/streams)" }),
          since: Since,
          access_token: z
            .string()
            .optional()
            .openapi({ description: "The app token (browsers cannot set headers on a WebSocket); or send it as `Authorization: Bearer`" }),
          ...connectionQuery,
        }),
      },
      responses: { ...upgraded, ...errors(400, 401, 403, 404, 429) },
    }),
    async (c) => {
      requireUpgrade(c);
      const { key, since } = c.req.valid("query");
      const appId = c.var.auth!.app.id;
      const stream = await getAppStream(c.var.db, appId, key);
      if (!stream) throw ApiError.notFound(`no app stream with key '${key}'`);
      const connect: Omit<AppStreamConnect, "seat"> = {
        appId,
        key,
        objectTypes: stream.objectTypes,
        endpoint: `${streamUrl(viewContext(c).origin)}/v1/app`,
        since,
        params: connectionParamsOf(c.req.query()),
      };
      if (since !== undefined) wakeRelay(c.env, c.executionCtx);
      return (await connectAppStream(c.env, appId, key, (seat) => hubRequest("X-Stream", { ...connect, seat }))) as never;
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/user",
      tags: ["User streams"],
      summary: "User stream socket (WebSocket upgrade)",
      description:
        '`GET {stream_url}/v1/user?access_token=<user token>`. First frame: `{"meta":{"connection_id","cursor"}}`. Subscribe by calling a ' +
        'subscribable endpoint with `?connection_id=`; events arrive as `{"meta":{id, timestamp, type, subscription_ids, is_deleted?}, "data"}`. ' +
        "Resume a dropped connection within the replay window (10 minutes) with `connection_id=<its id>&since=<cursor>` and the same token: " +
        "same id, same subscriptions, missed events replayed. Later, or for a deleted connection: 400 saying why. " +
        "Connection parameters (`include_html`, `include_raw`, `include_<object>_raw`, …) shape every frame of the connection; a resume keeps those of the first socket. " +
        `At most ${MORE_LIMITS.userStreamSocketsPerToken} open sockets per access token (another: 429).`,
      request: {
        query: z.object({
          connection_id: z.string().optional().openapi({ description: "A dropped connection of this user to resume" }),
          since: Since,
          access_token: z
            .string()
            .optional()
            .openapi({ description: "The user token (browsers cannot set headers on a WebSocket); or send it as `Authorization: Bearer`" }),
          ...connectionQuery,
        }),
      },
      responses: { ...upgraded, ...errors(400, 401, 403, 429) },
    }),
    async (c) => {
      requireUpgrade(c);
      const auth = c.var.auth!;
      const { connection_id: connectionId, since } = c.req.valid("query");
      if (since !== undefined && connectionId === undefined) throw ApiError.badRequest("'since' resumes a connection: it needs 'connection_id'");
      if (connectionId !== undefined && !/^[0-9a-f]{32}$/.test(connectionId)) throw ApiError.badRequest("'connection_id' names no user stream of this user");
      const connect: UserStreamConnect = {
        userId: currentUser(c).id,
        appId: auth.app.id,
        tokenId: auth.token.id,
        ...(connectionId !== undefined ? { resume: { connectionId, since } } : {}),
        params: connectionParamsOf(c.req.query()),
      };
      if (since !== undefined) wakeRelay(c.env, c.executionCtx);
      return (await userHubFor(c.env, connect.userId).fetch(hubRequest("X-Connection", connect))) as never;
    },
  );
