import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { hasScope } from "../../auth/scopes";
import { LIMITS } from "../../config";
import { ApiError } from "../../http/errors";
import type { AppEnv } from "../../http/types";
import { resolveUserRefs } from "../../stores/channels";
import { userParams } from "../../http/params";

// Input rules shared by the channel and message routes: channel types, raw, ACL user lists,
// query flags and the scope rule for channel writes.

/** Reversed-domain type names (`io.example.core.chat`): at least two dot-separated labels. */
export const TYPE_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/;
export const TYPE_MAX_LENGTH = 255;

export const channelType = z.string().max(TYPE_MAX_LENGTH).regex(TYPE_PATTERN, { message: "must be a reversed-domain type such as 'com.example.chat'" });

/** A JSON boolean; 0 and 1 are accepted too. */
export const jsonBool = z.union([z.boolean(), z.literal(0), z.literal(1)]).transform((v) => v === true || v === 1);

/** Raw data (decisions §4): `{"<type>": [{...}, ...]}`, at most LIMITS.raw.max_length bytes serialized. */
export const rawSchema = z.any().superRefine((v, ctx) => {
  const problem = rawProblem(v);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

function rawProblem(v: unknown): string | undefined {
  if (v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) return `must be an object of the form {"<type>": [{...}]}`;
  for (const [type, items] of Object.entries(v as Record<string, unknown>)) {
    if (type.length > TYPE_MAX_LENGTH || !TYPE_PATTERN.test(type)) return `has an invalid type '${type.slice(0, 64)}'`;
    if (!Array.isArray(items) || items.some((i) => !i || typeof i !== "object" || Array.isArray(i))) {
      return `'${type}' must be an array of objects`;
    }
  }
  if (new TextEncoder().encode(JSON.stringify(v)).length > LIMITS.raw.max_length) {
    return `is longer than ${LIMITS.raw.max_length} bytes`;
  }
  return undefined;
}

/** Most users an ACL list or a private message's destinations may name. */
export const MAX_USER_LIST = 200;

/** User references: integer ids or `@username` (a bare username is taken as one too). */
export const userRefList = z.array(z.union([z.string().min(1).max(64), z.number().int().positive()])).max(MAX_USER_LIST);

/** A user reference normalised for `resolveUserRefs`: `"123"` or `"@name"` (lowercase). */
export function normalizeUserRef(ref: string | number): string {
  const s = String(ref).trim();
  if (/^\d+$/.test(s)) return String(Number(s));
  return "@" + s.replace(/^@/, "").toLowerCase();
}

/**
 * Resolves lists of user references (one query for all lists); an unknown user is a 400 naming
 * the list's field. Returns the ids of each list, deduplicated, in the order given.
 */
export async function resolveUserLists(
  c: Context<AppEnv>,
  lists: Record<string, (string | number)[] | undefined>,
  viewerId: number,
): Promise<{ ids: Record<string, number[]>; blockers: Set<number> }> {
  const all = Object.values(lists).flatMap((l) => (l ?? []).map(normalizeUserRef));
  const found = await resolveUserRefs(c.var.db, [...new Set(all)], viewerId);
  const ids: Record<string, number[]> = {};
  const blockers = new Set<number>();
  for (const [field, list] of Object.entries(lists)) {
    if (!list) continue;
    const out = new Set<number>();
    for (const ref of list) {
      const hit = found.get(normalizeUserRef(ref));
      if (!hit) throw ApiError.badRequest(`'${field}' has unknown user '${String(ref).slice(0, 64)}'`);
      out.add(hit.id);
      if (hit.blocksViewer) blockers.add(hit.id);
    }
    ids[field] = [...out];
  }
  return { ids, blockers };
}

/** `1`/`true` turn a query flag on. */
export const flagOn = (v: string | undefined) => v === "1" || v === "true";

/** A 0/1 query filter; anything else is a 400 naming it. */
export function bit(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined || v === "") return undefined;
  if (v === "1" || v === "true") return true;
  if (v === "0" || v === "false") return false;
  throw ApiError.badRequest(`'${name}' must be 0 or 1`);
}

/** Comma-separated query values, trimmed, empty ones dropped. */
export const csv = (v: string | undefined) =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** An integer id query parameter; anything else is a 400 naming it. */
export function intParam(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === "") return undefined;
  if (!/^\d{1,18}$/.test(v)) throw ApiError.badRequest(`'${name}' must be an integer id`);
  return Number(v);
}

/** Whether a channel is public: anyone, even without a token, may read it. */
export const isPublicChannel = (ch: { readPublic: boolean }) => ch.readPublic;

/**
 * Writes in a channel need a user token with `messages` (or `public_messages` for a public
 * channel), either plain or extended to the channel's type (`messages:<type>`); otherwise 403.
 */
export function requireChannelScope(c: Context<AppEnv>, ch: { type: string; readPublic: boolean }): void {
  const scopes = c.var.auth?.scopes ?? [];
  if (hasScope(scopes, "messages", ch.type)) return;
  if (isPublicChannel(ch) && hasScope(scopes, "public_messages", ch.type)) return;
  throw ApiError.forbidden(`this needs the 'messages' scope${isPublicChannel(ch) ? " (or 'public_messages')" : ""} for channels of type '${ch.type}'`);
}

/** `include_raw=1` or the object-specific `include_<object>_raw=1`. */
export const includeRaw = (q: Record<string, string | undefined>, object: "channel" | "message") => flagOn(q.include_raw) || flagOn(q[`include_${object}_raw`]);

/** `include_raw` and the general user parameters (for the users channels and messages embed). */
export const rawQuery = userParams;
