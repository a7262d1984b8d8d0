import { z } from "@hono/zod-openapi";
import { currentUser } from "../../auth/access";
import { randomToken } from "../../auth/crypto";
import { hasScope } from "../../auth/scopes";
import { MORE_LIMITS, POLL_LIMITS } from "../../config";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { examplePoll } from "../../http/examples";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { now } from "../../http/time";
import { codePointLength } from "../../text";
import { armPollClose } from "../../objects/poll-closer";
import { createPoll, deletePoll, pollsByIds, type LoadedPoll } from "../../stores/polls";
import { rawAttachments } from "../../stores/messages";
import { viewContext } from "../../views/context";
import { renderPoll } from "../../views/poll";
import {
  NewPollBody,
  POLLS,
  PollSchema,
  ResponseBody,
  TYPE_RE,
  canOpen,
  closingTime,
  listFilters,
  openPoll,
  parseIds,
  parseOptions,
  pollEvent,
  pollErrors,
  positionsQuery,
  responsePositions,
  pollListQuery,
  pollParams,
  pollRenderQuery,
  respond,
  toBool,
  toInt,
  tokenQuery,
} from "./common";
import { prepareRaw } from "../../services/raw-core";

const L = POLL_LIMITS;

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
      request: { query: pollRenderQuery, body: { content: { "application/json": { schema: NewPollBody } }, required: true } },
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

      const raw = await prepareRaw(c, body.raw ?? null, "poll");
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
          raw,
        },
        options,
        { rawTypes: raw ? Object.keys(raw) : [], fileIds: rawAttachments(raw).fileIds },
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
        "Several polls at once, in the order asked, duplicates dropped, leaving out those the caller may not open and those the general poll parameters filter out (`include_closed=0`, `include_private=0`, `poll_types`, `exclude_poll_types`). Needs a user token with `polls`; emits nothing.",
      request: {
        query: pollListQuery
          .extend({ ids: z.string().openapi({ description: "Comma-separated poll ids", example: "1,2,3" }) })
          .catchall(z.string().optional())
          .openapi({ description: "Also `poll_token_{poll_id}=<token>` per private poll" }),
      },
      responses: { 200: Envelope(z.array(PollSchema), "Poll objects, in the order asked", [examplePoll]), ...pollErrors },
    }),
    async (c) => {
      const user = currentUser(c);
      const query = c.req.query();
      const ids = parseIds(c.req.valid("query").ids, "ids");
      const at = now(c);
      const found = new Map((await pollsByIds(c.var.db, ids, user.id, at, listFilters(query))).map((p) => [p.poll.id, p]));
      const scopes = c.var.auth!.scopes;
      const out: LoadedPoll[] = [];
      for (const id of ids) {
        const p = found.get(id);
        if (!p || !hasScope(scopes, "polls", p.poll.type) || !canOpen(p, user.id, query[`poll_token_${id}`])) continue;
        out.push(p);
        if (out.length === MORE_LIMITS.pollsReturned) break;
      }
      const view = viewContext(c);
      return ok(
        c,
        out.map((p) => renderPoll(p, view)),
      );
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "put",
      path: "/polls/{poll_id}/response",
      tags: ["Polls"],
      summary: "Respond to a poll (an empty `positions` list clears the response); closed polls refuse",
      description:
        "Sets the caller's answer: the option `positions` chosen (at most `max_options`), in the JSON body or in the query (then no body is needed); an empty list clears it. Only human accounts may respond; closed polls refuse. Needs a user token with `polls`. Emits a `poll` event naming the respondent (never for anonymous polls).",
      request: {
        params: pollParams,
        query: tokenQuery.extend({ positions: positionsQuery }),
        body: { content: { "application/json": { schema: ResponseBody } }, required: false },
      },
      responses: { 200: Envelope(PollSchema, "The poll with your response", examplePoll), ...errors(400, 401, 403, 404, 415, 429) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      return respond(c, Number(c.req.valid("param").poll_id), responsePositions(c, body), c.req.valid("query").poll_token ?? body.poll_token);
    },
  )
  .openapi(
    defineRoute(POLLS, {
      method: "put",
      path: "/polls/{poll_id}/response/{position}",
      tags: ["Polls"],
      summary: "Respond to a poll with one option (the older form of `PUT /polls/{poll_id}/response`)",
      description:
        "Sets the caller's answer to the single option at `position`, as `PUT /polls/{poll_id}/response` with `positions: [position]` does; no body. The same rules and event.",
      request: {
        params: pollParams.extend({
          position: z
            .string()
            .regex(/^\d{1,3}$/, { message: "must be an option position" })
            .openapi({ param: { name: "position", in: "path" }, example: "1", description: "The option's position" }),
        }),
        query: tokenQuery,
      },
      responses: { 200: Envelope(PollSchema, "The poll with your response", examplePoll), ...errors(400, 401, 403, 404, 429) },
    }),
    async (c) => {
      const p = c.req.valid("param");
      return respond(c, Number(p.poll_id), [Number(p.position)], c.req.valid("query").poll_token);
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
  );
