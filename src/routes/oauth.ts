import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { html } from "hono/html";
import { PUBLIC } from "../auth/access";
import { randomToken, sha256Hex, verifyPassword } from "../auth/crypto";
import { authenticateClient, issueToken, OAuthError } from "../auth/oauth";
import { publish } from "../events/publish";
import { tokenEvent } from "../events/token-event";
import { parseScopes } from "../auth/scopes";
import { readFields } from "../http/body";
import { ApiError, describeIssues } from "../http/errors";
import { createRouter, defineRoute } from "../http/route";
import { now } from "../http/time";
import type { AppEnv } from "../http/types";
import { getAppByClientId, type AppRecord } from "../stores/apps";
import { consumeCode, saveCode } from "../stores/oauth-codes";
import { findByUsername, getUser } from "../stores/users";
import { viewContext } from "../views/context";
import { renderToken } from "../views/token";

const CODE_TTL_SECONDS = 600;

const TokenRequest = z
  .object({
    grant_type: z.enum(["client_credentials", "password", "authorization_code"]),
    client_id: z.string(),
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
  .object({ access_token: z.string(), token: z.any(), user_id: z.string().optional(), username: z.string().optional() })
  .openapi("OAuthTokenReply");

const str = (v: unknown) => (typeof v === "string" ? v : undefined);

function requestedScopes(scope: string | undefined): string[] {
  const { scopes, unknown } = parseScopes(scope);
  if (unknown.length) throw new OAuthError(400, "invalid_scope", `'scope' has unknown scope '${unknown[0]}'`);
  return scopes;
}

/** A redirect URI must be absolute http(s) and, when the app registered a URL, on its origin. */
function checkRedirect(app: AppRecord, uri: string | undefined): URL {
  let url: URL;
  try {
    url = new URL(uri ?? "");
  } catch {
    throw ApiError.badRequest("'redirect_uri' must be an absolute URL");
  }
  if (!/^https?:$/.test(url.protocol)) throw ApiError.badRequest("'redirect_uri' must be http or https");
  if (app.url && new URL(app.url).origin !== url.origin) throw ApiError.badRequest("'redirect_uri' must be on the app's own origin");
  return url;
}

async function tokenReply(c: Context<AppEnv>, fields: Record<string, unknown>) {
  const db = c.var.db;
  const grant = str(fields.grant_type);
  const at = now(c);
  if (grant === "client_credentials") {
    const app = await authenticateClient(db, str(fields.client_id), str(fields.client_secret), "clientSecretHash", "client_secret");
    const { accessToken, auth } = await issueToken(db, app, null, ["basic"], at);
    return { access_token: accessToken, token: renderToken(auth, viewContext(c)) };
  }
  if (grant === "password" || grant === "authorization_code") {
    let app: AppRecord;
    let userId: number;
    let scopes: string[];
    if (grant === "password") {
      app = await authenticateClient(db, str(fields.client_id), str(fields.password_grant_secret), "passwordGrantSecretHash", "password_grant_secret");
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
      app = await authenticateClient(db, str(fields.client_id), str(fields.client_secret), "clientSecretHash", "client_secret");
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
    const { accessToken, auth } = await issueToken(db, app, user, scopes, at);
    publish(c, tokenEvent(c, auth));
    return { access_token: accessToken, token: renderToken(auth, { ...viewContext(c), viewerId: user.id }), user_id: String(user.id), username: user.username };
  }
  if (grant === undefined) throw new OAuthError(400, "invalid_request", "'grant_type' is required");
  throw new OAuthError(400, "unsupported_grant_type", `'grant_type' '${grant}' is not one of client_credentials, password, authorization_code`);
}

const consentPage = (app: AppRecord, q: Record<string, string>, scopes: string[], error?: string) => html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Authorize ${app.name}</title>
<style>body{font:16px system-ui;max-width:26rem;margin:3rem auto;padding:0 1rem}label,input,button{display:block;width:100%;margin:.4rem 0}input,button{padding:.5rem;font:inherit}.err{color:#b00}</style></head>
<body><h1>Authorize ${app.name}</h1><p>${app.name} asks for: ${scopes.join(", ")}</p>
${error ? html`<p class="err">${error}</p>` : ""}
<form method="post">${Object.entries(q).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Authorize</button></form></body></html>`;

const ConsentQuery = z.object({
  client_id: z.string(),
  redirect_uri: z.string(),
  scope: z.string().optional(),
  response_type: z.enum(["code", "token"]),
  state: z.string().optional(),
});

async function consentContext(c: Context<AppEnv>, q: Record<string, string | undefined>) {
  const app = q.client_id ? await getAppByClientId(c.var.db, q.client_id) : undefined;
  if (!app || app.deletedAt != null) throw ApiError.notFound("'client_id' names no app");
  const redirect = checkRedirect(app, q.redirect_uri);
  const { scopes, unknown } = parseScopes(q.scope);
  if (unknown.length) throw ApiError.badRequest(`'scope' has unknown scope '${unknown[0]}'`);
  if (q.response_type !== "code" && q.response_type !== "token") throw ApiError.badRequest("'response_type' must be code or token");
  return { app, redirect, scopes, responseType: q.response_type };
}

export const oauthRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "post",
      path: "/oauth/access_token",
      tags: ["OAuth"],
      summary: "Issue a token (client_credentials, password or authorization_code grant)",
      description: "Form-urlencoded, multipart or JSON body. The reply is plain OAuth JSON, not the envelope.",
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
        200: { description: "Token issued", content: { "application/json": { schema: OAuthReply } } },
        400: { description: "OAuth error (invalid_request, invalid_grant, unsupported_grant_type, invalid_scope)" },
        401: { description: "OAuth error invalid_client" },
      },
    }),
    async (c) => c.json(await tokenReply(c, await readFields(c)), 200),
    (result) => {
      if (result.success) return undefined;
      const grantIssue = result.error.issues.find((i) => i.path[0] === "grant_type" && i.code === "invalid_value");
      throw new OAuthError(400, grantIssue ? "unsupported_grant_type" : "invalid_request", describeIssues(result.error.issues));
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/oauth/authenticate",
      tags: ["OAuth"],
      summary: "Consent page of the authorization_code and implicit flows",
      request: { query: ConsentQuery },
      responses: { 200: { description: "HTML consent page", content: { "text/html": { schema: z.string() } } } },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const { app, scopes } = await consentContext(c, q);
      return c.html(consentPage(app, Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined)) as Record<string, string>, scopes));
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "post",
      path: "/oauth/authenticate",
      tags: ["OAuth"],
      summary: "Consent form submission: redirects with `code` (or `#access_token` for response_type=token)",
      request: { body: { content: { "application/x-www-form-urlencoded": { schema: ConsentQuery.extend({ username: z.string(), password: z.string() }) } } } },
      responses: { 302: { description: "Redirect to redirect_uri" }, 200: { description: "Consent page again, with the error" } },
    }),
    async (c) => {
      const f = Object.fromEntries(Object.entries(await readFields(c)).map(([k, v]) => [k, String(v)]));
      const { app, redirect, scopes, responseType } = await consentContext(c, f);
      const user = await findByUsername(c.var.db, f.username ?? "");
      if (!user || user.isDisabled || !(await verifyPassword(f.password ?? "", user.passwordHash))) {
        const { username: _u, password: _p, ...q } = f;
        return c.html(consentPage(app, q, scopes, "Wrong username or password."), 200);
      }
      const at = now(c);
      if (responseType === "token") {
        const { accessToken, auth } = await issueToken(c.var.db, app, user, scopes, at);
        publish(c, tokenEvent(c, auth));
        const frag = new URLSearchParams({ access_token: accessToken, ...(f.state ? { state: f.state } : {}) });
        return c.redirect(`${redirect.href.split("#")[0]}#${frag}`, 302);
      }
      const code = randomToken();
      await saveCode(c.var.db, { codeHash: await sha256Hex(code), appId: app.id, userId: user.id, scopes: scopes.join(" "), redirectUri: f.redirect_uri, expiresAt: at + CODE_TTL_SECONDS });
      redirect.searchParams.set("code", code);
      if (f.state) redirect.searchParams.set("state", f.state);
      return c.redirect(redirect.href, 302);
    },
  );
