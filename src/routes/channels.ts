import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { PUBLIC, currentUser, userToken } from "../auth/access";
import { publish } from "../events/publish";
import { ok } from "../http/envelope";
import { ApiError } from "../http/errors";
import { finishPage, pageQuery, parsePage } from "../http/pagination";
import { createRouter, defineRoute, Envelope, errors, idString } from "../http/route";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import { PM_TYPE } from "../stores/channel-sql";
import {
  ACL_LEVELS,
  channelAccess,
  createChannel,
  getChannel,
  listMuted,
  listSubscribed,
  mute,
  subscribe,
  unmute,
  unsubscribe,
  updateChannel,
  type AclFlags,
  type AclLevel,
  type ChannelChanges,
  type ChannelRecord,
} from "../stores/channels";
import type { UserRecord } from "../stores/users";
import { exampleChannel } from "../http/examples";
import { renderChannel } from "../views/channel";
import { eventContext, viewContext } from "../views/context";
import { renderUser } from "../views/user";
import {
  channelType,
  csv,
  includeRaw,
  jsonBool,
  rawQuery,
  rawSchema,
  requireChannelScope,
  resolveUserLists,
  userRefList,
} from "./channel-input";

const ChannelSchema = z.object({ id: z.string(), type: z.string() }).passthrough().openapi("Channel");
const channelParams = z.object({ channel_id: idString("channel id").openapi({ param: { name: "channel_id", in: "path" }, example: "1" }) });
const channelQuery = z.object({
  ...rawQuery,
  include_channel_raw: z.string().optional().openapi({ description: "1: include `raw` on channels" }),
});

const aclBody = z
  .object({
    full: z.object({ immutable: jsonBool.optional(), user_ids: userRefList.optional() }).optional(),
    write: z.object({ any_user: jsonBool.optional(), immutable: jsonBool.optional(), user_ids: userRefList.optional() }).optional(),
    read: z
      .object({
        any_user: jsonBool.optional(),
        immutable: jsonBool.optional(),
        public: jsonBool.optional(),
        user_ids: userRefList.optional(),
      })
      .optional(),
  })
  .openapi({ description: "ACL (decisions §4); user_ids take integer ids or @usernames; the owner always has full access" });

type AclBody = z.infer<typeof aclBody>;

const json = <T extends z.ZodTypeAny>(schema: T) => ({ content: { "application/json": { schema } }, required: true });

/** Events are rendered for no particular viewer (decisions §8). */
const eventView = (c: Context<AppEnv>) => eventContext(c);

function publishSubscription(c: Context<AppEnv>, user: UserRecord, ch: ChannelRecord, subscribed: boolean) {
  const view = eventView(c);
  publish(c, {
    type: "channel_subscription",
    data: { user: renderUser(user, view), channel: renderChannel(ch, view, { raw: true }) },
    ...(subscribed ? {} : { isDeleted: true }),
    route: { actorId: user.id, channelId: ch.id, userIds: [user.id] },
  });
}

/** A channel the caller may read, else 404 (decisions §1: what you may not see does not exist). */
async function readableChannel(c: Context<AppEnv>, id: number): Promise<ChannelRecord> {
  const viewerId = c.var.auth?.user?.id ?? null;
  const ch = await getChannel(c.var.db, id, viewerId);
  if (!ch || !channelAccess(ch, viewerId).read) throw ApiError.notFound("no such channel");
  return ch;
}

/** ACL flags from a request body (missing ones keep `base`). */
function flagsFrom(acl: AclBody | undefined, base: AclFlags): AclFlags {
  return {
    readPublic: acl?.read?.public ?? base.readPublic,
    readAnyUser: acl?.read?.any_user ?? base.readAnyUser,
    writeAnyUser: acl?.write?.any_user ?? base.writeAnyUser,
    readImmutable: acl?.read?.immutable ?? base.readImmutable,
    writeImmutable: acl?.write?.immutable ?? base.writeImmutable,
    fullImmutable: acl?.full?.immutable ?? base.fullImmutable,
  };
}

const NO_FLAGS: AclFlags = {
  readPublic: false,
  readAnyUser: false,
  writeAnyUser: false,
  readImmutable: false,
  writeImmutable: false,
  fullImmutable: false,
};

/** The user id lists of an ACL body, resolved; the owner (implicitly full) is left out. */
async function aclLists(c: Context<AppEnv>, acl: AclBody | undefined, ownerId: number, viewerId: number) {
  const { ids } = await resolveUserLists(
    c,
    Object.fromEntries(ACL_LEVELS.map((l) => [`acl.${l}.user_ids`, acl?.[l]?.user_ids])),
    viewerId,
  );
  const out: Partial<Record<AclLevel, number[]>> = {};
  for (const l of ACL_LEVELS) {
    const list = ids[`acl.${l}.user_ids`];
    if (list) out[l] = list.filter((id) => id !== ownerId).sort((a, b) => a - b);
  }
  return out;
}

const sameIds = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export const channelRoutes = createRouter()
  .openapi(
    defineRoute(userToken(), {
      method: "post",
      path: "/channels",
      tags: ["Channels"],
      summary: "Create a channel (the creator owns it and is subscribed)",
      description:
        "Needs `messages` (or `public_messages` when `acl.read.public` is true), plain or extended to the type. " +
        `Private-message channels (\`${PM_TYPE}\`) are created by POST /channels/pm/messages.`,
      request: {
        query: channelQuery,
        body: json(z.object({ type: channelType, acl: aclBody.optional(), raw: rawSchema.optional() })),
      },
      responses: { 201: Envelope(ChannelSchema, "The new Channel", exampleChannel, { code: 201 }), ...errors(400, 401, 403, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const body = c.req.valid("json");
      if (body.type === PM_TYPE) {
        throw ApiError.badRequest(`'type' ${PM_TYPE} channels are created by sending a private message (POST /channels/pm/messages)`);
      }
      const flags = flagsFrom(body.acl, NO_FLAGS);
      requireChannelScope(c, { type: body.type, readPublic: flags.readPublic });
      const lists = await aclLists(c, body.acl, user.id, user.id);
      const ch = await createChannel(c.var.db, {
        ...flags,
        type: body.type,
        ownerId: user.id,
        appId: c.var.auth!.app.id,
        acl: { full: lists.full ?? [], write: lists.write ?? [], read: lists.read ?? [] },
        raw: body.raw ?? null,
        createdAt: now(c),
      });
      const view = eventView(c);
      publish(c, { type: "channel", data: renderChannel(ch, view, { raw: true }), route: { actorId: user.id, channelId: ch.id } });
      publishSubscription(c, user, ch, true);
      return ok(c, renderChannel(ch, viewContext(c), { raw: includeRaw(c.req.valid("query"), "channel") }), {}, 201);
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/channels",
      tags: ["Channels"],
      summary: "Channels the caller is subscribed to, most recently subscribed first",
      description: "Paginated by subscription (`pagination_id`). `channel_types`: comma-separated types to include.",
      request: { query: z.object({ ...pageQuery, ...channelQuery.shape, channel_types: z.string().optional().openapi({ description: "Comma-separated channel types to include (all when left out).", example: "com.example.chat" }) }) },
      responses: { 200: Envelope(z.array(ChannelSchema), "Channel objects", [exampleChannel], { more: false, max_id: "1", min_id: "1" }), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const user = currentUser(c);
      const q = c.req.valid("query");
      const page = parsePage(q);
      const rows = await listSubscribed(c.var.db, user.id, page, csv(q.channel_types));
      const { items, meta } = finishPage(rows, page, (r) => r.paginationId!);
      const view = viewContext(c);
      return ok(c, items.map((ch) => renderChannel(ch, view, { raw: includeRaw(q, "channel") })), meta);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/{channel_id}",
      tags: ["Channels"],
      summary: "A channel (any channel the ACL lets the caller read; public ones need no token)",
      description:
        "One channel with its ACL, counts and the caller's `you_subscribed`, `you_muted` and `has_unread`. Channels nobody may read are 404. Public channels need no token; emits nothing.",
      request: { params: channelParams, query: channelQuery },
      responses: { 200: Envelope(ChannelSchema, "Channel object", exampleChannel), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const ch = await readableChannel(c, Number(c.req.valid("param").channel_id));
      return ok(c, renderChannel(ch, viewContext(c), { raw: includeRaw(c.req.valid("query"), "channel") }));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "put",
      path: "/channels/{channel_id}",
      tags: ["Channels"],
      summary: "Change a channel's ACL or raw (owner and full-ACL users)",
      description:
        "Each ACL section given replaces the fields it names (`user_ids` replaces the list); an `immutable` section cannot change " +
        "(400). `raw`: an object replaces it, null removes it.",
      request: {
        params: channelParams,
        query: channelQuery,
        body: json(z.object({ acl: aclBody.optional(), raw: rawSchema.optional() })),
      },
      responses: { 200: Envelope(ChannelSchema, "The updated Channel", exampleChannel), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const body = c.req.valid("json");
      const ch = await readableChannel(c, Number(c.req.valid("param").channel_id));
      requireChannelScope(c, ch);
      if (!channelAccess(ch, user.id).full) throw ApiError.forbidden("only the owner and full-ACL users may change a channel");
      const flags = flagsFrom(body.acl, ch);
      const lists = await aclLists(c, body.acl, ch.ownerId, user.id);
      const immutable: Record<AclLevel, boolean> = { full: ch.fullImmutable, write: ch.writeImmutable, read: ch.readImmutable };
      const sectionFlags: Record<AclLevel, (keyof AclFlags)[]> = {
        full: ["fullImmutable"],
        write: ["writeAnyUser", "writeImmutable"],
        read: ["readAnyUser", "readImmutable", "readPublic"],
      };
      const changes: ChannelChanges = { flags: {}, acl: {} };
      for (const level of ACL_LEVELS) {
        const flagChanged = sectionFlags[level].filter((k) => flags[k] !== ch[k]);
        const list = lists[level];
        const listChanged = list !== undefined && !sameIds(list, ch.acl[level]);
        if ((flagChanged.length || listChanged) && immutable[level]) throw ApiError.badRequest(`'acl.${level}' is immutable`);
        for (const k of flagChanged) changes.flags[k] = flags[k];
        if (listChanged) changes.acl[level] = list;
      }
      if (body.raw !== undefined) changes.raw = body.raw;
      const updated = await updateChannel(c.var.db, ch.id, changes, user.id);
      publish(c, { type: "channel", data: renderChannel(updated, eventView(c), { raw: true }), route: { actorId: user.id, channelId: ch.id } });
      return ok(c, renderChannel(updated, viewContext(c), { raw: includeRaw(c.req.valid("query"), "channel") }));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "put",
      path: "/channels/{channel_id}/subscribe",
      tags: ["Channels"],
      summary: "Subscribe to a channel (lifts the caller's mute of it)",
      description:
        "Subscribes the caller to a channel they may read; subscribing lifts their own mute of it. Repeating it changes nothing. Needs a user token. Emits a `channel_subscription` event.",
      request: { params: channelParams, query: channelQuery },
      responses: { 200: Envelope(ChannelSchema, "The Channel", exampleChannel), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const ch = await readableChannel(c, Number(c.req.valid("param").channel_id));
      requireChannelScope(c, ch);
      const res = await subscribe(c.var.db, ch.id, user.id, now(c));
      if (res.changed) publishSubscription(c, user, res.channel, true);
      return ok(c, renderChannel(res.channel, viewContext(c), { raw: includeRaw(c.req.valid("query"), "channel") }));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "delete",
      path: "/channels/{channel_id}/subscribe",
      tags: ["Channels"],
      summary: "Unsubscribe from a channel",
      description:
        "Unsubscribes the caller; later messages do not subscribe them again unless the channel is a private-message channel they have not muted. Needs a user token. Emits a `channel_subscription` event.",
      request: { params: channelParams, query: channelQuery },
      responses: { 200: Envelope(ChannelSchema, "The Channel", exampleChannel), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const ch = await readableChannel(c, Number(c.req.valid("param").channel_id));
      requireChannelScope(c, ch);
      const res = await unsubscribe(c.var.db, ch.id, user.id);
      if (res.changed) publishSubscription(c, user, res.channel, false);
      return ok(c, renderChannel(res.channel, viewContext(c), { raw: includeRaw(c.req.valid("query"), "channel") }));
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
      responses: { 200: Envelope(ChannelSchema, "The muted Channel", { ...exampleChannel, you_muted: true, you_subscribed: false }), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const res = await mute(c.var.db, Number(c.req.valid("param").channel_id), user.id, now(c));
      if (!res) throw ApiError.notFound("no such channel");
      if (res.unsubscribed) publishSubscription(c, user, res.channel, false);
      return ok(c, renderChannel(res.channel, viewContext(c), { raw: includeRaw(c.req.valid("query"), "channel") }));
    },
  )
  .openapi(
    defineRoute(userToken("messages"), {
      method: "delete",
      path: "/channels/{channel_id}/mute",
      tags: ["Channel muting"],
      summary: "Unmute a channel (does not resubscribe)",
      description:
        "Lifts the caller's mute; it does not subscribe them again. Needs a user token with `messages`; emits nothing.",
      request: { params: channelParams, query: channelQuery },
      responses: { 200: Envelope(ChannelSchema, "The unmuted Channel", exampleChannel), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const user = currentUser(c);
      const ch = await unmute(c.var.db, Number(c.req.valid("param").channel_id), user.id);
      if (!ch) throw ApiError.notFound("no such channel");
      return ok(c, renderChannel(ch, viewContext(c), { raw: includeRaw(c.req.valid("query"), "channel") }));
    },
  )
  .openapi(
    defineRoute(userToken("messages"), {
      method: "get",
      path: "/users/me/channels/muted",
      tags: ["Channel muting"],
      summary: "Channels the caller muted, most recently muted first",
      description:
        "The channels the caller muted, most recently muted first, paginated. Needs a user token with `messages`; emits nothing.",
      request: { query: z.object({ ...pageQuery, ...channelQuery.shape }) },
      responses: { 200: Envelope(z.array(ChannelSchema), "Channel objects", [{ ...exampleChannel, you_muted: true, you_subscribed: false }], { more: false, max_id: "1", min_id: "1" }), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const user = currentUser(c);
      const q = c.req.valid("query");
      const page = parsePage(q);
      const rows = await listMuted(c.var.db, user.id, page);
      const { items, meta } = finishPage(rows, page, (r) => r.paginationId!);
      const view = viewContext(c);
      return ok(c, items.map((ch) => renderChannel(ch, view, { raw: includeRaw(q, "channel") })), meta);
    },
  );
