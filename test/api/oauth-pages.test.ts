import { describe, expect, it } from "vitest";
import { call, makeApp, makeUser } from "../support/client";

const REDIRECT = "https://client.example.org/cb";

function consentQuery(app: { client_id: string }, extra: Record<string, string> = {}) {
  return new URLSearchParams({ client_id: app.client_id, redirect_uri: REDIRECT, response_type: "code", scope: "stream write_post", state: "s1", ...extra });
}

/** Opens the consent page; returns it with its form's anti-forgery token and the cookie that keys it. */
async function openConsent(q: URLSearchParams) {
  const page = await call("GET", `/oauth/authenticate?${q}`);
  expect(page.status).toBe(200);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1];
  const cookie = page.headers.get("set-cookie")!.split(";")[0];
  return { page, csrf, cookie };
}

const submit = (q: URLSearchParams, fields: Record<string, string>, cookie?: string) =>
  call("POST", "/oauth/authenticate", { form: { ...Object.fromEntries(q), ...fields }, headers: cookie ? { Cookie: cookie } : {} });

const location = (res: { headers: Headers }) => new URL(res.headers.get("location")!);

describe("OAuth consent page", () => {
  it("shows the app's name, website and logo, each scope in plain words, Authorize and Deny; it cannot be framed", async () => {
    const app = await makeApp({ name: "Photo <Box>", url: "https://client.example.org" });
    const { page } = await openConsent(consentQuery(app));
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.text).toContain("Photo &lt;Box&gt; wants to use your account");
    expect(page.text).toContain('href="https://client.example.org"');
    expect(page.text).toContain('/v1/static/default-logo.png"');
    expect(page.text).toContain("Read your timelines and receive your live updates");
    expect(page.text).toContain("Write, edit, repost, bookmark and delete posts for you");
    expect(page.text).not.toContain("write_post<");
    expect(page.text).toMatch(/value="authorize"[^>]*>Authorize</);
    expect(page.text).toMatch(/value="deny"[^>]*>Deny</);
    expect(page.text).toContain("box-sizing:border-box");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("set-cookie")).toMatch(/HttpOnly/i);
    expect(page.headers.get("set-cookie")).toMatch(/SameSite=Strict/i);
  });

  it("Deny goes back to the app with error=access_denied and state, without a password", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const q = consentQuery(app);
    const { csrf, cookie } = await openConsent(q);
    const res = await submit(q, { decision: "deny", csrf }, cookie);
    expect(res.status).toBe(302);
    const to = location(res);
    expect(to.origin + to.pathname).toBe(REDIRECT);
    expect(to.searchParams.get("error")).toBe("access_denied");
    expect(to.searchParams.get("state")).toBe("s1");
    expect(to.searchParams.get("code")).toBeNull();
  });

  it("Deny in the implicit flow puts the error in the fragment", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const q = consentQuery(app, { response_type: "token" });
    const { csrf, cookie } = await openConsent(q);
    const res = await submit(q, { decision: "deny", csrf }, cookie);
    const fragment = new URLSearchParams(location(res).hash.slice(1));
    expect(fragment.get("error")).toBe("access_denied");
    expect(fragment.get("state")).toBe("s1");
  });

  it("a wrong password shows the form again with a message and the username kept", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const user = await makeUser();
    const q = consentQuery(app);
    const { csrf, cookie } = await openConsent(q);
    const res = await submit(q, { decision: "authorize", username: user.username, password: "not the password", csrf }, cookie);
    expect(res.status).toBe(200);
    expect(res.text).toContain('role="alert"');
    expect(res.text).toContain("username and password do not match");
    expect(res.text).toContain(`name="username" value="${user.username}"`);
    expect(res.text).not.toContain("not the password");
  });

  it("refuses a form without the page's anti-forgery token or cookie (403, the page again) and issues nothing", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const user = await makeUser();
    const q = consentQuery(app);
    const { csrf, cookie } = await openConsent(q);
    const credentials = { decision: "authorize", username: user.username, password: user.password };
    for (const res of [
      await submit(q, credentials, cookie),
      await submit(q, { ...credentials, csrf }),
      await submit(q, { ...credentials, csrf }, "oauth_csrf=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
      // A token issued for another request (here another state) does not fit this one.
      await submit(consentQuery(app, { state: "other" }), { ...credentials, csrf }, cookie),
    ]) {
      expect(res.status).toBe(403);
      expect(res.headers.get("location")).toBeNull();
      expect(res.text).toContain("was not accepted");
    }
    const ok = await submit(q, { ...credentials, csrf }, cookie);
    expect(ok.status).toBe(302);
    expect(location(ok).searchParams.get("code")).toBeTruthy();
  });

  it("runs the implicit flow: the token arrives in the fragment and works", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const user = await makeUser();
    const q = consentQuery(app, { response_type: "token", scope: "stream" });
    const { csrf, cookie } = await openConsent(q);
    const res = await submit(q, { username: user.username, password: user.password, csrf }, cookie);
    expect(res.status).toBe(302);
    const fragment = new URLSearchParams(location(res).hash.slice(1));
    expect(fragment.get("state")).toBe("s1");
    const me = await call("GET", "/token", { token: fragment.get("access_token")! });
    expect(me.status).toBe(200);
    expect(me.body.data.user.id).toBe(user.id);
    expect(me.body.data.scopes).toEqual(["basic", "stream"]);
  });

  it("sends an unknown scope or response type back to the app, as RFC 6749 says", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const badScope = await call("GET", `/oauth/authenticate?${consentQuery(app, { scope: "stream everything" })}`);
    expect(badScope.status).toBe(302);
    expect(location(badScope).searchParams.get("error")).toBe("invalid_scope");
    expect(location(badScope).searchParams.get("state")).toBe("s1");
    const badType = await call("GET", `/oauth/authenticate?${consentQuery(app, { response_type: "id_token" })}`);
    expect(badType.status).toBe(302);
    expect(location(badType).searchParams.get("error")).toBe("unsupported_response_type");
  });

  it("answers requests it cannot send back with pages for a person, not validator wording", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const cases = [
      { q: "", status: 400, says: "does not say which app" },
      { q: new URLSearchParams({ client_id: "no-such-app", redirect_uri: REDIRECT, response_type: "code" }).toString(), status: 404, says: "not registered" },
      { q: new URLSearchParams({ client_id: app.client_id, response_type: "code" }).toString(), status: 400, says: "did not say where to send you back" },
      {
        q: new URLSearchParams({ client_id: app.client_id, redirect_uri: "/cb", response_type: "code" }).toString(),
        status: 400,
        says: "full http or https address",
      },
      {
        q: new URLSearchParams({ client_id: app.client_id, redirect_uri: "https://evil.example/cb", response_type: "code" }).toString(),
        status: 400,
        says: "not its own website",
      },
    ];
    for (const { q, status, says } of cases) {
      const res = await call("GET", `/oauth/authenticate?${q}`);
      expect(res.status, q).toBe(status);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.text).toContain(says);
      expect(res.text).not.toMatch(/invalid input|expected string|<form/i);
    }
  });

  it("answers a JSON body (even one nested 60,000 deep, just under the body limit) with a 415 page, not a 500", async () => {
    const deep = "[".repeat(60_000) + "]".repeat(60_000);
    const app = await makeApp({ url: "https://client.example.org" });
    for (const body of [`{"client_id":${deep}}`, JSON.stringify({ ...Object.fromEntries(consentQuery(app)), username: "a", password: "b" })]) {
      const res = await call("POST", "/oauth/authenticate", { body, headers: { "Content-Type": "application/json" } });
      expect(res.status).toBe(415);
      expect(res.text).toContain("form");
    }
  });
});
