import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { PUBLIC, currentUser, userToken } from "../../auth/access";
import { LIMITS } from "../../config";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { now } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { PM_TYPE } from "../../stores/channel-sql";
import { readableChannelWith } from "../../stores/channel-lists";
import {
  ACL_LEVELS,
  changeOwner,
  channelAccess,
  createChannel,
  deactivateChannel,
  getChannel,
  updateChannel,
  type AclFlags,
  type AclLevel,
  type ChannelChanges,
  type ChannelRecord,
} from "../../stores/channels";
import {
  ChannelSchema,
  channelExtras,
  channelParams,
  channelQuery,
  channelRenderer,
  exampleChannel,
  channelReservation,
  publishChannel,
  publishSubscription,
  subscriptionReservation,
  renderPlain,
} from "./common";
import { channelType, jsonBool, rawSchema, requireChannelScope, resolveUserLists, userRefList } from "./input";
import { prepareRaw } from "../../services/raw-core";

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

/** A channel the caller may read, else 404 (decisions §1: what you may not see does not exist). */
export async function readableChannel(c: Context<AppEnv>, id: number): Promise<ChannelRecord> {
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
  const { ids } = await resolveUserLists(c, Object.fromEntries(ACL_LEVELS.map((l) => [`acl.${l}.user_ids`, acl?.[l]?.user_ids])), viewerId);
  const out: Partial<Record<AclLevel, number[]>> = {};
  for (const l of ACL_LEVELS) {
    const list = ids[`acl.${l}.user_ids`];
    if (list) out[l] = list.filter((id) => id !== ownerId).sort((a, b) => a - b);
  }
  return out;
}

const sameIds = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Raw of an update (the reference): each type given replaces that type, an empty list removes
 * it, types not named stay; `null` removes all raw.
 */
function mergedRaw(current: unknown, given: unknown): unknown {
  if (given === null) return null;
  const out: Record<string, unknown[]> = { ...((current as Record<string, unknown[]> | null) ?? {}) };
  for (const [type, items] of Object.entries(given as Record<string, unknown[]>)) {
    if (items.length) out[type] = items;
    else delete out[type];
  }
  if (new TextEncoder().encode(JSON.stringify(out)).length > LIMITS.raw.max_length) {
    throw ApiError.badRequest(`'raw' is longer than ${LIMITS.raw.max_length} bytes once merged with the channel's raw`);
  }
  return Object.keys(out).length ? out : null;
}

const updateRequest = {
  params: channelParams,
  query: channelQuery,
  body: json(z.object({ acl: aclBody.optional(), raw: rawSchema.optional() })),
};

const updateDescription =
  "Owner and full-ACL users. Each ACL section given replaces the fields it names (`user_ids` replaces the list); an `immutable` " +
  "section cannot change (400); only the owner may change `acl.full` (403). `raw`: each type given replaces that type, an empty " +
  "list removes it, others stay; null removes all raw. Needs `messages` (or the type's extended scope). Emits a `channel` event.";

/** PUT and PATCH /channels/{id}: the same update. */
async function updateHandler(c: Context<AppEnv>, channelId: number, body: { acl?: AclBody; raw?: unknown }) {
  const user = currentUser(c);
  const ch = await readableChannel(c, channelId);
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
    if ((flagChanged.length || listChanged) && level === "full" && ch.ownerId !== user.id) {
      throw ApiError.forbidden("only the channel's owner may change 'acl.full'");
    }
    for (const k of flagChanged) changes.flags[k] = flags[k];
    if (listChanged) changes.acl[level] = list;
  }
  if (body.raw !== undefined) changes.raw = mergedRaw(ch.raw, await prepareRaw(c, body.raw, "channel"));
  const { value: updated, seqs } = await updateChannel(c.var.db, ch.id, changes, user.id, [channelReservation(c, user.id, ch.id)]);
  publishChannel(c, user.id, updated, seqs[0]);
  return ok(c, renderPlain(c, updated));
}

const ownerBody = z.object({
  owner_id: z.union([z.string().min(1).max(64), z.number().int().positive()]).openapi({ description: "The new owner: a user id or @username", example: "2" }),
});

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
      const [lists, raw] = await Promise.all([aclLists(c, body.acl, user.id, user.id), prepareRaw(c, body.raw ?? null, "channel")]);
      const { value: ch, seqs } = await createChannel(
        c.var.db,
        {
          ...flags,
          type: body.type,
          ownerId: user.id,
          appId: c.var.auth!.app.id,
          acl: { full: lists.full ?? [], write: lists.write ?? [], read: lists.read ?? [] },
          raw,
          createdAt: now(c),
        },
        [channelReservation(c, user.id), subscriptionReservation(c, user.id, true)],
      );
      publishChannel(c, user.id, ch, seqs[0]);
      publishSubscription(c, user, ch, true, seqs[1]);
      return ok(c, renderPlain(c, ch), {}, 201);
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/channels/{channel_id}",
      tags: ["Channels"],
      summary: "A channel (any channel the ACL lets the caller read; public ones need no token)",
      description:
        "One channel with its ACL, counts and the caller's `you_subscribed`, `you_muted` and `has_unread`, shaped by the general " +
        "channel parameters (`include_marker` defaults to 0 here). Channels nobody may read are 404. Public channels need no token; emits nothing.",
      request: { params: channelParams, query: channelQuery },
      responses: { 200: Envelope(ChannelSchema, "Channel object", exampleChannel), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const viewerId = c.var.auth?.user?.id ?? null;
      const read = await readableChannelWith(c.var.db, Number(c.req.valid("param").channel_id), viewerId, channelExtras(c.req.query()));
      const ch = read.channels[0];
      if (!ch) throw ApiError.notFound("no such channel");
      return ok(c, channelRenderer(c, read, false)(ch));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "put",
      path: "/channels/{channel_id}",
      tags: ["Channels"],
      summary: "Change a channel's ACL or raw (owner and full-ACL users)",
      description: updateDescription,
      request: updateRequest,
      responses: { 200: Envelope(ChannelSchema, "The updated Channel", exampleChannel), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => updateHandler(c, Number(c.req.valid("param").channel_id), c.req.valid("json")),
  )
  .openapi(
    defineRoute(userToken(), {
      method: "patch",
      path: "/channels/{channel_id}",
      tags: ["Channels"],
      summary: "Change a channel's ACL or raw (the same as PUT)",
      description: updateDescription,
      request: updateRequest,
      responses: { 200: Envelope(ChannelSchema, "The updated Channel", exampleChannel), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => updateHandler(c, Number(c.req.valid("param").channel_id), c.req.valid("json")),
  )
  .openapi(
    defineRoute(userToken(), {
      method: "delete",
      path: "/channels/{channel_id}",
      tags: ["Channels"],
      summary: "Deactivate a channel (owner only; irreversible)",
      description:
        "Sets `is_active` to false and removes every subscription; messages stay readable. Only the owner may (403); " +
        `\`${PM_TYPE}\` channels cannot be deactivated (400). Repeating it changes nothing. Needs \`messages\` (or the type's extended scope). Emits a \`channel\` event.`,
      request: { params: channelParams, query: channelQuery },
      responses: {
        200: Envelope(ChannelSchema, "The deactivated Channel", { ...exampleChannel, is_active: false, you_subscribed: false }),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const user = currentUser(c);
      const ch = await readableChannel(c, Number(c.req.valid("param").channel_id));
      requireChannelScope(c, ch);
      if (ch.type === PM_TYPE) throw ApiError.badRequest("private-message channels cannot be deactivated");
      if (ch.ownerId !== user.id) throw ApiError.forbidden("only the channel's owner may deactivate it");
      if (!ch.isActive) return ok(c, renderPlain(c, ch));
      const { value: updated, seqs } = await deactivateChannel(c.var.db, ch.id, user.id, [channelReservation(c, user.id, ch.id)]);
      publishChannel(c, user.id, updated, seqs[0]);
      return ok(c, renderPlain(c, updated));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "put",
      path: "/channels/{channel_id}/owner",
      tags: ["Channels"],
      summary: "Give a channel to another user (owner only)",
      description:
        "The new owner (`owner_id`: an id or @username) leaves the ACL lists (the owner is implicit) and the previous owner becomes a " +
        `full-access member. Only the owner may (403); \`${PM_TYPE}\` channels have no owner to change (400); an unknown user is a 400. ` +
        "Needs `messages` (or the type's extended scope). Emits a `channel` event.",
      request: { params: channelParams, query: channelQuery, body: json(ownerBody) },
      responses: { 200: Envelope(ChannelSchema, "The updated Channel", exampleChannel), ...errors(400, 401, 403, 404, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const ch = await readableChannel(c, Number(c.req.valid("param").channel_id));
      requireChannelScope(c, ch);
      if (ch.type === PM_TYPE) throw ApiError.badRequest("private-message channels have no owner to change");
      if (ch.ownerId !== user.id) throw ApiError.forbidden("only the channel's owner may give it away");
      const { ids } = await resolveUserLists(c, { owner_id: [c.req.valid("json").owner_id] }, user.id);
      const newOwner = ids.owner_id[0];
      if (newOwner === user.id) return ok(c, renderPlain(c, ch));
      const { value: updated, seqs } = await changeOwner(c.var.db, ch.id, user.id, newOwner, [channelReservation(c, user.id, ch.id)]);
      publishChannel(c, user.id, updated, seqs[0]);
      return ok(c, renderPlain(c, updated));
    },
  );
