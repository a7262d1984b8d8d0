import type { Context } from "hono";
import { LIMITS, MORE_LIMITS } from "../config";
import { ApiError } from "../http/errors";
import type { AppEnv } from "../http/types";
import { usersByUsernames } from "../stores/users";
import { mentionCandidates, processText, type TextResult } from "../text";

export type TextKind = "post" | "message";

const LIMIT: Record<TextKind, number> = { post: LIMITS.post.max_length, message: LIMITS.message.max_length };
const ITEM_TYPE = { post: "Post", message: "Message" } as const;

/** Client flags of a create body: `entities.parse_links` / `entities.parse_markdown_links` (0 or false turns off). */
export function parseFlags(entities: unknown): { parseLinks: boolean; parseMarkdownLinks: boolean } {
  const e = (entities && typeof entities === "object" ? entities : {}) as Record<string, unknown>;
  const on = (v: unknown) => !(v === 0 || v === false || v === "0" || v === "false");
  return { parseLinks: on(e.parse_links), parseMarkdownLinks: on(e.parse_markdown_links) };
}

/**
 * A 400 naming `field` when the text as sent is over `MORE_LIMITS.sentTextFactor` times its counted
 * `limit` (markdown link targets are not counted, but every character sent costs processing work).
 */
export function checkSentLength(text: string, limit: number, field: string): void {
  const max = limit * MORE_LIMITS.sentTextFactor;
  if (text.length > max) throw ApiError.badRequest(`'${field}' is longer than ${max} characters as sent (${limit} when counted)`);
}

/**
 * The users a text names with `@`, in one query whose list is one bound parameter. More distinct
 * `@name`s than `MORE_LIMITS.mentionsPerText` is a 400 naming `field`, found without reading
 * past the limit (a huge text of mentions costs no more than the limit).
 */
export async function mentionedUsers(c: Context<AppEnv>, text: string, field: string) {
  const max = MORE_LIMITS.mentionsPerText;
  const names = mentionCandidates(text, max + 1);
  if (names.length > max) throw ApiError.badRequest(`'${field}' mentions more than ${max} distinct @names`);
  return usersByUsernames(c.var.db, names);
}

/** A 400 naming `field` when a processed text has more tags or links than the limits allow. */
export function checkEntityCounts(result: TextResult, field: string): TextResult {
  const { tags, links } = result.entities;
  if (tags.length > MORE_LIMITS.tagsPerText) throw ApiError.badRequest(`'${field}' has more than ${MORE_LIMITS.tagsPerText} tags`);
  if (links.length > MORE_LIMITS.linksPerText) throw ApiError.badRequest(`'${field}' has more than ${MORE_LIMITS.linksPerText} links`);
  return result;
}

/**
 * Processes post or message text for creation: one query for the mentioned users, then the
 * text processor; text over the kind's limit (counted as decisions §5 says) is a 400, and so
 * are more mentions, tags or links than the limits allow.
 */
export async function processForCreate(
  c: Context<AppEnv>,
  text: string,
  kind: TextKind,
  flags: { parseLinks?: boolean; parseMarkdownLinks?: boolean } = {},
): Promise<TextResult> {
  checkSentLength(text, LIMIT[kind], "text");
  const users = await mentionedUsers(c, text, "text");
  const result = processText(text, { ...flags, schemaBase: c.env.SCHEMA_BASE, itemType: ITEM_TYPE[kind], users });
  if (result.length > LIMIT[kind]) {
    throw ApiError.badRequest(`'text' is longer than ${LIMIT[kind]} characters`);
  }
  return checkEntityCounts(result, "text");
}
