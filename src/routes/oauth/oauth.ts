import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { PUBLIC } from "../../auth/access";
import { sha256Hex, verifyPassword } from "../../auth/crypto";
import { authenticateClient, clientCredentials, issueToken, OAuthError } from "../../auth/oauth";
import { publish } from "../../events/publish";
import { tokenEvent } from "../../events/token-event";
import { parseScopes } from "../../auth/scopes";
import { readFields } from "../../http/body";
import { describeIssues } from "../../http/errors";
import { exampleToken } from "../../http/examples";
import { createRouter, defineRoute } from "../../http/route";
import { now } from "../../http/time";
import type { AppEnv } from "../../http/types";
import type { AppRecord } from "../../stores/apps";
import { consentRoutes } from "./consent";
import { consumeCode } from "../../stores/oauth-codes";
import { findByUsername, getUser } from "../../stores/users";
import { viewContext } from "../../views/context";
import { renderToken } from "../../views/token";

const TokenRequest = z
  .object({
    grant_type: z.enum(["client_credentials", "password", "authorization_code"]),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    password_grant_secret: z.string().optional(),
    username: z.string().optional(),
    password: z.string().optional(),
    scope: z.string().optional(),
    code: z.string().optional(),
    redirect_uri: z.string().optional(),
  })
  .openapi("TokenRequest");

const OAuthReply = z
  .object({
    access_token: z.string(),
    token_type: z.literal("bearer"),
    scope: z.string().openapi({ description: "The granted scopes, space-separated (RFC 6749 §5.1)" }),
    token: z.any(),
    user_id: z.string().optional(),
    username: z.string().optional(),
  })
  .openapi("OAuthTokenReply");

const OAuthErrorReply = z
  .object({ error: z.string(), error_description: z.string(), meta: z.object({ code: z.number(), error_message: z.string() }) })
  .openapi("OAuthError");

const str = (v: unknown) => (typeof v === "string" ? v : undefined);

function requestedScopes(scope: string | undefined): string[] {
  const { scopes, unknown } = parseScopes(scope);
  if (unknown.length) throw new OAuthError(400, "invalid_scope", `'scope' has unknown scope '${unknown[0]}'`);
  return scopes;
}

/**
 * The app whose id and secret came in the Basic header or the body. The Basic password is the
 * secret the grant uses: `client_secret`, or `password_grant_secret` for the password grant.
 */
function authenticate(c: Context<AppEnv>, fields: Record<string, unknown>, secretField: "client_secret" | "password_grant_secret") {
  const { clientId, secret } = clientCredentials(c.req.header("authorization"), fields, secretField);
  const hash = secretField === "client_secret" ? "clientSecretHash" : "passwordGrantSecretHash";
  return authenticateClient(c.var.db, clientId, secret, hash, secretField);
}

async function tokenReply(c: Context<AppEnv>, fields: Record<string, unknown>) {
  const db = c.var.db;
  const grant = str(fields.grant_type);
  const at = now(c);
  if (grant === "client_credentials") {
    const app = await authenticate(c, fields, "client_secret");
    const { accessToken, auth } = await issueToken(db, app, null, ["basic"], at);
    return { access_token: accessToken, token_type: "bearer" as const, scope: "basic", token: renderToken(auth, viewContext(c)) };
  }
  if (grant === "password" || grant === "authorization_code") {
    let app: AppRecord;
    let userId: number;
    let scopes: string[];
    if (grant === "password") {
      app = await authenticate(c, fields, "password_grant_secret");
      const username = str(fields.username);
      const password = str(fields.password);
      if (!username) throw new OAuthError(400, "invalid_request", "'username' is required");
      if (!password) throw new OAuthError(400, "invalid_request", "'password' is required");
      scopes = requestedScopes(str(fields.scope));
      const user = await findByUsername(db, username);
      if (!user || user.isDisabled || !(await verifyPassword(password, user.passwordHash))) {
        throw new OAuthError(400, "invalid_grant", "wrong 'username' or 'password'");
      }
      userId = user.id;
    } else {
      app = await authenticate(c, fields, "client_secret");
      const code = str(fields.code);
      if (!code) throw new OAuthError(400, "invalid_request", "'code' is required");
      const grantRow = await consumeCode(db, await sha256Hex(code), at);
      if (!grantRow || grantRow.appId !== app.id || grantRow.redirectUri !== str(fields.redirect_uri)) {
        throw new OAuthError(400, "invalid_grant", "'code' is unknown, expired, used or issued for another 'redirect_uri'");
      }
      userId = grantRow.userId;
      scopes = grantRow.scopes.split(" ");
    }
    const user = await getUser(db, userId, userId);
    if (!user || user.isDisabled) throw new OAuthError(400, "invalid_grant", "the user no longer exists");
    const { accessToken, auth, seq } = await issueToken(db, app, user, scopes, at, (draft) => ({ ...tokenEvent(c, draft), timestamp: at }));
    publish(c, { ...tokenEvent(c, auth), seq });
    return {
      access_token: accessToken,
      token_type: "bearer" as const,
      scope: scopes.join(" "),
      token: renderToken(auth, { ...viewContext(c), viewerId: user.id }),
      user_id: String(user.id),
      username: user.username,
    };
  }
  if (grant === undefined) throw new OAuthError(400, "invalid_request", "'grant_type' is required");
  throw new OAuthError(400, "unsupported_grant_type", `'grant_type' '${grant}' is not one of client_credentials, password, authorization_code`);
}

export const oauthRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "post",
      path: "/oauth/access_token",
      tags: ["OAuth"],
      summary: "Issue a token (client_credentials, password or authorization_code grant)",
      description:
        "The token endpoint of OAuth 2: `client_credentials` (an app token, with `client_secret`), `password` (a user token, with " +
        "the app's `password_grant_secret`, `username`, `password` and `scope`) or `authorization_code` (a user token for the code the " +
        "consent page gave, with `client_secret` and the same `redirect_uri`). Form-urlencoded, multipart or JSON body; anyone may call " +
        "it. The app's `client_id` and secret go in the body or, as RFC 6749 §2.3.1 prefers, in `Authorization: Basic " +
        "base64(client_id:secret)` (each form-urlencoded; the secret is the one the grant uses). The reply is plain OAuth JSON, not the envelope; errors carry OAuth's `error` and " +
        "`error_description` plus `meta`. A user token emits a `token` event to the app's streams.",
      request: {
        body: {
          content: {
            "application/x-www-form-urlencoded": { schema: TokenRequest },
            "multipart/form-data": { schema: TokenRequest },
            "application/json": { schema: TokenRequest },
          },
        },
      },
      responses: {
        200: {
          description: "Token issued",
          content: {
            "application/json": {
              schema: OAuthReply,
              example: {
                access_token: "example-access-token",
                token_type: "bearer",
                scope: exampleToken.scopes.join(" "),
                token: exampleToken,
                user_id: "1",
                username: "ada",
              },
            },
          },
        },
        400: {
          description: "OAuth error (invalid_request, invalid_grant, unsupported_grant_type, invalid_scope)",
          content: { "application/json": { schema: OAuthErrorReply } },
        },
        401: {
          description: "OAuth error invalid_client",
          headers: { "WWW-Authenticate": { description: '`Basic realm="api"`', schema: { type: "string" } } },
          content: { "application/json": { schema: OAuthErrorReply } },
        },
      },
    }),
    // Tokens are never cached (RFC 6749 §5.1).
    async (c) => c.json(await tokenReply(c, await readFields(c)), 200, { "Cache-Control": "no-store" }),
    (result) => {
      if (result.success) return undefined;
      const grantIssue = result.error.issues.find((i) => i.path[0] === "grant_type" && i.code === "invalid_value");
      throw new OAuthError(400, grantIssue ? "unsupported_grant_type" : "invalid_request", describeIssues(result.error.issues));
    },
  )
  // The sign-in and consent page of the browser flows (src/routes/oauth/consent.ts).
  .route("/", consentRoutes);
