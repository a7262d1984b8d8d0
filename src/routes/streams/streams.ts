import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { APP_TOKEN } from "../../auth/access";
import { MORE_LIMITS } from "../../config";
import { activeAppRing } from "../../events/app-ring";
import { appRingHubs, appStreamRegistryFor } from "../../events/hubs";
import { OBJECT_TYPES } from "../../events/publish";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { now } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { deleteAllAppStreams, deleteAppStream, getAppStream, listAppStreams, updateAppStreamTypes, type AppStreamRecord } from "../../stores/app-streams";
import { viewContext } from "../../views/context";
import { renderAppStream } from "../../views/stream";

const required = (rule: string) => (iss: { input: unknown }) => (iss.input === undefined ? "is required" : rule);

/** `object_types`: a non-empty list from api.md's allowed types; duplicates are dropped. */
const ObjectTypes = z
  .array(z.string(), { error: required("must be an array of object types") })
  .superRefine((types, ctx) => {
    const unknown = types.find((t) => !(OBJECT_TYPES as readonly string[]).includes(t));
    if (unknown !== undefined) ctx.addIssue({ code: "custom", message: `has unknown type '${unknown}'` });
    else if (!types.length) ctx.addIssue({ code: "custom", message: "must list at least one object type" });
  })
  .transform((types) => [...new Set(types)])
  .openapi({ example: ["post", "follow"], description: `Any of: ${OBJECT_TYPES.join(", ")}` });

const StreamType = z.literal("long_poll", { error: required("must be 'long_poll'") });

const keyRule = new RegExp(`^[A-Za-z0-9_]{1,${MORE_LIMITS.streamKeyMaxLength}}$`);
const StreamKey = z
  .string({ error: "must be a string" })
  .regex(keyRule, { message: `must be 1 to ${MORE_LIMITS.streamKeyMaxLength} letters, digits or underscores` });

const CreateBody = z.object({ type: StreamType, object_types: ObjectTypes, key: StreamKey.optional() }).openapi("AppStreamCreate");
const UpdateBody = z.object({ object_types: ObjectTypes, type: StreamType.optional(), key: z.string().optional() }).openapi("AppStreamUpdate");

const AppStreamSchema = z
  .object({
    key: z.string(),
    object_types: z.array(z.string()),
    endpoint: z.string(),
    type: z.literal("long_poll"),
    is_deleted: z.literal(true).optional(),
  })
  .openapi("AppStream");

const KeyParam = z.object({
  stream_key: z.string().openapi({ description: "The stream's key, as given or assigned at creation", example: "main" }),
});

const example = { key: "main", object_types: ["post", "follow"], endpoint: "wss://api.example.com/v1/app", type: "long_poll" };
const deletedExample = { ...example, is_deleted: true };
const EMITS = "Events: none (app streams carry other objects' events; see GET /v1/app).";
const responses = errors(401, 403, 429);
const jsonBody = <T extends z.ZodTypeAny>(schema: T) => ({ body: { content: { "application/json": { schema } }, required: true } });

const appOf = (c: Context<AppEnv>) => c.var.auth!.app.id;
const render = (c: Context<AppEnv>, s: Omit<AppStreamRecord, "position">, deleted = false) => renderAppStream(s, viewContext(c).origin, deleted);

/** Closes the open connections of deleted streams (a failure is logged: the streams are gone either way). */
async function disconnect(c: Context<AppEnv>, appId: number, keys: string[]): Promise<void> {
  try {
    // Every hub: each can replay any key, so each must know the key's old cursors are void.
    const ring = await activeAppRing(c.env, true);
    await Promise.all(appRingHubs(c.env, ring).map(({ hub }) => hub.closeStreams(appId, keys)));
  } catch (e) {
    console.error(JSON.stringify({ error: "closing deleted app streams failed", app_id: appId, detail: String(e) }));
  }
}

async function findStream(c: Context<AppEnv>, key: string): Promise<AppStreamRecord> {
  const stream = keyRule.test(key) ? await getAppStream(c.var.db, appOf(c), key) : undefined;
  if (!stream) throw ApiError.notFound(`no app stream with key '${key}'`);
  return stream;
}

/** App stream management (api.md "App streams", decisions §8): app tokens only. */
export const streamRoutes = createRouter()
  .openapi(
    defineRoute(APP_TOKEN, {
      method: "get",
      path: "/streams",
      tags: ["App streams"],
      summary: "The app's streams",
      description: `Lists the calling app's streams in creation order, with the WebSocket endpoint to connect to. App token only. ${EMITS}`,
      responses: { 200: Envelope(z.array(AppStreamSchema), "App stream objects", [example]), ...responses },
    }),
    async (c) =>
      ok(
        c,
        (await listAppStreams(c.var.db, appOf(c))).map((s) => render(c, s)),
      ),
  )
  .openapi(
    defineRoute(APP_TOKEN, {
      method: "post",
      path: "/streams",
      tags: ["App streams"],
      summary: "Create a stream (at most 5 per app)",
      description: `Creates a stream of the given object types for the calling app (app token only; at most ${MORE_LIMITS.appStreamsPerApp} per app). \`key\` is assigned (a number) when left out. Connect with \`GET {endpoint}?access_token=<app token>&key=<key>\`. ${EMITS}`,
      request: jsonBody(CreateBody),
      responses: { 200: Envelope(AppStreamSchema, "The created App stream object", example), ...errors(400, 401, 403, 415, 429) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const appId = appOf(c);
      const result = await appStreamRegistryFor(c.env, appId).create(appId, body.key, body.object_types, now(c));
      if (!result.ok) {
        throw ApiError.badRequest(
          result.error === "full"
            ? `an app can have at most ${MORE_LIMITS.appStreamsPerApp} streams; delete one first`
            : `'key' '${body.key}' is already used by a stream of this app`,
        );
      }
      return ok(c, render(c, result.stream));
    },
  )
  .openapi(
    defineRoute(APP_TOKEN, {
      method: "delete",
      path: "/streams",
      tags: ["App streams"],
      summary: "Delete all the app's streams",
      description: `Deletes every stream of the calling app and closes their connections; returns them with \`is_deleted\`. App token only. ${EMITS}`,
      responses: { 200: Envelope(z.array(AppStreamSchema), "The deleted App stream objects, with is_deleted", [deletedExample]), ...responses },
    }),
    async (c) => {
      const appId = appOf(c);
      const deleted = await deleteAllAppStreams(c.var.db, appId);
      await disconnect(
        c,
        appId,
        deleted.map((s) => s.key),
      );
      return ok(
        c,
        deleted.map((s) => render(c, s, true)),
      );
    },
  )
  .openapi(
    defineRoute(APP_TOKEN, {
      method: "get",
      path: "/streams/{stream_key}",
      tags: ["App streams"],
      summary: "One stream",
      description: `One stream of the calling app, by key. App token only; 404 for a key the app does not have. ${EMITS}`,
      request: { params: KeyParam },
      responses: { 200: Envelope(AppStreamSchema, "App stream object", example), ...errors(401, 403, 404, 429) },
    }),
    async (c) => ok(c, render(c, await findStream(c, c.req.valid("param").stream_key))),
  )
  .openapi(
    defineRoute(APP_TOKEN, {
      method: "put",
      path: "/streams/{stream_key}",
      tags: ["App streams"],
      summary: "Change a stream's object types",
      description: `Changes a stream's object types (only \`object_types\` can change). A connected stream keeps its old types until it reconnects. App token only. ${EMITS}`,
      request: { params: KeyParam, ...jsonBody(UpdateBody) },
      responses: { 200: Envelope(AppStreamSchema, "The updated App stream object", example), ...errors(400, 401, 403, 404, 415, 429) },
    }),
    async (c) => {
      const { stream_key: key } = c.req.valid("param");
      const body = c.req.valid("json");
      const stream = await findStream(c, key);
      if (body.key !== undefined && body.key !== stream.key) throw ApiError.badRequest("'key' cannot be changed; only 'object_types' can");
      const updated = await updateAppStreamTypes(c.var.db, stream.appId, stream.key, body.object_types);
      if (!updated) throw ApiError.notFound(`no app stream with key '${key}'`);
      return ok(c, render(c, updated));
    },
  )
  .openapi(
    defineRoute(APP_TOKEN, {
      method: "delete",
      path: "/streams/{stream_key}",
      tags: ["App streams"],
      summary: "Delete a stream (its connections are closed)",
      description: `Deletes one stream of the calling app and closes its connections; returns it with \`is_deleted\`. App token only. ${EMITS}`,
      request: { params: KeyParam },
      responses: { 200: Envelope(AppStreamSchema, "The deleted App stream object, with is_deleted", deletedExample), ...errors(401, 403, 404, 429) },
    }),
    async (c) => {
      const { stream_key: key } = c.req.valid("param");
      const deleted = keyRule.test(key) ? await deleteAppStream(c.var.db, appOf(c), key) : undefined;
      if (!deleted) throw ApiError.notFound(`no app stream with key '${key}'`);
      await disconnect(c, deleted.appId, [deleted.key]);
      return ok(c, render(c, deleted, true));
    },
  );
