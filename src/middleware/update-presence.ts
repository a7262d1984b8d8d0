import type { Context, MiddlewareHandler } from "hono";
import { hasScope } from "../auth/scopes";
import { addMeta } from "../http/envelope";
import { ApiError } from "../http/errors";
import type { AppEnv } from "../http/types";
import { now } from "../http/time";
import { parseStatus, setUserPresence } from "../services/presence";
import { parseExpiration } from "../services/presence-expiry";
import type { PresenceView } from "../views/presence";

/** What `update_presence` did on a request: the updated Presence object, or why it failed. */
export type AppliedPresence = { ok: true; presence: PresenceView } | { ok: false; error: ApiError | Error };

const applied = new WeakMap<Request, AppliedPresence>();

/** The outcome of `update_presence` on this request, if the parameter was given. */
export function appliedPresence(c: Context): AppliedPresence | undefined {
  return applied.get(c.req.raw);
}

async function apply(c: Context<AppEnv>, raw: string): Promise<AppliedPresence> {
  const auth = c.var.auth;
  if (!auth) return { ok: false, error: ApiError.unauthorized("'update_presence' needs a user token") };
  if (!auth.user) return { ok: false, error: ApiError.forbidden("'update_presence' needs a user token") };
  if (!hasScope(auth.scopes, "presence")) return { ok: false, error: ApiError.forbidden("'update_presence' requires the 'presence' scope") };
  try {
    const at = now(c);
    const expiresAt = parseExpiration(c.req.query("update_presence_expiration"), "update_presence_expiration", at);
    // An expiration already past takes the presence offline, as on PUT /users/me/presence.
    const status = expiresAt !== undefined && expiresAt <= at ? null : parseStatus(raw, "update_presence");
    return { ok: true, presence: await setUserPresence(c, auth.user, status, status === null ? undefined : expiresAt) };
  } catch (e) {
    if (!(e instanceof ApiError)) console.error(JSON.stringify({ error: "update_presence failed", path: c.req.path, detail: String(e) }));
    return { ok: false, error: e as Error };
  }
}

/**
 * `update_presence` on any call (api.md convention 6, decisions §7): sets the caller's
 * presence before the endpoint runs (so e.g. GET /presence already lists the caller), until
 * `update_presence_expiration` (unix seconds, at most 7 days ahead) when given, and
 * reports `meta.updated_presence`: true when set, false when it could not be (no user token,
 * no `presence` scope, text too long, storage error). The call itself never fails because of
 * it; on PUT /users/me/presence it replaces the body and the update happens once (the route
 * reads the outcome with `appliedPresence`). Error envelopes carry the flag too (src/app.ts).
 */
export const updatePresence: MiddlewareHandler<AppEnv> = async (c, next) => {
  const raw = c.req.query("update_presence");
  if (raw === undefined) return next();
  const result = await apply(c, raw);
  applied.set(c.req.raw, result);
  addMeta(c, { updated_presence: result.ok });
  // Success and error envelopes both take the flag from addMeta.
  await next();
};
