import { z } from "@hono/zod-openapi";
import { userParams } from "../http/params";
import type { Context } from "hono";
import { POLL_LIMITS } from "../config";
import { codePointLength } from "../text";
import { currentUser, userToken } from "../auth/access";
import { randomToken, timingSafeEqual } from "../auth/crypto";
import { hasScope } from "../auth/scopes";
import { MORE_LIMITS } from "../config";
import { publish } from "../events/publish";
import { ok } from "../http/envelope";
import { ApiError } from "../http/errors";
import { finishPage, pageQuery, parsePage } from "../http/pagination";
import { createRouter, defineRoute, Envelope, errors, idString } from "../http/route";
import { examplePoll, examplePollResponse } from "../http/examples";
import { ClientRefSchema, UserSchema } from "../http/schemas";
import { iso, now, parseIso } from "../http/time";
import type { AppEnv } from "../http/types";
import { armPollClose } from "../objects/poll-closer";
import { createPoll, deletePoll, pollsByCreator, pollsByIds, responsesToCreator, setResponse, type LoadedPoll } from "../stores/polls";
import { viewContext } from "../views/context";
import { isClosed, renderAbbreviatedPoll, renderPoll, renderPollEvent } from "../views/poll";
import { renderUser } from "../views/user";

const L = POLL_LIMITS;
const TYPE_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/;

// ---- schemas ------------------------------------------------------------------------------

const PollOptionSchema = z
  .object({
    text: z.string(),
    position: z.number(),
    is_your_response: z.boolean().optional(),
    respondents: z.number().optional(),
    respondent_ids: z.array(z.string()).optional(),
  })
  .openapi("PollOption");

const PollSchema = z
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
    is_deleted: z.boolean().optional(),
    pagination_id: z.string().optional(),
  })
  .openapi("Poll");

const PollResponseItemSchema = z
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

const flag = z.union([z.boolean(), z.literal(0), z.literal(1), z.enum(["true", "false", "1", "0"])]);
const integer = z.union([z.number().int({ message: "must be an integer" }), z.string().regex(/^\s*-?\d+\s*$/, { message: "must be an integer" })]);

const NewPollBody = z
  .object({
    type: z.string().openapi({ description: "Reverse-domain poll type, e.g. `com.example.poll`", example: "com.example.poll" }),
    prompt: z.string().openapi({ description: `Plain text, 1 to ${L.promptMaxLength} characters` }),
    options: z.array(z.unknown()).openapi({
      description: `${L.minOptions} to ${L.maxOptions} options: \`{text, position?}\` objects (or plain strings), text 1 to ${L.optionMaxLength} characters`,
    }),
    duration: integer.optional().openapi({ description: `Minutes open, ${L.minDurationMinutes}..${L.maxDurationMinutes}; default ${L.defaultDurationMinutes}` }),
    closed_at: z.string().optional().openapi({ description: "ISO 8601 closing time (instead of duration)" }),
    is_anonymous: flag.optional().openapi({ description: "Default true" }),
    is_public: flag.optional().openapi({ description: "Default false" }),
    max_options: integer.optional().openapi({ description: "1..number of options; default 1" }),
  })
  .openapi("NewPoll");

const ResponseBody = z
  .object({
    positions: z.array(z.number().int({ message: "must be integers" }), { message: "must be a list of option positions" }),
    poll_token: z.string().optional(),
  })
  .openapi("PollResponse");

const pollParams = z.object({ poll_id: idString("poll id").openapi({ param: { name: "poll_id", in: "path" }, example: "1" }) });
const tokenQuery = z.object({
  poll_token: z.string().optional().openapi({ description: "Required on private polls unless you created or responded to them" }),
  ...userParams,
});

// ---- helpers ------------------------------------------------------------------------------

const toBool = (v: z.infer<typeof flag> | undefined, dflt: boolean) => (v === undefined ? dflt : v === true || v === 1 || v === "true" || v === "1");
const toInt = (v: z.infer<typeof integer> | undefined) => (v === undefined ? undefined : Number(v));

/** The poll types the token may use (`polls:<type>` scopes), or null when `polls` covers every type. */
function allowedTypes(scopes: string[]): string[] | null {
  if (scopes.includes("polls")) return null;
  return scopes.filter((s) => s.startsWith("polls:")).map((s) => s.slice("polls:".length));
}

/**
 * Whether the caller may open a poll: public polls always; private ones for the creator, anyone
 * who has responded, or with the poll's `poll_token`.
 */
function canOpen(p: LoadedPoll, userId: number, token: string | undefined): boolean {
  if (p.poll.isPublic || p.poll.userId === userId || p.myPositions !== null) return true;
  return token !== undefined && timingSafeEqual(token, p.poll.pollToken);
}

/** One poll the caller may act on, or the error the contract names (404, then 403). */
async function openPoll(c: Context<AppEnv>, id: number, token: string | undefined, opts: { needAccess: boolean }) {
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
function parseIds(value: string, name: string): number[] {
  const parts = value.split(",").map((s) => s.trim()).filter(Boolean);
  if (parts.some((s) => !/^\d{1,18}$/.test(s))) throw ApiError.badRequest(`'${name}' must be comma-separated integer ids`);
  return [...new Set(parts.map(Number))];
}

/** Validated options of a new poll, in position order. */
function parseOptions(raw: unknown[]): string[] {
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
function closingTime(duration: number | undefined, closedAt: string | undefined, at: number): number {
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
function pollEvent(c: Context<AppEnv>, p: LoadedPoll, actor: LoadedPoll["user"], opts: { isDeleted?: boolean } = {}) {
  const data = renderPollEvent(p, actor, viewContext(c));
  publish(c, {
    type: "poll",
    data,
    ...(opts.isDeleted ? { isDeleted: true } : {}),
    route: { ...("user" in data ? { actorId: actor.id } : {}), userIds: [p.poll.userId] },
  });
}

const POLLS = userToken("polls");
const pollErrors = errors(400, 401, 403, 404, 429);

// ---- routes -------------------------------------------------------------------------------

export const pollRoutes = createRouter()
  .openapi(
    defineRoute(POLLS, {
      method: "post",
      path: "/polls",
      tags: ["Polls"],
      summary: "Create a poll (private and anonymous unless told otherwise); the reply carries its poll_token",
      description:
        "Creates a poll open for `duration` minutes (default 1440) or until `closed_at`. Private and anonymous unless told otherwise; the reply carries `poll_token`, which lets others open a private poll. Needs a user token with `polls` (or `polls:<type>` for that type). Emits a `poll` event; a `PollCloser` alarm closes it on time (another `poll` event).",
      request: { body: { content: { "application/json": { schema: NewPollBody } }, required: true } },
      responses: { 201: Envelope(PollSchema, "The created poll", examplePoll, { code: 201 }), ...errors(400, 401, 403, 415, 429) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const user = currentUser(c);
      const auth = c.var.auth!;
      const at = now(c);
      if (!TYPE_RE.test(body.type) || body.type.length > L.typeMaxLength) {
        throw ApiError.badRequest(`'type' must be a reverse-domain identifier such as com.example.poll (at most ${L.typeMaxLength} characters)`);
      }
      if (!hasScope(auth.scopes, "polls", body.type)) throw ApiError.forbidden(`this token's 'polls' scope does not cover poll type '${body.type}'`);
      if (!body.prompt.trim() || codePointLength(body.prompt) > L.promptMaxLength) {
        throw ApiError.badRequest(`'prompt' must be 1 to ${L.promptMaxLength} characters`);
      }
      const options = parseOptions(body.options);
      const closedAt = closingTime(toInt(body.duration), body.closed_at, at);
      const maxOptions = toInt(body.max_options) ?? 1;
      if (maxOptions < 1 || maxOptions > options.length) throw ApiError.badRequest(`'max_options' must be 1 to ${options.length}`);

      const poll = await createPoll(
        c.var.db,
        {
          userId: user.id,
          appId: auth.app.id,
          type: body.type,
          prompt: body.prompt,
          isAnonymous: toBool(body.is_anonymous, true),
          isPublic: toBool(body.is_public, false),
          maxOptions,
          pollToken: randomToken(24),
          createdAt: at,
          closedAt,
        },
        options,
      );
      const loaded: LoadedPoll = {
        poll,
        user,
        app: auth.app,
        myPositions: null,
        options: options.map((text, i) => ({ text, position: i + 1, respondents: 0 })),
        respondentIds: new Map(),
      };
      const view = viewContext(c);
      c.executionCtx.waitUntil(
        armPollClose(c.env, poll.id, poll.closedAt, view.origin).catch((e) => console.error("poll close alarm not set", poll.id, String(e))),
      );
      pollEvent(c, loaded, user);
      return ok(c, renderPoll(loaded, view), {}, 201);
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "get",
      path: "/polls/{poll_id}",
      tags: ["Polls"],
      summary: "A poll; private polls need `poll_token` unless you created or responded to them",
      description:
        "One poll with its options and, once closed, its results. Private polls open for their creator, anyone who responded, or with `poll_token`. Needs a user token with `polls`; emits nothing.",
      request: { params: pollParams, query: tokenQuery },
      responses: { 200: Envelope(PollSchema, "Poll object", examplePoll), ...pollErrors },
    }),
    async (c) => {
      const { p } = await openPoll(c, Number(c.req.valid("param").poll_id), c.req.valid("query").poll_token, { needAccess: true });
      return ok(c, renderPoll(p, viewContext(c)));
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "get",
      path: "/polls",
      tags: ["Polls"],
      summary: `Polls by id: the first ${MORE_LIMITS.pollsReturned} found that you may open (\`poll_token_{poll_id}\` for private ones)`,
      description:
        "Several polls at once, in the order asked, duplicates dropped, leaving out those the caller may not open. Needs a user token with `polls`; emits nothing.",
      request: {
        query: z
          .object({ ids: z.string().openapi({ description: "Comma-separated poll ids", example: "1,2,3" }) })
          .catchall(z.string().optional())
          .openapi({ description: "Also `poll_token_{poll_id}=<token>` per private poll" }),
      },
      responses: { 200: Envelope(z.array(PollSchema), "Poll objects, in the order asked", [examplePoll]), ...pollErrors },
    }),
    async (c) => {
      const user = currentUser(c);
      const query = c.req.query();
      const ids = parseIds(c.req.valid("query").ids, "ids");
      const found = new Map((await pollsByIds(c.var.db, ids, user.id, now(c))).map((p) => [p.poll.id, p]));
      const scopes = c.var.auth!.scopes;
      const out: LoadedPoll[] = [];
      for (const id of ids) {
        const p = found.get(id);
        if (!p || !hasScope(scopes, "polls", p.poll.type) || !canOpen(p, user.id, query[`poll_token_${id}`])) continue;
        out.push(p);
        if (out.length === MORE_LIMITS.pollsReturned) break;
      }
      const view = viewContext(c);
      return ok(c, out.map((p) => renderPoll(p, view)));
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "put",
      path: "/polls/{poll_id}/response",
      tags: ["Polls"],
      summary: "Respond to a poll (an empty `positions` list clears the response); closed polls refuse",
      description:
        "Sets the caller's answer: the option `positions` chosen (at most `max_options`); an empty list clears it. Only human accounts may respond; closed polls refuse. Needs a user token with `polls`. Emits a `poll` event naming the respondent (never for anonymous polls).",
      request: {
        params: pollParams,
        query: tokenQuery,
        body: { content: { "application/json": { schema: ResponseBody } }, required: true },
      },
      responses: { 200: Envelope(PollSchema, "The poll with your response", examplePoll), ...errors(400, 401, 403, 404, 415, 429) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const token = c.req.valid("query").poll_token ?? body.poll_token;
      const { p, user, at } = await openPoll(c, Number(c.req.valid("param").poll_id), token, { needAccess: true });
      if (user.type !== "human") throw ApiError.forbidden("only human accounts may respond to polls");
      if (isClosed(p.poll, at)) throw ApiError.badRequest(`'poll_id' ${p.poll.id} closed at ${iso(p.poll.closedAt)}; it takes no more responses`);
      const positions = [...new Set(body.positions)];
      if (positions.length !== body.positions.length) throw ApiError.badRequest("'positions' lists an option twice");
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
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "delete",
      path: "/polls/{poll_id}",
      tags: ["Polls"],
      summary: "Delete a poll you created",
      description:
        "Deletes a poll; it is a 404 everywhere afterwards. Only its creator. Needs a user token with `polls`. Emits a `poll` event with `is_deleted`.",
      request: { params: pollParams },
      responses: { 200: Envelope(PollSchema, "The deleted poll, with `is_deleted` true", { ...examplePoll, is_deleted: true }), ...pollErrors },
    }),
    async (c) => {
      const { p, user } = await openPoll(c, Number(c.req.valid("param").poll_id), undefined, { needAccess: false });
      if (p.poll.userId !== user.id) throw ApiError.forbidden("only the poll's creator may delete it");
      await deletePoll(c.var.db, p.poll.id);
      pollEvent(c, p, p.user, { isDeleted: true });
      return ok(c, { ...renderPoll(p, viewContext(c)), is_deleted: true });
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "get",
      path: "/users/me/polls",
      tags: ["Polls"],
      summary: "Polls you created, newest first (paginated)",
      description:
        "The caller's own polls, newest first, paginated by `before_id`/`since_id`/`count`. Needs a user token with `polls`; emits nothing.",
      request: { query: z.object(pageQuery) },
      responses: { 200: Envelope(z.array(PollSchema), "Poll objects", [examplePoll], { more: false, max_id: "1", min_id: "1" }), ...pollErrors },
    }),
    async (c) => {
      const user = currentUser(c);
      const page = parsePage(c.req.valid("query"));
      const rows = await pollsByCreator(c.var.db, user.id, page, allowedTypes(c.var.auth!.scopes), now(c));
      const { items, meta } = finishPage(rows, page, (p) => p.poll.id);
      const view = viewContext(c);
      return ok(
        c,
        items.map((p) => ({ ...renderPoll(p, view), pagination_id: String(p.poll.id) })),
        meta,
      );
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "get",
      path: "/users/me/polls/responses",
      tags: ["Polls"],
      summary: "Responses to polls you created, newest first, as abbreviated polls (paginated)",
      description:
        "One item per current response to the caller's polls, newest first: the abbreviated poll with the response's `created_at` and `pagination_id`, and the respondent unless the poll is anonymous. Needs a user token with `polls`; emits nothing.",
      request: {
        query: z.object({ ...pageQuery, ids: z.string().optional().openapi({ description: "Only responses to these polls (comma-separated ids)" }) }),
      },
      responses: { 200: Envelope(z.array(PollResponseItemSchema), "Abbreviated polls, one per response", [examplePollResponse], { more: false, max_id: "1", min_id: "1" }), ...pollErrors },
    }),
    async (c) => {
      const user = currentUser(c);
      const q = c.req.valid("query");
      const page = parsePage(q);
      const ids = q.ids?.trim() ? parseIds(q.ids, "ids") : null;
      const rows = ids && !ids.length ? [] : await responsesToCreator(c.var.db, user.id, page, ids, allowedTypes(c.var.auth!.scopes));
      const { items, meta } = finishPage(rows, page, (r) => r.id);
      const view = viewContext(c);
      return ok(
        c,
        items.map((r) => ({
          ...renderAbbreviatedPoll(r.poll, r.options, view),
          created_at: iso(r.createdAt),
          ...(r.poll.isAnonymous ? {} : { user: renderUser(r.responder, view) }),
          pagination_id: String(r.id),
        })),
        meta,
      );
    },
  );
