import { ApiError } from "../http/errors";
import type { Auth } from "../http/types";
import type { Db } from "../db";
import { getAppByClientId, type AppRecord } from "../stores/apps";
import { insertToken } from "../stores/tokens";
import type { UserRecord } from "../stores/users";
import { randomToken, sha256Hex, timingSafeEqual } from "./crypto";

/**
 * An OAuth failure. Rendered (by the app's error handler) as RFC 6749 `error` and
 * `error_description` plus the usual `meta`, so either kind of client can read it.
 */
export class OAuthError extends ApiError {
  constructor(
    status: 400 | 401,
    readonly error: "invalid_request" | "invalid_client" | "invalid_grant" | "unsupported_grant_type" | "invalid_scope",
    readonly description: string,
  ) {
    super(status, description);
  }
}

/** Fields an error reply of the token endpoint carries besides `meta`. */
export function oauthErrorFields(err: unknown, status: number, message: string) {
  if (err instanceof OAuthError) return { error: err.error, error_description: err.description };
  return { error: status === 401 ? "invalid_client" : "invalid_request", error_description: message.replace(/^[^:]+: /, "") };
}

/** The app named by `client_id` if `secret` matches the stored hash of the chosen secret. */
export async function authenticateClient(
  db: Db,
  clientId: string | undefined,
  secret: string | undefined,
  which: "clientSecretHash" | "passwordGrantSecretHash",
  field: string,
): Promise<AppRecord> {
  if (!clientId) throw new OAuthError(400, "invalid_request", "'client_id' is required");
  if (!secret) throw new OAuthError(400, "invalid_request", `'${field}' is required`);
  const app = await getAppByClientId(db, clientId);
  if (!app || app.deletedAt != null || !timingSafeEqual(await sha256Hex(secret), app[which])) {
    throw new OAuthError(401, "invalid_client", `unknown 'client_id' or wrong '${field}'`);
  }
  return app;
}

/** Issues a token; returns the secret (shown once) and the caller identity it stands for. */
export async function issueToken(db: Db, app: AppRecord, user: UserRecord | null, scopes: string[], at: number) {
  const accessToken = randomToken();
  const token = await insertToken(db, { tokenHash: await sha256Hex(accessToken), appId: app.id, userId: user?.id ?? null, scopes, createdAt: at });
  const auth: Auth = { kind: user ? "user" : "app", token, scopes, app, user };
  return { accessToken, auth };
}
