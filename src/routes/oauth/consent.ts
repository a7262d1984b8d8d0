import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { PUBLIC } from "../../auth/access";
import { randomToken, sha256Hex, verifyPassword } from "../../auth/crypto";
import { checkConsentFormToken, consentFormToken, issueToken } from "../../auth/oauth";
import { parseScopes } from "../../auth/scopes";
import { publish } from "../../events/publish";
import { tokenEvent } from "../../events/token-event";
import { readFields } from "../../http/body";
import { createRouter, defineRoute } from "../../http/route";
import { now } from "../../http/time";
import type { AppEnv } from "../../http/types";
import { getAppByClientId, type AppRecord } from "../../stores/apps";
import { saveCode } from "../../stores/oauth-codes";
import { findByUsername } from "../../stores/users";
import { viewContext } from "../../views/context";
import { consentPage, oauthErrorPage, type AuthorizationRequest } from "../../views/html/consent";
import { HTML_PAGE_HEADERS } from "../../views/html/page";

const CODE_TTL_SECONDS = 600;
const CSRF_COOKIE = "oauth_csrf";

const ConsentQuery = z.object({
  client_id: z.string().openapi({ description: "The app's `client_id`.", example: "c2Fk1yQ…" }),
  redirect_uri: z.string().openapi({
    description: "Where the browser goes afterwards: an absolute http(s) URL, on the origin of the app's registered URL when it has one.",
    example: "https://client.example.org/callback",
  }),
  response_type: z.enum(["code", "token"]).openapi({ description: "`code` for the authorization-code flow, `token` for the implicit flow." }),
  scope: z
    .string()
    .optional()
    .openapi({ description: "Scopes asked for, space- or comma-separated (`basic` is always granted).", example: "stream write_post" }),
  state: z.string().optional().openapi({ description: "Any value; it comes back unchanged with the redirect.", example: "af0ifjsldkj" }),
});
const ConsentForm = ConsentQuery.extend({
  username: z.string().optional().openapi({ description: "The user's username (not needed to deny)." }),
  password: z.string().optional().openapi({ description: "The user's password (not needed to deny)." }),
  decision: z
    .enum(["authorize", "deny"])
    .optional()
    .openapi({ description: "The button pressed (`authorize` when left out, as when Enter submits the form)." }),
  csrf: z
    .string()
    .optional()
    .openapi({ description: "The anti-forgery token the consent page put in the form (required: without it the page is shown again)." }),
});

const htmlResponse = (description: string) => ({ description, content: { "text/html": { schema: z.string() } } });

type Fields = Record<string, string | undefined>;

/** An HTML page with the security headers (no framing, nothing loaded from elsewhere). */
async function sendPage(c: Context<AppEnv>, body: Promise<string> | string, status: 200 | 400 | 403 | 404 | 415) {
  for (const [k, v] of Object.entries(HTML_PAGE_HEADERS)) c.header(k, v);
  return c.html(await body, status);
}

/** The redirect back to the app with an OAuth error (RFC 6749 §4.1.2.1; in the fragment for the implicit flow). */
function errorRedirect(c: Context<AppEnv>, redirect: URL, inFragment: boolean, error: string, description: string, state?: string) {
  const params = new URLSearchParams({ error, error_description: description, ...(state ? { state } : {}) });
  if (inFragment) return c.redirect(`${redirect.href.split("#")[0]}#${params}`, 302);
  for (const [k, v] of params) redirect.searchParams.set(k, v);
  return c.redirect(redirect.href, 302);
}

type Checked = { ok: true; app: AppRecord; redirect: URL; request: AuthorizationRequest; scopes: string[] } | { ok: false; response: Response };

/**
 * Checks an authorization request in RFC 6749's order: what cannot be sent back to the app (an
 * unknown app, a bad redirect URI) is a page for the person; anything else goes back to the app.
 */
async function checkRequest(c: Context<AppEnv>, f: Fields): Promise<Checked> {
  const fail = async (status: 400 | 404, title: string, message: string) => ({
    ok: false as const,
    response: await sendPage(c, oauthErrorPage(title, message), status),
  });
  if (!f.client_id)
    return fail(400, "This sign-in link is incomplete", "The link that brought you here does not say which app is asking (it has no client_id).");
  const app = await getAppByClientId(c.var.db, f.client_id);
  if (!app || app.deletedAt != null) return fail(404, "Unknown app", "The app that sent you here is not registered on this server, or it was removed.");
  let redirect: URL | undefined;
  try {
    redirect = new URL(f.redirect_uri ?? "");
  } catch {
    // Reported below.
  }
  if (!redirect || !/^https?:$/.test(redirect.protocol)) {
    return fail(
      400,
      "This sign-in link is broken",
      `${app.name} did not say where to send you back to (its redirect_uri must be a full http or https address).`,
    );
  }
  if (app.url && new URL(app.url).origin !== redirect.origin) {
    return fail(
      400,
      "This sign-in link is not safe",
      `${app.name} asked to send you to ${redirect.host}, which is not its own website. You were not signed in.`,
    );
  }
  const inFragment = f.response_type === "token";
  if (f.response_type !== "code" && f.response_type !== "token") {
    return { ok: false, response: errorRedirect(c, redirect, false, "unsupported_response_type", "response_type must be code or token", f.state) };
  }
  const { scopes, unknown } = parseScopes(f.scope);
  if (unknown.length) return { ok: false, response: errorRedirect(c, redirect, inFragment, "invalid_scope", `unknown scope '${unknown[0]}'`, f.state) };
  // The form carries the redirect URI exactly as the app sent it: the code is bound to that string.
  const request: AuthorizationRequest = {
    client_id: f.client_id,
    redirect_uri: f.redirect_uri!,
    response_type: f.response_type,
    scope: f.scope ?? "",
    state: f.state,
  };
  return { ok: true, app, redirect, request, scopes };
}

/** Renders the consent page with a fresh anti-forgery token (and the browser's cookie secret, made when missing). */
async function renderConsent(
  c: Context<AppEnv>,
  checked: Extract<Checked, { ok: true }>,
  status: 200 | 403,
  extra: { username?: string; error?: string } = {},
) {
  let secret = getCookie(c, CSRF_COOKIE);
  if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) {
    secret = randomToken();
    const secure = new URL(c.req.url).protocol === "https:";
    setCookie(c, CSRF_COOKIE, secret, { path: "/v1/oauth", httpOnly: true, sameSite: "Strict", secure, maxAge: 86400 });
  }
  const { app, request, scopes } = checked;
  const logo = app.logoUrl ?? `${viewContext(c).origin}/v1/static/default-logo.png`;
  // Only web addresses become links (a registered URL is any URL the admin API accepted).
  const website = /^https?:\/\//i.test(app.url) ? app.url : null;
  const csrf = await consentFormToken(secret, { ...request }, now(c));
  return sendPage(c, consentPage({ app: { name: app.name, url: website, logo }, request, scopes, csrf, ...extra }), status);
}

/** The form's fields: only form bodies, only string values (anything else is a page saying so). */
async function formFields(c: Context<AppEnv>): Promise<Fields | Response> {
  const type = (c.req.header("content-type") ?? "").toLowerCase();
  if (!type.startsWith("application/x-www-form-urlencoded") && !type.startsWith("multipart/form-data")) {
    return sendPage(
      c,
      oauthErrorPage("This page takes its own form only", "Send the sign-in form from the consent page (as application/x-www-form-urlencoded)."),
      415,
    );
  }
  const fields = await readFields(c);
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => typeof v === "string")) as Fields;
}

/** What a failed validation of the query or form becomes: the same checks, as pages or redirects. */
const asPage = (result: { success: boolean }, c: Context<AppEnv>) => (result.success ? undefined : invalidRequestPage(c));

async function invalidRequestPage(c: Context<AppEnv>): Promise<Response> {
  const fields = c.req.method === "GET" ? c.req.query() : await formFields(c);
  if (fields instanceof Response) return fields;
  const checked = await checkRequest(c, fields);
  return checked.ok ? sendPage(c, oauthErrorPage("This form is incomplete", "Please go back to the app and start signing in again."), 400) : checked.response;
}

export const consentRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/oauth/authenticate",
      tags: ["OAuth"],
      summary: "Sign-in and consent page of the authorization-code and implicit flows",
      description:
        "An HTML page for a person: the app's name, website and logo, each requested scope in plain words, a sign-in form, and " +
        "Authorize / Deny. Anyone may open it (apps send their users here). A request that cannot be sent back to the app " +
        "(no or unknown `client_id`, a missing or foreign `redirect_uri`) is an HTML error page; other errors go back to " +
        "`redirect_uri` as `error=invalid_scope` or `error=unsupported_response_type` (with `state`). The page cannot be framed " +
        "(`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`) and sets an HttpOnly cookie that keys the form's anti-forgery token.",
      request: { query: ConsentQuery },
      responses: {
        200: htmlResponse("The consent page"),
        302: { description: "Back to `redirect_uri` with `error` (unknown scope or response type)" },
        400: htmlResponse("Error page: the request cannot be sent back to the app (missing `client_id`, bad `redirect_uri`)"),
        404: htmlResponse("Error page: `client_id` names no app"),
      },
    }),
    async (c) => {
      const checked = await checkRequest(c, c.req.valid("query"));
      return (checked.ok ? await renderConsent(c, checked, 200) : checked.response) as never;
    },
    asPage,
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "post",
      path: "/oauth/authenticate",
      tags: ["OAuth"],
      summary: "Consent form submission: Authorize or Deny",
      description:
        "Sent by the consent page's form. **Authorize** with the right username and password redirects to `redirect_uri` with " +
        "`code` and `state` (authorization-code flow; the code works once, for 10 minutes) or with `#access_token=…&state=…` " +
        "(implicit flow); the issued token emits a `token` event to the app's streams. **Deny** redirects with " +
        "`error=access_denied`. A wrong username or password shows the page again with a message and the username kept; a form " +
        "that is not the page's own (missing or stale anti-forgery token or cookie) shows the page again with a 403.",
      request: { body: { content: { "application/x-www-form-urlencoded": { schema: ConsentForm } } } },
      responses: {
        200: htmlResponse("The consent page again: wrong username or password"),
        302: { description: "Redirect to `redirect_uri` with `code`, `#access_token`, or `error=access_denied`" },
        400: htmlResponse("Error page: the request cannot be sent back to the app"),
        403: htmlResponse("The consent page again: the form's anti-forgery token or cookie is missing or stale"),
        404: htmlResponse("Error page: `client_id` names no app"),
        415: htmlResponse("Error page: not a form body"),
      },
    }),
    async (c) => {
      const f = await formFields(c);
      if (f instanceof Response) return f as never;
      const checked = await checkRequest(c, f);
      if (!checked.ok) return checked.response as never;
      const { app, redirect, request, scopes } = checked;
      const inFragment = request.response_type === "token";
      const at = now(c);
      if (!(await checkConsentFormToken(getCookie(c, CSRF_COOKIE), { ...request }, f.csrf, at))) {
        const error = "For your safety this form was not accepted: it has expired or did not come from this page. Please sign in again.";
        return (await renderConsent(c, checked, 403, { username: f.username, error })) as never;
      }
      if (f.decision === "deny") return errorRedirect(c, redirect, inFragment, "access_denied", "the user denied the request", request.state) as never;
      const user = f.username ? await findByUsername(c.var.db, f.username) : undefined;
      if (!user || user.isDisabled || !(await verifyPassword(f.password ?? "", user.passwordHash))) {
        const error = "That username and password do not match an account. Check them and try again.";
        return (await renderConsent(c, checked, 200, { username: f.username, error })) as never;
      }
      if (inFragment) {
        const { accessToken, auth, seq } = await issueToken(c.var.db, app, user, scopes, at, (draft) => ({ ...tokenEvent(c, draft), timestamp: at }));
        publish(c, { ...tokenEvent(c, auth), seq });
        const frag = new URLSearchParams({ access_token: accessToken, token_type: "bearer", ...(request.state ? { state: request.state } : {}) });
        return c.redirect(`${redirect.href.split("#")[0]}#${frag}`, 302) as never;
      }
      const code = randomToken();
      await saveCode(c.var.db, {
        codeHash: await sha256Hex(code),
        appId: app.id,
        userId: user.id,
        scopes: scopes.join(" "),
        redirectUri: request.redirect_uri,
        expiresAt: at + CODE_TTL_SECONDS,
      });
      redirect.searchParams.set("code", code);
      if (request.state) redirect.searchParams.set("state", request.state);
      return c.redirect(redirect.href, 302) as never;
    },
    asPage,
  );
