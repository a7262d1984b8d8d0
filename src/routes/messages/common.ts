import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../http/errors";
import { checkIdCount, messageListParams, messageParams } from "../../http/params";
import { idString } from "../../http/route";
import type { AppEnv } from "../../http/types";
import { channelAccess, type ChannelRecord } from "../../stores/channels";
import { csv } from "../channels/input";

// Schemas and checks shared by the message routes (messages.ts, lists.ts,
// sticky.ts, search.ts).

export const MessageSchema = z.object({ id: z.string(), channel_id: z.string() }).passthrough().openapi("Message");
export const channelId = idString("channel id").openapi({ param: { name: "channel_id", in: "path" }, example: "1" });
export const messageId = idString("message id").openapi({ param: { name: "message_id", in: "path" }, example: "1" });
export const messagePath = z.object({ channel_id: channelId, message_id: messageId });

/** The general message parameters (how each message is rendered). */
export const messageQuery = z.object(messageParams);
/** The general message parameters of lists (plus `include_deleted`). */
export const messageListQuery = z.object(messageListParams);

/** Most messages GET /channels/messages returns (the reference: "the first 200 found"). */
export const MAX_MESSAGE_IDS = 200;

/** A channel the caller may read, with what they may do in it; 404 when not readable. */
export function requireReadable(ch: ChannelRecord | undefined, viewerId: number | null) {
  const access = ch ? channelAccess(ch, viewerId) : null;
  if (!ch || !access?.read) throw ApiError.notFound("no such channel");
  return { ch, access };
}

/** Comma-separated integer ids (duplicates dropped, order kept); anything else is a 400 naming the parameter. */
export function parseIdList(name: string, value: string, max: number): number[] {
  const parts = csv(value);
  checkIdCount(name, parts.length);
  if (!parts.length || parts.some((s) => !/^\d{1,18}$/.test(s))) throw ApiError.badRequest(`'${name}' must be comma-separated integer ids`);
  return [...new Set(parts.map(Number))].slice(0, max);
}

/**
 * The channel types a token's `messages` scopes cover: null when one of them is plain
 * `messages` (every type), else the types of its `messages:<type>` scopes.
 */
export function messageTypes(c: Context<AppEnv>): string[] | null {
  const scopes = c.var.auth?.scopes ?? [];
  if (scopes.includes("messages")) return null;
  return scopes.filter((s) => s.startsWith("messages:")).map((s) => s.slice("messages:".length));
}
