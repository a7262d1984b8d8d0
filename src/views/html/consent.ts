import { html } from "hono/html";
import { scopeText } from "../../auth/oauth";
import { page } from "./page";

/** The parameters of an authorization request that the form carries along (RFC 6749 §4.1.1, §4.2.1). */
export interface AuthorizationRequest {
  client_id: string;
  redirect_uri: string;
  response_type: "code" | "token";
  scope: string;
  state?: string;
}

export interface ConsentView {
  app: { name: string; url: string | null; logo: string };
  request: AuthorizationRequest;
  /** Granted scopes (`basic` first), explained in plain words. */
  scopes: string[];
  /** The form's anti-forgery token (src/auth/oauth.ts `consentFormToken`). */
  csrf: string;
  username?: string;
  error?: string;
}

/**
 * The sign-in and consent page of the authorization-code and implicit flows: who is asking, what
 * they may do, where the browser goes next, and Authorize / Deny. Deny needs no password.
 */
export function consentPage(v: ConsentView) {
  const returnTo = new URL(v.request.redirect_uri).host;
  const { app } = v;
  return page(
    `Authorize ${app.name}`,
    html`<div class="card">
<div class="app"><img src="${app.logo}" alt="" width="56" height="56">
<div><h1>${app.name} wants to use your account</h1>
${app.url ? html`<div class="muted">Website: <a href="${app.url}" rel="noopener noreferrer">${app.url}</a></div>` : ""}</div></div>
${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ""}
<p>If you allow it, ${app.name} will be able to:</p>
<ul class="scopes">${v.scopes.map((s) => html`<li>${scopeText(s)}</li>`)}</ul>
<form method="post" action="/v1/oauth/authenticate">
${Object.entries(v.request).map(([k, val]) => (val === undefined ? "" : html`<input type="hidden" name="${k}" value="${val}">`))}
<input type="hidden" name="csrf" value="${v.csrf}">
<label for="username">Username</label>
<input type="text" id="username" name="username" value="${v.username ?? ""}" autocomplete="username" autocapitalize="none" spellcheck="false" required${v.username ? "" : " autofocus"}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${v.username ? " autofocus" : ""}>
<div class="buttons">
<button type="submit" class="primary" name="decision" value="authorize">Authorize</button>
<button type="submit" class="secondary" name="decision" value="deny" formnovalidate>Deny</button>
</div>
</form>
<p class="muted">Either way you will be sent back to <strong>${returnTo}</strong>.</p>
</div>`,
  );
}

/** A page for an authorization request that cannot be sent back to the app (bad client or redirect URI). */
export function oauthErrorPage(title: string, message: string) {
  return page(
    title,
    html`<div class="card"><h1>${title}</h1><p role="alert">${message}</p>
<p class="muted">If you came here from an app, go back to it and try again, or tell the app's developer what this page says.</p></div>`,
  );
}
