import type { Context } from "hono";
import { findByUsername } from "../stores/users";
import { ApiError } from "./errors";
import type { AppEnv } from "./types";

/**
 * The user id a path's `{user_id}` names: an integer, `me` (needs a user token) or
 * `@username`. An unknown username is a 404.
 */
export async function resolveUserRef(c: Context<AppEnv>, ref: string): Promise<number> {
  if (ref === "me") {
    const user = c.var.auth?.user;
    if (!user) throw c.var.auth ? ApiError.forbidden("'me' needs a user token") : ApiError.unauthorized();
    return user.id;
  }
  if (ref.startsWith("@")) {
    const user = await findByUsername(c.var.db, ref.slice(1));
    if (!user) throw ApiError.notFound("no such user");
    return user.id;
  }
  return Number(ref);
}
