import { describe, expect, it } from "vitest";
import { activityDay } from "../../src/stores/tokens";
import { actor, appToken, call, makeApp, makeUser, uniqueName, userToken } from "../support/client";

describe("envelope and HTTP contract", () => {
  it("GET /sys/config returns exactly the limits of api.md §8", async () => {
    const res = await call("GET", "/sys/config");
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ code: 200 });
    expect(res.body.data).toEqual({
      file: { audio_max_size_bytes: 52428800, max_size_bytes: 104857600 },
      message: { max_length: 2048 },
      post: { max_length: 256, seconds_between_duplicates: 60, seconds_for_revision: 300 },
      rate_limit: {
        anonymous: { reads: 40, read_reset_seconds: 60 },
        authorized: { reads: 5000, read_reset_seconds: 3600, writes: 20, write_reset_seconds: 60 },
        seconds_banned: 600,
      },
      raw: { max_length: 8192 },
      user: { description_max_length: 256, name_max_length: 50, presence_max_length: 100, username_max_length: 20 },
    });
  });

  it("indents JSON only with X-Pretty-Json", async () => {
    const compact = await call("GET", "/sys/config");
    expect(compact.text).not.toContain("\n");
    const pretty = await call("GET", "/sys/config", { headers: { "X-Pretty-Json": "1" } });
    expect(pretty.text).toContain('\n  "meta": {');
    expect(JSON.parse(pretty.text)).toEqual(compact.body);
  });

  it("allows CORS from any origin", async () => {
    const res = await call("OPTIONS", "/token", {
      headers: { Origin: "https://elsewhere.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization" },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const get = await call("GET", "/sys/config", { headers: { Origin: "https://elsewhere.example" } });
    expect(get.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("answers unknown routes with 404 and wrong methods with 405, in the envelope", async () => {
    const missing = await call("GET", "/no/such/route");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ meta: { code: 404, error_message: expect.stringContaining("Not Found") } });
    const wrong = await call("PATCH", "/sys/config");
    expect(wrong.status).toBe(405);
    expect(wrong.body.meta.code).toBe(405);
    expect(wrong.body).not.toHaveProperty("data");
    expect(wrong.headers.get("allow")).toContain("GET");
  });

  it("refuses a JSON endpoint without Content-Type: application/json (415)", async () => {
    const res = await call("POST", "/admin/apps", {
      token: "test-admin-token",
      body: JSON.stringify({ name: "x" }),
      headers: { "Content-Type": "text/plain" },
    });
    expect(res.status).toBe(415);
    expect(res.body.meta.error_message).toMatch(/application\/json/);
  });

  it("names the field for malformed JSON and wrong types (400)", async () => {
    const bad = await call("POST", "/admin/users", { token: "test-admin-token", body: "{not json", headers: { "Content-Type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toMatch(/JSON/);
    const wrongType = await call("POST", "/admin/users", { token: "test-admin-token", json: { username: 5, password: "password123" } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.meta.error_message).toContain("'username'");
    const badName = await call("POST", "/admin/users", { token: "test-admin-token", json: { username: "Has Caps", password: "password123" } });
    expect(badName.status).toBe(400);
    expect(badName.body.meta.error_message).toContain("'username'");
  });

  it("refuses a non-integer id with 400", async () => {
    const res = await call("GET", "/users/abc");
    expect(res.status).toBe(400);
    expect(res.body.meta.error_message).toContain("'user_id'");
  });

  it("serves an OpenAPI 3.1 document listing every route", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    const paths = Object.keys(res.body.paths);
    for (const p of [
      "/v1/token",
      "/v1/sys/config",
      "/v1/sys/stats",
      "/v1/users/{user_id}",
      "/v1/users/{user_id}/clients",
      "/v1/clients/{client_id}",
      "/v1/oauth/access_token",
      "/v1/admin/apps",
      "/v1/admin/users",
      "/v1/admin/apps/{id}",
    ]) {
      expect(paths).toContain(p);
    }
    expect(Object.keys(res.body.paths["/v1/token"])).toEqual(expect.arrayContaining(["get", "delete"]));
  });
});

describe("admin bootstrap and OAuth", () => {
  it("guards the admin API with ADMIN_TOKEN", async () => {
    expect((await call("POST", "/admin/apps", { json: { name: "x" } })).status).toBe(401);
    expect((await call("POST", "/admin/apps", { token: "wrong", json: { name: "x" } })).status).toBe(403);
  });

  it("refuses a taken username", async () => {
    const u = await makeUser();
    const again = await call("POST", "/admin/users", { token: "test-admin-token", json: { username: u.username, password: "password123" } });
    expect(again.status).toBe(400);
    expect(again.body.meta.error_message).toContain("'username'");
  });

  it("issues app tokens with client_credentials (form, multipart and JSON bodies)", async () => {
    const app = await makeApp();
    const form = await call("POST", "/oauth/access_token", {
      form: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(form.status).toBe(200);
    expect(form.body).toEqual({
      access_token: expect.any(String),
      token_type: "bearer",
      scope: "basic",
      token: { app: { id: app.client_id, name: "Test app", url: "https://app.example.com" }, scopes: ["basic"] },
    });
    const fd = new FormData();
    fd.set("grant_type", "client_credentials");
    fd.set("client_id", app.client_id);
    fd.set("client_secret", app.client_secret);
    expect((await call("POST", "/oauth/access_token", { body: fd })).status).toBe(200);
    const json = await call("POST", "/oauth/access_token", {
      json: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(json.status).toBe(200);
  });

  it("issues user tokens with the password grant", async () => {
    const app = await makeApp();
    const user = await makeUser();
    const res = await call("POST", "/oauth/access_token", {
      form: {
        grant_type: "password",
        client_id: app.client_id,
        password_grant_secret: app.password_grant_secret,
        username: user.username,
        password: user.password,
        scope: "stream email",
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.user_id).toBe(user.id);
    expect(res.body.username).toBe(user.username);
    expect(res.body.token.scopes).toEqual(["basic", "stream", "email"]);
    expect(res.body.token.user.id).toBe(user.id);
  });

  it("refuses bad grants with an OAuth error naming the problem", async () => {
    const app = await makeApp();
    const user = await makeUser();
    const unknownGrant = await call("POST", "/oauth/access_token", { form: { grant_type: "magic", client_id: app.client_id } });
    expect(unknownGrant.status).toBe(400);
    expect(unknownGrant.body.error).toBe("unsupported_grant_type");
    expect(unknownGrant.body.meta.error_message).toContain("'grant_type'");
    const wrongSecret = await call("POST", "/oauth/access_token", {
      form: { grant_type: "client_credentials", client_id: app.client_id, client_secret: "nope" },
    });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error).toBe("invalid_client");
    const wrongPassword = await call("POST", "/oauth/access_token", {
      form: {
        grant_type: "password",
        client_id: app.client_id,
        password_grant_secret: app.password_grant_secret,
        username: user.username,
        password: "wrong-password",
      },
    });
    expect(wrongPassword.status).toBe(400);
    expect(wrongPassword.body.error).toBe("invalid_grant");
    const badScope = await call("POST", "/oauth/access_token", {
      form: {
        grant_type: "password",
        client_id: app.client_id,
        password_grant_secret: app.password_grant_secret,
        username: user.username,
        password: user.password,
        scope: "everything",
      },
    });
    expect(badScope.status).toBe(400);
    expect(badScope.body.error).toBe("invalid_scope");
    const malformed = await call("POST", "/oauth/access_token", { body: "{", headers: { "Content-Type": "application/json" } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe("invalid_request");
  });

  it("runs the authorization_code flow through the consent page", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const user = await makeUser();
    const q = new URLSearchParams({
      client_id: app.client_id,
      redirect_uri: "https://client.example.org/cb",
      scope: "files",
      response_type: "code",
      state: "xyz",
    });
    const page = await call("GET", `/oauth/authenticate?${q}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<form");
    // The form's anti-forgery token, keyed by the page's cookie (see test/api/oauth-pages.test.ts).
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1];
    const cookie = page.headers.get("set-cookie")!.split(";")[0];
    const submit = await call("POST", "/oauth/authenticate", {
      form: { ...Object.fromEntries(q), username: user.username, password: user.password, csrf },
      headers: { Cookie: cookie },
    });
    expect(submit.status).toBe(302);
    const location = new URL(submit.headers.get("location")!);
    expect(location.origin + location.pathname).toBe("https://client.example.org/cb");
    expect(location.searchParams.get("state")).toBe("xyz");
    const code = location.searchParams.get("code")!;
    const exchange = {
      grant_type: "authorization_code",
      client_id: app.client_id,
      client_secret: app.client_secret,
      code,
      redirect_uri: "https://client.example.org/cb",
    };
    const token = await call("POST", "/oauth/access_token", { form: exchange });
    expect(token.status).toBe(200);
    expect(token.body.user_id).toBe(user.id);
    expect(token.body.token.scopes).toEqual(["basic", "files"]);
    const reused = await call("POST", "/oauth/access_token", { form: exchange });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
  });

  it("refuses a redirect_uri off the app's origin", async () => {
    const app = await makeApp({ url: "https://client.example.org" });
    const q = new URLSearchParams({ client_id: app.client_id, redirect_uri: "https://evil.example/cb", response_type: "code" });
    const page = await call("GET", `/oauth/authenticate?${q}`);
    // A page for the person (it cannot go back to the app), and no sign-in form.
    expect(page.status).toBe(400);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.text).toContain("evil.example");
    expect(page.text).not.toContain("<form");
  });
});

describe("GET and DELETE /token", () => {
  it("returns the token object with user, markdown_text and storage; email only with the email scope", async () => {
    const { app, user, token } = await actor("", { email: "someone@example.com" });
    const res = await call("GET", "/token", { token });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-oauth-scopes")).toBe("basic");
    const data = res.body.data;
    expect(data.app).toEqual({ id: app.client_id, name: "Test app", url: "https://app.example.com" });
    expect(data.scopes).toEqual(["basic"]);
    expect(data.user.id).toBe(user.id);
    expect(data.user.content.markdown_text).toBe("");
    expect(data.user).not.toHaveProperty("data");
    expect(data.storage.total).toBeGreaterThan(0);
    expect(data.storage.available).toBe(data.storage.total);

    const withEmail = await userToken(app, user, "email");
    const res2 = await call("GET", "/token", { token: withEmail });
    expect(res2.headers.get("x-oauth-scopes")).toBe("basic,email");
    expect(res2.body.data.user.data).toEqual({ email: "someone@example.com" });
  });

  it("accepts the token in the access_token query parameter", async () => {
    const { token, user } = await actor();
    const res = await call("GET", `/token?access_token=${encodeURIComponent(token)}`);
    expect(res.status).toBe(200);
    expect(res.body.data.user.id).toBe(user.id);
  });

  it("follows the auth matrix: no token 401, app token 403, unknown 401, deleted 401", async () => {
    const app = await makeApp();
    expect((await call("GET", "/token")).status).toBe(401);
    const appTok = await appToken(app);
    const asApp = await call("GET", "/token", { token: appTok });
    expect(asApp.status).toBe(403);
    expect(asApp.body.meta.error_message).toMatch(/user token/);
    expect((await call("GET", "/token", { token: "not-a-token" })).status).toBe(401);
    const malformedHeader = await call("GET", "/token", { headers: { Authorization: "Basic abc" } });
    expect(malformedHeader.status).toBe(401);

    const user = await makeUser();
    const tok = await userToken(app, user);
    const del = await call("DELETE", "/token", { token: tok });
    expect(del.status).toBe(200);
    expect(del.body.data.user.id).toBe(user.id);
    expect((await call("GET", "/token", { token: tok })).status).toBe(401);
    // Other tokens of the same user keep working.
    const other = await userToken(app, user);
    expect((await call("GET", "/token", { token: other })).status).toBe(200);
  });
});

describe("users and clients", () => {
  it("GET /users/{id}, /users/me and /users/@username", async () => {
    const { user, token } = await actor("", { name: "Ada" });
    const byId = await call("GET", `/users/${user.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body.data).toMatchObject({ id: user.id, username: user.username, name: "Ada", type: "human", counts: { posts: 0, followers: 0 } });
    expect(byId.body.data.content).not.toHaveProperty("markdown_text");
    expect(byId.body.data.you_can_follow).toBe(false);
    const me = await call("GET", "/users/me", { token });
    expect(me.body.data.id).toBe(user.id);
    expect(me.body.data.content).toHaveProperty("markdown_text");
    expect((await call("GET", `/users/@${user.username}`)).body.data.id).toBe(user.id);
    expect((await call("GET", "/users/me")).status).toBe(401);
    expect((await call("GET", "/users/999999999")).status).toBe(404);
    expect((await call("GET", "/users/@nobody_here_x")).status).toBe(404);
  });

  it("serves the default avatar image", async () => {
    const user = await makeUser();
    const res = await call("GET", `/users/${user.id}`);
    const url = new URL(res.body.data.content.avatar_image.url);
    expect(res.body.data.content.avatar_image.is_default).toBe(true);
    const img = await call("GET", url.href.replace(url.origin, "http://api.test"));
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toBe("image/png");
  });

  it("lists a user's active clients (list view) and shows public client details", async () => {
    const owner = await makeUser();
    const { token } = await actor();
    const app1 = await makeApp({ name: "Écrire ✍️", user_id: owner.id });
    const app2 = await makeApp({ name: "Second", user_id: owner.id, is_public: false });
    const list = await call("GET", `/users/${owner.id}/clients`, { token });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      { id: app1.client_id, name: "Écrire ✍️", url: "https://app.example.com" },
      { id: app2.client_id, name: "Second", url: "https://app.example.com" },
    ]);
    expect((await call("GET", `/users/${owner.id}`)).body.data.counts.clients).toBe(2);

    const detail = await call("GET", `/clients/${app1.client_id}`, { token });
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ id: app1.client_id, name: "Écrire ✍️", url: "https://app.example.com", posts: 0, user: { id: owner.id } });
    expect(detail.body.data.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(detail.body.data.content).toHaveProperty("html");
    expect((await call("GET", `/clients/${app2.client_id}`, { token })).status).toBe(404);
    expect((await call("GET", `/clients/${app1.client_id}`)).status).toBe(401);
    expect((await call("GET", `/users/${owner.id}/clients`)).status).toBe(401);
  });

  it("a deleted client disappears, its tokens stop working, and it shows as [REMOVED]", async () => {
    const owner = await makeUser();
    const app = await makeApp({ user_id: owner.id });
    const viewer = await actor();
    const tok = await userToken(app, await makeUser());
    const del = await call("DELETE", `/admin/apps/${app.id}`, { token: "test-admin-token" });
    expect(del.status).toBe(200);
    expect((await call("GET", "/token", { token: tok })).status).toBe(401);
    expect((await call("GET", `/clients/${app.client_id}`, { token: viewer.token })).status).toBe(404);
    expect((await call("GET", `/users/${owner.id}/clients`, { token: viewer.token })).body.data).toEqual([]);
    expect((await call("DELETE", `/admin/apps/${app.id}`, { token: "test-admin-token" })).status).toBe(404);
  });

  it("app tokens may read client endpoints", async () => {
    const app = await makeApp();
    const tok = await appToken(app);
    const owner = await makeUser();
    expect((await call("GET", `/users/${owner.id}/clients`, { token: tok })).status).toBe(200);
  });
});

describe("GET /sys/stats", () => {
  it("counts from the database", async () => {
    const before = (await call("GET", "/sys/stats")).body.data;
    await makeUser();
    await makeApp();
    const { token, user } = await actor();
    await call("GET", "/token", { token });
    const after = (await call("GET", "/sys/stats")).body.data;
    expect(after.users.created).toBe(before.users.created + 2);
    expect(after.clients.created).toBe(before.clients.created + 2);
    expect(after.days).toBeGreaterThanOrEqual(1);
    // The call counts on the user's activity day (the UTC day, turning up to an hour after midnight).
    const today = activityDay(Number(user.id), Math.floor(Date.now() / 1000));
    expect(after.users.active[today]).toBeGreaterThanOrEqual(1);
    for (const k of ["files", "messages", "polls", "posts"]) expect(typeof after[k].created).toBe("number");
    expect(typeof after.users.present).toBe("number");
  });
});

void uniqueName;
