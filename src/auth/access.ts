import type { MiddlewareHandler } from "hono";
import type { Scope } from "../config";
import { ApiError } from "../http/errors";
import type { AppEnv } from "../http/types";
import { timingSafeEqual } from "./crypto";
import { hasScope } from "./scopes";

/** Who may call a route (decisions §3): declared once per route, enforced here. */
export type Access = { token: "none" | "admin"; scope?: never } | { token: "user" | "app" | "any"; scope?: Scope };

export const PUBLIC: Access = { token: "none" };
export const ANY_TOKEN: Access = { token: "any" };
export const APP_TOKEN: Access = { token: "app" };
/** The bootstrap API: `Authorization: Bearer <ADMIN_TOKEN>`. */
export const ADMIN: Access = { token: "admin" };
export const userToken = (scope?: Scope): Access => ({ token: "user", scope });

/** Middleware enforcing an Access rule: 401 without a token, 403 for the wrong kind or scope. */
export function requireAccess(rule: Access): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (rule.token === "admin") {
      const given = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
      if (!given) throw ApiError.unauthorized("the admin API needs 'Authorization: Bearer <ADMIN_TOKEN>'");
      if (!c.env.ADMIN_TOKEN || !timingSafeEqual(given, c.env.ADMIN_TOKEN)) throw ApiError.forbidden("wrong admin token");
    } else if (rule.token !== "none") {
      const auth = c.var.auth;
      if (!auth) throw ApiError.unauthorized();
      if (rule.token === "user" && auth.kind !== "user") throw ApiError.forbidden("this endpoint requires a user token");
      if (rule.token === "app" && auth.kind !== "app") throw ApiError.forbidden("this endpoint requires an app token");
      if (rule.scope && !hasScope(auth.scopes, rule.scope)) {
        throw ApiError.forbidden(`this endpoint requires the '${rule.scope}' scope`);
      }
    }
    await next();
  };
}

/** The authenticated user of a route declared with `userToken()`. */
export function currentUser(c: { var: AppEnv["Variables"] }) {
  const user = c.var.auth?.user;
  if (!user) throw ApiError.unauthorized();
  return user;
}
