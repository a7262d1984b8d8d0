import type { Context } from "hono";
import type { Auth } from "../http/types";
import { eventContext } from "../views/context";
import { renderToken } from "../views/token";
import type { DomainEvent } from "./publish";

/**
 * The `token` event of a user token granted (issued) or revoked (deleted): the Token object.
 * It reaches only the token's app: that app's streams and the user's `/token` subscriptions
 * made through it; a revocation also closes the user streams opened with the token.
 */
export function tokenEvent(c: Context, auth: Auth, revoked = false): DomainEvent {
  const userId = auth.user!.id;
  return {
    type: "token",
    data: renderToken(auth, eventContext(c)),
    ...(revoked ? { isDeleted: true } : {}),
    route: { actorId: userId, userIds: [userId], appId: auth.app.id, tokenId: auth.token.id },
  };
}
