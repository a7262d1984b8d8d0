// The OAuth endpoints driven by a standard client library (oauth4webapi), as an app would:
// client authentication is HTTP Basic (client_secret_basic, the library's usual default).
import { SELF } from "cloudflare:test";
import * as oauth from "oauth4webapi";
import { describe, expect, it } from "vitest";
import { BASE, call, makeApp, makeUser } from "../support/client";

const REDIRECT = "https://client.example.org/cb";
const as: oauth.AuthorizationServer = {
  issuer: "http://api.test",
  authorization_endpoint: `${BASE}/oauth/authenticate`,
  token_endpoint: `${BASE}/oauth/access_token`,
};
// The library's requests go to the Worker under test; its base URL is plain http.
const options = {
  [oauth.customFetch]: (url: string, init: oauth.CustomFetchOptions<string, unknown>) => SELF.fetch(url, init as RequestInit),
  [oauth.allowInsecureRequests]: true,
};

/** What GET /token says about an access token. */
const whoIs = async (accessToken: string) => (await call("GET", "/token", { token: accessToken })).body;

const basic = (id: string, secret: string) => `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`;

describe("OAuth through a standard client library (oauth4webapi, client_secret_basic)", () => {
  it("runs the authorization-code grant: consent page, callback, code exchanged with Basic client authentication", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const user = await makeUser();
    const client: oauth.Client = { client_id: app.client_id };
    const state = oauth.generateRandomState();
    const authorize = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ client_id: app.client_id, redirect_uri: REDIRECT, response_type: "code", scope: "stream write_post", state })) {
      authorize.searchParams.set(k, v);
    }

    // The person signs in and authorizes on the consent page (test/api/oauth-pages.test.ts drives it the same way).
    const page = await call("GET", authorize.href);
    expect(page.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1];
    const cookie = page.headers.get("set-cookie")!.split(";")[0];
    const form = { ...Object.fromEntries(authorize.searchParams), decision: "authorize", username: user.username, password: user.password, csrf };
    const back = await call("POST", "/oauth/authenticate", { form, headers: { Cookie: cookie } });
    expect(back.status).toBe(302);

    const params = oauth.validateAuthResponse(as, client, new URL(back.headers.get("location")!), state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret), params, REDIRECT, oauth.nopkce, options);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.scope).toBe("basic stream write_post");
    const me = await whoIs(tokens.access_token);
    expect(me.data.user.id).toBe(user.id);
    expect(me.data.scopes).toEqual(["basic", "stream", "write_post"]);

    // The code is spent: the library reports the server's OAuth error.
    const again = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret), params, REDIRECT, oauth.nopkce, options);
    const spent = await oauth.processAuthorizationCodeResponse(as, client, again).catch((e: unknown) => e);
    expect(spent).toBeInstanceOf(oauth.ResponseBodyError);
    expect((spent as oauth.ResponseBodyError).error).toBe("invalid_grant");
  });

  it("runs the password grant with the password-grant secret as the Basic password", async () => {
    const app = await makeApp();
    const user = await makeUser();
    const client: oauth.Client = { client_id: app.client_id };
    const grant = new URLSearchParams({ username: user.username, password: user.password, scope: "stream" });
    const response = await oauth.genericTokenEndpointRequest(as, client, oauth.ClientSecretBasic(app.password_grant_secret), "password", grant, options);
    const tokens = await oauth.processGenericTokenEndpointResponse(as, client, response);
    expect(tokens).toMatchObject({ token_type: "bearer", scope: "basic stream", user_id: user.id, username: user.username });
    expect((await whoIs(tokens.access_token)).data.user.id).toBe(user.id);

    // A wrong password is the user's failure, not the client's: 400 invalid_grant.
    const wrong = new URLSearchParams({ username: user.username, password: "not the password" });
    const refused = await oauth
      .processGenericTokenEndpointResponse(
        as,
        client,
        await oauth.genericTokenEndpointRequest(as, client, oauth.ClientSecretBasic(app.password_grant_secret), "password", wrong, options),
      )
      .catch((e: unknown) => e);
    expect((refused as oauth.ResponseBodyError).error).toBe("invalid_grant");
  });

  it("runs the client-credentials grant with Basic client authentication", async () => {
    const app = await makeApp();
    const client: oauth.Client = { client_id: app.client_id };
    const response = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret), new URLSearchParams(), options);
    const tokens = await oauth.processClientCredentialsResponse(as, client, response);
    expect(tokens.scope).toBe("basic");
    expect((await call("GET", "/token", { token: tokens.access_token })).status).toBe(403); // an app token: /token needs a user's
  });

  it("answers a wrong Basic secret with 401 invalid_client and a Basic challenge, in OAuth's error format", async () => {
    const app = await makeApp();
    const client: oauth.Client = { client_id: app.client_id };
    const response = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic("not-the-secret"), new URLSearchParams(), options);
    const err = await oauth.processClientCredentialsResponse(as, client, response).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = err as oauth.WWWAuthenticateChallengeError;
    expect(challenge.status).toBe(401);
    expect(challenge.cause).toEqual([expect.objectContaining({ scheme: "basic", parameters: { realm: "api" } })]);
    expect(await challenge.response.json()).toMatchObject({ error: "invalid_client", meta: { code: 401 } });

    // Malformed Basic credentials are the client's failure too, never read as a bearer token.
    for (const authorization of ["Basic !!!", `Basic ${btoa("no-colon")}`, `Basic ${btoa("%zz:x")}`]) {
      const res = await call("POST", "/oauth/access_token", { form: { grant_type: "client_credentials" }, headers: { Authorization: authorization } });
      expect(res.status, authorization).toBe(401);
      expect(res.body.error).toBe("invalid_client");
      expect(res.body.error_description).not.toMatch(/bearer/i);
      expect(res.headers.get("www-authenticate")).toBe('Basic realm="api"');
    }
  });

  it("takes credentials in the body and the Basic header together only when they agree", async () => {
    const app = await makeApp();
    const header = { Authorization: basic(app.client_id, app.client_secret) };
    const same = await call("POST", "/oauth/access_token", {
      form: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret },
      headers: header,
    });
    expect(same.status, same.text).toBe(200);
    const other = await makeApp();
    for (const form of [{ client_id: other.client_id }, { client_secret: other.client_secret }] as Record<string, string>[]) {
      const res = await call("POST", "/oauth/access_token", { form: { grant_type: "client_credentials", ...form }, headers: header });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_request");
      expect(res.body.error_description).toContain(Object.keys(form)[0]);
    }
    // Body credentials alone still work, and a wrong one gets the Basic challenge as well.
    const body = await call("POST", "/oauth/access_token", { form: { grant_type: "client_credentials", client_id: app.client_id, client_secret: "wrong" } });
    expect(body.status).toBe(401);
    expect(body.headers.get("www-authenticate")).toBe('Basic realm="api"');
  });
});

describe("WWW-Authenticate on 401s (RFC 6750 §3)", () => {
  it("challenges for a Bearer token, with error=invalid_token only when one was sent, and lets browsers read it", async () => {
    const none = await call("GET", "/token", { headers: { Origin: "https://app.example.org" } });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="api"');
    expect(none.headers.get("access-control-expose-headers")).toMatch(/WWW-Authenticate/i);
    expect(none.body.meta.code).toBe(401); // the envelope is unchanged

    for (const res of [await call("GET", "/token", { token: "not-a-token" }), await call("GET", "/posts/1?access_token=not-a-token")]) {
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_token"');
    }
  });
});
