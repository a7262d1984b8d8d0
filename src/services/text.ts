import type { Context } from "hono";
import { LIMITS } from "../config";
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
 * Processes post or message text for creation: one query for the mentioned users, then the
 * text processor; text over the kind's limit (counted as decisions §5 says) is a 400.
 */
export async function processForCreate(
  c: Context<AppEnv>,
  text: string,
  kind: TextKind,
  flags: { parseLinks?: boolean; parseMarkdownLinks?: boolean } = {},
): Promise<TextResult> {
  const users = await usersByUsernames(c.var.db, mentionCandidates(text));
  const result = processText(text, { ...flags, schemaBase: c.env.SCHEMA_BASE, itemType: ITEM_TYPE[kind], users });
  if (result.length > LIMIT[kind]) {
    throw ApiError.badRequest(`'text' is longer than ${LIMIT[kind]} characters`);
  }
  return result;
}
