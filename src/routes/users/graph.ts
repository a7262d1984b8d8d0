import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { checkTokenInFirstRead } from "../../auth/authenticate";
import { currentUser, userToken } from "../../auth/access";
import { publish, type DomainEvent, type ObjectType } from "../../events/publish";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { resolveUserRef } from "../../http/refs";
import { createRouter, defineRoute, errors, userRef } from "../../http/route";
import { oneUser, UserQuery } from "./common";
import { now } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { block, follow, mute, unblock, unfollow, unmute, type GraphChange, type GraphEvent } from "../../stores/graph";
import { getUser, type UserView } from "../../stores/users";
import { eventContext, viewContext } from "../../views/context";
import { neutralUser } from "../../views/post";
import { renderUser } from "../../views/user";

type Ctx = Context<AppEnv>;

const params = z.object({ user_id: userRef.openapi({ param: { name: "user_id", in: "path" }, example: "@someone" }) });
const FOLLOW = userToken("follow");

/** The caller and the user named in the path; acting on oneself is a 400. */
async function parties(c: Ctx, ref: string, action: string) {
  const me = currentUser(c);
  const targetId = await resolveUserRef(c, ref);
  if (targetId === me.id) throw ApiError.badRequest(`'user_id' names you; you cannot ${action} yourself`);
  return { me, targetId };
}

const neutral = (c: Ctx, u: UserView) => renderUser(neutralUser(u), eventContext(c));

/** What the outbox reference of the change's event needs (reserved in the change's batch). */
const graphEvent = (c: Ctx): GraphEvent => ({ origin: eventContext(c).origin, at: now(c) });

/**
 * Publishes `{user, <key>}` (with `extra` events, in one call) when the change happened, and
 * answers with the user acted on.
 */
function answer(c: Ctx, change: GraphChange, type: ObjectType, key: string, isDeleted: boolean, extra: DomainEvent[] = []) {
  if (!change.target) throw ApiError.notFound("no such user");
  const events = [...extra];
  if (change.changed && change.actor) {
    events.unshift({
      seq: change.seq,
      type,
      data: { user: neutral(c, change.actor), [key]: neutral(c, change.target) },
      isDeleted,
      route: { actorId: change.actor.id, userIds: [change.target.id] },
    });
  }
  publish(c, ...events);
  return ok(c, renderUser(change.target, viewContext(c)));
}

const route = (method: "put" | "delete", path: string, summary: string, emits: string) =>
  defineRoute(FOLLOW, {
    method,
    path,
    tags: ["Users"],
    summary,
    description: `Needs a user token with \`follow\`. Acting on oneself is a 400; repeating a request changes nothing (200). ${emits}`,
    request: { params, query: UserQuery },
    responses: { 200: oneUser("The user acted on"), ...errors(400, 401, 403, 404) },
  });

// Following reads the user first (getUser; `@name` refs before that) and touches nothing else before.
checkTokenInFirstRead("PUT", "/users/:user_id/follow");

export const graphRoutes = createRouter()
  .openapi(
    route("put", "/users/{user_id}/follow", "Follow a user; returns the followed user", "Following across a block is a 403. Emits a `follow` event."),
    async (c) => {
      const { me, targetId } = await parties(c, c.req.valid("param").user_id, "follow");
      const view = viewContext(c);
      const target = await getUser(c.var.db, targetId, me.id);
      if (!target) throw ApiError.notFound("no such user");
      const blocked = ApiError.forbidden("you cannot follow a user you blocked or who blocked you");
      if (target.youBlocked || target.blocksYou) throw blocked;
      if (target.youFollow) return ok(c, renderUser(target, view));
      const result = await follow(c.var.db, me.id, targetId, now(c), graphEvent(c));
      if (!result.ok) {
        if (result.reason === "blocked") throw blocked;
        const current = await getUser(c.var.db, targetId, me.id);
        return ok(c, renderUser(current!, view));
      }
      return answer(c, result.change, "follow", "followed_user", false);
    },
  )
  .openapi(route("delete", "/users/{user_id}/follow", "Unfollow a user; returns the user", "Emits a `follow` event with `is_deleted`."), async (c) => {
    const { me, targetId } = await parties(c, c.req.valid("param").user_id, "unfollow");
    return answer(c, await unfollow(c.var.db, me.id, targetId, graphEvent(c)), "follow", "followed_user", true);
  })
  .openapi(
    route("put", "/users/{user_id}/mute", "Mute a user: their posts leave the caller's streams", "Emits a `mute` event (to apps the caller authorized)."),
    async (c) => {
      const { me, targetId } = await parties(c, c.req.valid("param").user_id, "mute");
      return answer(c, await mute(c.var.db, me.id, targetId, now(c), graphEvent(c)), "mute", "muted_user", false);
    },
  )
  .openapi(route("delete", "/users/{user_id}/mute", "Unmute a user", "Emits a `mute` event with `is_deleted`."), async (c) => {
    const { me, targetId } = await parties(c, c.req.valid("param").user_id, "unmute");
    return answer(c, await unmute(c.var.db, me.id, targetId, graphEvent(c)), "mute", "muted_user", true);
  })
  .openapi(
    route(
      "put",
      "/users/{user_id}/block",
      "Block a user: ends follows both ways; hides each from the other's streams",
      "Emits a `block` event, and `follow` events with `is_deleted` for the follows it ended.",
    ),
    async (c) => {
      const { me, targetId } = await parties(c, c.req.valid("param").user_id, "block");
      const result = await block(c.var.db, me.id, targetId, now(c), graphEvent(c));
      // The follows the block ended are unfollow events of their own.
      const unfollows: DomainEvent[] = [];
      const { actor, target } = result;
      if (actor && target) {
        const ended = (follower: UserView, followed: UserView, seq: number | undefined): DomainEvent => ({
          seq,
          type: "follow",
          data: { user: neutral(c, follower), followed_user: neutral(c, followed) },
          isDeleted: true,
          route: { actorId: follower.id, userIds: [followed.id] },
        });
        if (result.unfollowed.byUser) unfollows.push(ended(actor, target, result.unfollowSeqs.byUser));
        if (result.unfollowed.byBlocked) unfollows.push(ended(target, actor, result.unfollowSeqs.byBlocked));
      }
      return answer(c, result, "block", "blocked_user", false, unfollows);
    },
  )
  .openapi(route("delete", "/users/{user_id}/block", "Unblock a user", "Emits a `block` event with `is_deleted`."), async (c) => {
    const { me, targetId } = await parties(c, c.req.valid("param").user_id, "unblock");
    return answer(c, await unblock(c.var.db, me.id, targetId, graphEvent(c)), "block", "blocked_user", true);
  });
