import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { currentUser, userToken } from "../../auth/access";
import { timingSafeEqual } from "../../auth/crypto";
import { hasScope } from "../../auth/scopes";
import { POLL_LIMITS } from "../../config";
import { publish } from "../../events/publish";
import { ApiError } from "../../http/errors";
import { checkIdCount, flagValue, pollListParams, pollParams as pollQueryParams } from "../../http/params";
import { errors, idString } from "../../http/route";
import { ClientRefSchema, UserSchema } from "../../http/schemas";
import { iso, now, parseIso } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { setResponse, pollsByIds, type LoadedPoll, type PollListFilters } from "../../stores/polls";
import { codePointLength } from "../../text";
import { viewContext } from "../../views/context";
import { isClosed, renderPoll, renderPollEvent } from "../../views/poll";
import { ok } from "../../http/envelope";
import { csv, rawSchema } from "../channels/input";

// Schemas and checks shared by the poll routes (polls.ts, lists.ts).

const L = POLL_LIMITS;
export const TYPE_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/;

// ---- schemas ------------------------------------------------------------------------------

export const PollOptionSchema = z
  .object({
    text: z.string(),
    position: z.number(),
    is_your_response: z.boolean().optional(),
    respondents: z.number().optional(),
    respondent_ids: z.array(z.string()).optional(),
  })
  .openapi("PollOption");

export const PollSchema = z
  .object({
    id: z.string(),
    created_at: z.string(),
    closed_at: z.string(),
    type: z.string(),
    prompt: z.string(),
    is_anonymous: z.boolean(),
    is_public: z.boolean(),
    max_options: z.number(),
    options: z.array(PollOptionSchema),
    poll_token: z.string().optional().openapi({ description: "Only for the poll's creator" }),
    source: ClientRefSchema,
    user: UserSchema,
    raw: z
      .record(z.string(), z.array(z.record(z.string(), z.unknown())))
      .optional()
      .openapi({ description: "Only with `include_raw=1` or `include_poll_raw=1`" }),
    is_deleted: z.boolean().optional(),
    pagination_id: z.string().optional(),
  })
  .openapi("Poll");

export const PollResponseItemSchema = z
  .object({
    id: z.string(),
    prompt: z.string(),
    closed_at: z.string(),
    created_at: z.string().openapi({ description: "When the response was given" }),
    poll_token: z.string().optional(),
    options: z.array(z.object({ text: z.string(), position: z.number() })),
    user: UserSchema.optional().openapi({ description: "The respondent; never for anonymous polls" }),
    pagination_id: z.string(),
  })
  .openapi("PollResponseItem");

export const flag = z.union([z.boolean(), z.literal(0), z.literal(1), z.enum(["true", "false", "1", "0"])]);
export const integer = z.union([z.number().int({ message: "must be an integer" }), z.string().regex(/^\s*-?\d+\s*$/, { message: "must be an integer" })]);

export const NewPollBody = z
  .object({
    type: z.string().openapi({ description: "Reverse-domain poll type, e.g. `com.example.poll`", example: "com.example.poll" }),
    prompt: z.string().openapi({ description: `Plain text, 1 to ${L.promptMaxLength} characters` }),
    options: z.array(z.unknown()).openapi({
      description: `${L.minOptions} to ${L.maxOptions} options: \`{text, position?}\` objects (or plain strings), text 1 to ${L.optionMaxLength} characters`,
    }),
    duration: integer
      .optional()
      .openapi({ description: `Minutes open, ${L.minDurationMinutes}..${L.maxDurationMinutes}; default ${L.defaultDurationMinutes}` }),
    closed_at: z.string().optional().openapi({ description: "ISO 8601 closing time (instead of duration)" }),
    is_anonymous: flag.optional().openapi({ description: "Default true" }),
    is_public: flag.optional().openapi({ description: "Default false" }),
    max_options: integer.optional().openapi({ description: "1..number of options; default 1" }),
    raw: rawSchema.optional().openapi({
      description: 'Raw items (`{"<type>": [{...}]}`); `GET /polls/search` finds polls by their raw types (`raw_types`) and the files they name (`file_id`)',
    }),
  })
  .openapi("NewPoll");

export const ResponseBody = z
  .object({
    positions: z
      .array(z.number().int({ message: "must be integers" }), { message: "must be a list of option positions" })
      .optional()
      .openapi({ description: "The option positions chosen; required unless given as the `positions` query parameter" }),
    poll_token: z.string().optional(),
  })
  .openapi("PollResponse");

/** `positions` in the query (the reference's alternative to the body): repeated, `positions[]=`, or comma-separated. */
export const positionsQuery = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .openapi({ description: "Instead of the body's `positions`: `positions=1,3`, or repeated (`positions=1&positions=3`, also `positions[]=`)" });

/**
 * The positions of a response: the query's (the reference lets a client send them there
 * instead of a body) or the body's; one of them is required.
 */
export function responsePositions(c: Context<AppEnv>, body: { positions?: number[] }): number[] {
  const given = [...(c.req.queries("positions") ?? []), ...(c.req.queries("positions[]") ?? [])];
  if (given.length) {
    const items = given
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter((v) => v !== "");
    if (!items.every((v) => /^\d{1,3}$/.test(v))) throw ApiError.badRequest("'positions' must be a list of option positions");
    return items.map(Number);
  }
  if (body.positions === undefined) throw ApiError.badRequest("'positions' is required (in the body or the query)");
  return body.positions;
}

export const pollParams = z.object({ poll_id: idString("poll id").openapi({ param: { name: "poll_id", in: "path" }, example: "1" }) });
export const tokenQuery = z.object({
  poll_token: z.string().optional().openapi({ description: "Required on private polls unless you created or responded to them" }),
  ...pollQueryParams,
});

/** The general poll parameters of single polls (how the poll is rendered). */
export const pollRenderQuery = z.object(pollQueryParams);

/** The general poll parameters of lists (which polls, and how each is rendered). */
export const pollListQuery = z.object(pollListParams);

/** The list filters the general poll parameters ask for (`poll_types` wins over `exclude_poll_types`). */
export function listFilters(q: Record<string, string | undefined>): PollListFilters {
  const types = csv(q.poll_types);
  return {
    closed: flagValue(q.include_closed, true),
    private: flagValue(q.include_private, true),
    types: types.length ? types : null,
    excludeTypes: types.length ? [] : csv(q.exclude_poll_types),
  };
}

// ---- helpers ------------------------------------------------------------------------------

export const toBool = (v: z.infer<typeof flag> | undefined, dflt: boolean) => (v === undefined ? dflt : v === true || v === 1 || v === "true" || v === "1");
export const toInt = (v: z.infer<typeof integer> | undefined) => (v === undefined ? undefined : Number(v));

/** The poll types the token may use (`polls:<type>` scopes), or null when `polls` covers every type. */
export function allowedTypes(scopes: string[]): string[] | null {
  if (scopes.includes("polls")) return null;
  return scopes.filter((s) => s.startsWith("polls:")).map((s) => s.slice("polls:".length));
}

/**
 * Whether the caller may open a poll: public polls always; private ones for the creator, anyone
 * who has responded, or with the poll's `poll_token`.
 */
export function canOpen(p: LoadedPoll, userId: number, token: string | undefined): boolean {
  if (p.poll.isPublic || p.poll.userId === userId || p.myPositions !== null) return true;
  return token !== undefined && timingSafeEqual(token, p.poll.pollToken);
}

/** One poll the caller may act on, or the error the contract names (404, then 403). */
export async function openPoll(c: Context<AppEnv>, id: number, token: string | undefined, opts: { needAccess: boolean }) {
  const user = currentUser(c);
  const at = now(c);
  const [p] = await pollsByIds(c.var.db, [id], user.id, at);
  if (!p) throw ApiError.notFound("no such poll");
  if (!hasScope(c.var.auth!.scopes, "polls", p.poll.type)) {
    throw ApiError.forbidden(`this token's 'polls' scope does not cover poll type '${p.poll.type}'`);
  }
  if (opts.needAccess && !canOpen(p, user.id, token)) {
    throw ApiError.forbidden(token === undefined ? "'poll_token' is required for this private poll" : "'poll_token' is wrong for this poll");
  }
  return { p, user, at };
}

/** Comma-separated integer ids (empty entries ignored, duplicates dropped, order kept). */
export function parseIds(value: string, name: string): number[] {
  const parts = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  checkIdCount(name, parts.length);
  if (parts.some((s) => !/^\d{1,18}$/.test(s))) throw ApiError.badRequest(`'${name}' must be comma-separated integer ids`);
  return [...new Set(parts.map(Number))];
}

/** Validated options of a new poll, in position order. */
export function parseOptions(raw: unknown[]): string[] {
  if (raw.length < L.minOptions || raw.length > L.maxOptions) {
    throw ApiError.badRequest(`'options' must have ${L.minOptions} to ${L.maxOptions} options`);
  }
  const items = raw.map((o, i) => {
    const obj = typeof o === "string" ? { text: o } : o && typeof o === "object" && !Array.isArray(o) ? (o as Record<string, unknown>) : null;
    if (!obj || typeof obj.text !== "string") throw ApiError.badRequest(`'options.${i}.text' must be a string`);
    const text = obj.text;
    if (!text.trim() || codePointLength(text) > L.optionMaxLength) {
      throw ApiError.badRequest(`'options.${i}.text' must be 1 to ${L.optionMaxLength} characters`);
    }
    let position: number | undefined;
    if (obj.position !== undefined && obj.position !== null) {
      position = typeof obj.position === "string" && /^\d+$/.test(obj.position) ? Number(obj.position) : (obj.position as number);
      if (!Number.isInteger(position)) throw ApiError.badRequest(`'options.${i}.position' must be an integer`);
    }
    return { text, position, i };
  });
  const given = items.filter((o) => o.position !== undefined);
  if (given.length === 0) return items.map((o) => o.text);
  const positions = new Set(given.map((o) => o.position));
  if (given.length !== items.length || positions.size !== items.length || [...positions].some((p) => p! < 1 || p! > items.length)) {
    throw ApiError.badRequest(`'options' positions must number every option once, 1 to ${items.length}`);
  }
  return items.sort((a, b) => a.position! - b.position!).map((o) => o.text);
}

/** The closing time of a new poll from `duration` (minutes) or `closed_at`. */
export function closingTime(duration: number | undefined, closedAt: string | undefined, at: number): number {
  if (duration !== undefined && closedAt !== undefined) throw ApiError.badRequest("give either 'duration' or 'closed_at', not both");
  if (closedAt !== undefined) {
    const t = parseIso(closedAt);
    if (t === null) throw ApiError.badRequest("'closed_at' must be an ISO 8601 timestamp");
    if (t - at < L.minDurationMinutes * 60 || t - at > L.maxDurationMinutes * 60) {
      throw ApiError.badRequest(`'closed_at' must be between ${L.minDurationMinutes} minute and ${L.maxDurationMinutes / 1440} days from now`);
    }
    return t;
  }
  const minutes = duration ?? L.defaultDurationMinutes;
  if (minutes < L.minDurationMinutes || minutes > L.maxDurationMinutes) {
    throw ApiError.badRequest(`'duration' must be ${L.minDurationMinutes} to ${L.maxDurationMinutes} minutes`);
  }
  return at + minutes * 60;
}

/** Publishes a `poll` event `{poll, user}`; a respondent of an anonymous poll is never named, not even in the routing. */
export function pollEvent(c: Context<AppEnv>, p: LoadedPoll, actor: LoadedPoll["user"], opts: { isDeleted?: boolean } = {}) {
  const data = renderPollEvent(p, actor, viewContext(c));
  publish(c, {
    type: "poll",
    data,
    ...(opts.isDeleted ? { isDeleted: true } : {}),
    route: { ...("user" in data ? { actorId: actor.id } : {}), userIds: [p.poll.userId] },
  });
}

/**
 * Sets the caller's response to a poll (checks: access, human account, open, valid positions)
 * and publishes the `poll` event; the poll as the caller sees it afterwards.
 */
export async function respond(c: Context<AppEnv>, pollId: number, chosen: number[], token: string | undefined) {
  const { p, user, at } = await openPoll(c, pollId, token, { needAccess: true });
  if (user.type !== "human") throw ApiError.forbidden("only human accounts may respond to polls");
  if (isClosed(p.poll, at)) throw ApiError.badRequest(`'poll_id' ${p.poll.id} closed at ${iso(p.poll.closedAt)}; it takes no more responses`);
  const positions = [...new Set(chosen)];
  if (positions.length !== chosen.length) throw ApiError.badRequest("'positions' lists an option twice");
  if (positions.some((n) => n < 1 || n > p.options.length)) throw ApiError.badRequest(`'positions' must be option positions 1 to ${p.options.length}`);
  if (positions.length > p.poll.maxOptions) throw ApiError.badRequest(`'positions' may choose at most ${p.poll.maxOptions} option(s) (max_options)`);
  positions.sort((a, b) => a - b);

  const firstResponse = positions.length > 0 && !p.myPositions?.length;
  await setResponse(c.var.db, {
    pollId: p.poll.id,
    userId: user.id,
    positions,
    at,
    ...(firstResponse ? { interaction: { creatorId: p.poll.userId } } : {}),
  });
  const after: LoadedPoll = { ...p, myPositions: positions };
  pollEvent(c, after, user);
  return ok(c, renderPoll(after, viewContext(c)));
}

export const POLLS = userToken("polls");
export const pollErrors = errors(400, 401, 403, 404, 429);
