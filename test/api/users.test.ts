import { fetchMock } from "cloudflare:test";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ADMIN, actor, appToken, call, makeApp, makeUser, openStream, userToken } from "../support/client";
import * as fx from "../fixtures/media";

// Users: lookups by id, the profile (PUT/PATCH /users/me), avatar and cover, badges, verified,
// the User fields presence/raw/badge/verified, and the app's users (issue 17).

const b64 = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
/** A 1000x300 PNG: large enough for a cover (at least 960x223). */
const cover1000x300 = b64(
  "iVBORw0KGgoAAAANSUhEUgAAA+gAAAEsCAIAAADfJw44AAAFJ0lEQVR42u3WQQ0AAAjEsFOCTiQiCxskNKmCvZbqAQAAjosEAABg3AEAAOMOAADGHQAAMO4AAIBxBwAA4w4AABh3AADAuAMAgHEHAACMOwAAGHcAAMC4AwAAxh0AAIw7AABg3AEAAOMOAADGHQAAMO4AAIBxBwAA4w4AABh3AAAw7gAAgHEHAACMOwAAGHcAAMC4AwAAxh0AAIw7AABg3AEAwLgDAADGHQAAMO4AAGDcAQAA4w4AABh3AAAw7gAAgHEHAACMOwAAGHcAAMC4AwCAcQcAAIw7AABg3AEAwLgDAADGHQAAMO4AAGDcAQAA4w4AAMYdAAAw7gAAgHEHAADjDgAAGHcAAMC4AwCAcQcAAIw7AABg3AEAwLgDAADGHQAAjDsAAGDcAQAA4w4AAMYdAAAw7gAAgHEHAADjDgAAGHcAADDuAACAcQcAAIw7AAAYdwAAwLgDAADGHQAAjDsAAGDcAQAA4w4AAMYdAAAw7gAAYNwBAADjDgAAGHcAADDuAACAcQcAAIw7AAAYdwAAwLgDAIBxBwAAjDsAAGDcAQDAuAMAAMYdAAAw7gAAYNwBAADjDgAAGHcAADDuAACAcQcAAOMOAAAYdwAAwLgDAIBxBwAAjDsAAGDcAQDAuAMAAMYdAACMOwAAYNwBAADjDgAAxh0AADDuAACAcQcAAOMOAAAYdwAAwLgDAIBxBwAAjDsAABh3AADAuAMAAMYdAACMOwAAYNwBAADjDgAAxh0AADDuAABg3AEAAOMOAAAYdwAAMO4AAIBxBwAAjDsAABh3AADAuAMAAMYdAACMOwAAYNwBAMC4AwAAxh0AADDuAABg3AEAAOMOAAAYdwAAMO4AAIBxBwAA4w4AABh3AADAuAMAgHEHAACMOwAAYNwBAMC4AwAAxh0AADDuAABg3AEAAOMOAADGHQAAMO4AAIBxBwAA4w4AABh3AADAuAMAgHEHAACMOwAAGHcAAMC4AwAAxh0AAIw7AABg3AEAAOMOAADGHQAAMO4AAIBxBwAA4w4AABh3AAAw7gAAgHEHAACMOwAAGHcAAMC4AwAAxh0AAIw7AABg3AEAwLgDAADGHQAAMO4AAGDcAQAA4w4AABh3AAAw7gAAgHEHAACMOwAAGHcAAMC4AwCAcQcAAIw7AABg3AEAwLgDAADGHQAAMO4AAGDcAQAA4w4AAMYdAAAw7gAAgHEHAADjDgAAGHcAAMC4AwCAcQcAAIw7AABg3AEAwLgDAADGHQAAjDsAAGDcAQAA4w4AAMYdAAAw7gAAgHEHAADjDgAAGHcAADDuKgAAgHEHAACMOwAAGHcAAMC4AwAAxh0AAIw7AABg3AEAAOMOAADGHQAAMO4AAGDcAQAA4w4AABh3AAAw7gAAgHEHAACMOwAAGHcAAMC4AwCAcVcBAACMOwAAYNwBAMC4AwAAxh0AADDuAABg3AEAAOMOAAAYdwAAMO4AAIBxBwAA4w4AABh3AADAuAMAgHEHAACMOwAAYNwBAMC4AwAAxh0AAIy7BAAAYNwBAADjDgAAxh0AADDuAACAcQcAAOMOAAAYdwAAwLgDAIBxBwAAjDsAABh3AADAuAMAAMYdAACMOwAAYNwBAADjDgAAxh0AADDuAACAcQcAAOMOAAAYdwAAMO4AAIBxBwAAjDsAABh3AADAuAMAAMYdAACMOwAAYNwBAMC4AwAAxh0AADDuAABg3AEAAOMOAAAYdwAAMO4AAIBxBwAAjDsAABh3AADAuAMAwBcLAtSKH1HJG2cAAAAASUVORK5CYII=",
);

const SCOPES = "update_profile follow stream write_post presence";

function imageForm(field: string, bytes: Uint8Array, filename = "image.png") {
  const form = new FormData();
  form.append(field, new Blob([bytes]), filename);
  return form;
}

describe("GET /users?ids=", () => {
  it("returns users by id and @username in the order asked, once each, skipping unknown ones; no token needed", async () => {
    const [a, b] = await Promise.all([makeUser(), makeUser()]);
    const res = await call("GET", `/users?ids=${b.id},@${a.username},999999999,${a.id},@nobody_here_x`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((u: any) => u.id)).toEqual([b.id, a.id]);
    expect(res.body.data[1]).toMatchObject({ username: a.username, counts: expect.any(Object) });
  });

  it("refuses bad ids with a 400 naming 'ids'", async () => {
    for (const q of ["ids=abc", "ids=", "ids=1,@bad-name"]) {
      const res = await call("GET", `/users?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.meta.error_message).toContain("'ids'");
    }
    expect((await call("GET", "/users")).status).toBe(400);
  });
});

describe("PUT and PATCH /users/me", { timeout: 60_000 }, () => {
  it("PATCH changes only the fields given; PUT replaces the profile; both return the User", async () => {
    const a = await actor(SCOPES);
    const b = await makeUser();
    const patched = await call("PATCH", "/users/me", { token: a.token, json: { name: "Ada", content: { text: `Hi @${b.username} #maths https://ada.dev` } } });
    expect(patched.status, patched.text).toBe(200);
    const u = patched.body.data;
    expect(u).toMatchObject({ id: a.user.id, name: "Ada", locale: "en_US", timezone: "UTC" });
    expect(u.content.text).toBe(`Hi @${b.username} #maths https://ada.dev`);
    expect(u.content.markdown_text).toBe(u.content.text);
    expect(u.content.html).toContain(`data-mention-id="${b.id}"`);
    expect(u.content.html).toContain("/User");
    expect(u.content.entities.mentions).toEqual([expect.objectContaining({ id: b.id })]);
    expect(u.content.entities.tags).toEqual([expect.objectContaining({ text: "maths" })]);
    expect(u.content.entities.links).toHaveLength(1);

    const tz = await call("PATCH", "/users/me", { token: a.token, json: { timezone: "Europe/Paris" } });
    expect(tz.body.data).toMatchObject({ name: "Ada", timezone: "Europe/Paris" });
    expect(tz.body.data.content.text).toBe(u.content.text);

    const replaced = await call("PUT", "/users/me", { token: a.token, json: { locale: "de_DE", timezone: "Europe/Berlin" } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).toMatchObject({ name: "", locale: "de_DE", timezone: "Europe/Berlin" });
    expect(replaced.body.data.content.text).toBe("");
    const seen = (await call("GET", `/users/${a.user.id}`)).body.data;
    expect(seen).toMatchObject({ locale: "de_DE", timezone: "Europe/Berlin", name: "" });
    expect(seen.content).not.toHaveProperty("markdown_text");
  });

  it("accepts a whole User object as the body (other fields are ignored)", async () => {
    const a = await actor(SCOPES);
    const me = (await call("GET", "/users/me", { token: a.token })).body.data;
    const res = await call("PUT", "/users/me", { token: a.token, json: { ...me, name: "Whole", content: { ...me.content, text: "from a User" } } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ name: "Whole", username: a.user.username });
    expect(res.body.data.content.text).toBe("from a User");
  });

  it("refuses bad fields with a 400 naming them, non-JSON with 415, and needs update_profile", async () => {
    const a = await actor(SCOPES);
    const cases: [string, unknown, string][] = [
      ["PUT", { timezone: "UTC" }, "'locale'"],
      ["PUT", { locale: "en_US" }, "'timezone'"],
      ["PATCH", { locale: "english" }, "'locale'"],
      ["PATCH", { timezone: "Mars/Olympus" }, "'timezone'"],
      ["PATCH", { name: "n".repeat(51) }, "'name'"],
      ["PATCH", { name: 5 }, "'name'"],
      ["PATCH", { content: { text: "x".repeat(257) } }, "'content.text'"],
      ["PATCH", { raw: { "io.example.x": [{ a: 1 }, { b: 2 }] } }, "'raw"],
      ["PATCH", { raw: { "io.example.x": "x" } }, "'raw"],
      ["PATCH", { raw: { "io.example.big": [{ v: "x".repeat(8200) }] } }, "'raw'"],
      ["PATCH", { badge: { id: "999999" } }, "'badge'"],
      ["PATCH", { badge: "nope" }, "'badge'"],
    ];
    for (const [method, json, field] of cases) {
      const res = await call(method, "/users/me", { token: a.token, json });
      expect(res.status, JSON.stringify(json).slice(0, 80)).toBe(400);
      expect(res.body.meta.error_message).toContain(field);
    }
    expect((await call("PATCH", "/users/me", { token: a.token, form: { name: "x" } })).status).toBe(415);
    const noScope = await actor("stream");
    expect((await call("PATCH", "/users/me", { token: noScope.token, json: { name: "x" } })).status).toBe(403);
    expect((await call("PATCH", "/users/me", { json: { name: "x" } })).status).toBe(401);
  });

  it("merges raw by type ([] removes a type) and shows it only with include_raw / include_user_raw", async () => {
    const a = await actor(SCOPES);
    await call("PATCH", "/users/me", { token: a.token, json: { raw: { "io.example.a": [{ v: 1 }], "io.example.b": [{ v: 2 }] } } });
    const again = await call("PUT", "/users/me", {
      token: a.token,
      json: { locale: "en_US", timezone: "UTC", raw: { "io.example.a": [], "io.example.c": [{ v: 3 }] } },
    });
    expect(again.body.data).not.toHaveProperty("raw");
    const withRaw = await call("GET", `/users/${a.user.id}?include_user_raw=1`);
    expect(withRaw.body.data.raw).toEqual({ "io.example.b": [{ v: 2 }], "io.example.c": [{ v: 3 }] });
    expect((await call("GET", `/users/${a.user.id}?include_raw=1`)).body.data.raw).toEqual(withRaw.body.data.raw);
    expect((await call("GET", `/users/${a.user.id}`)).body.data).not.toHaveProperty("raw");
  });

  it("emits a user event to the streams of apps the user authorized", async () => {
    const a = await actor(SCOPES);
    const appTok = await appToken(a.app);
    expect((await call("POST", "/streams", { token: appTok, json: { type: "long_poll", object_types: ["user"], key: "users" } })).status).toBe(200);
    // The user's raw only when the connection asks for it (include_user_raw, as the reference says).
    const s = await openStream("/app?key=users&include_user_raw=1", appTok);
    if (!("ws" in s)) throw new Error(`stream refused: ${s.status}`);
    await s.next((f) => f.meta?.connection_id !== undefined);
    await call("PATCH", "/users/me?include_counts=0", { token: a.token, json: { name: "Evented", raw: { "io.example.x": [{ v: 1 }] } } });
    const frame = await s.next((f) => f.meta?.type === "user" && f.data?.id === a.user.id);
    // Rendered with the defaults (not the request's include_counts=0), with the user's raw as asked.
    expect(frame.data).toMatchObject({ name: "Evented", counts: expect.any(Object), raw: { "io.example.x": [{ v: 1 }] } });
    expect(frame.data.content).not.toHaveProperty("markdown_text");
    s.ws.close();
  });
});

describe("avatar and cover", { timeout: 60_000 }, () => {
  it("uploads an avatar (multipart `avatar`), shows it on the user, serves it, redirects to it; DELETE restores the default", async () => {
    const a = await actor(SCOPES);
    const before = await call("GET", `/users/${a.user.id}/avatar`);
    expect(before.status).toBe(302);
    expect(before.headers.get("location")).toMatch(/\/v1\/static\/default-avatar\.png$/);

    const res = await call("POST", "/users/me/avatar", { token: a.token, body: imageForm("avatar", fx.png) });
    expect(res.status, res.text).toBe(200);
    const image = res.body.data.content.avatar_image;
    expect(image).toMatchObject({ width: 40, height: 30, is_default: false });
    expect(image.url).toMatch(/\/v1\/images\/[A-Za-z0-9_-]+$/);

    const served = await call("GET", image.url);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("cache-control")).toContain("immutable");

    const redirect = await call("GET", `/users/@${a.user.username}/avatar?w=64`);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe(`${image.url}?w=64`);

    const replaced = await call("POST", "/users/me/avatar", { token: a.token, body: imageForm("avatar", fx.gif, "a.gif") });
    expect(replaced.body.data.content.avatar_image.url).not.toBe(image.url);
    expect((await call("GET", image.url)).status).toBe(404);

    const removed = await call("DELETE", "/users/me/avatar", { token: a.token });
    expect(removed.status).toBe(200);
    expect(removed.body.data.content.avatar_image).toMatchObject({ is_default: true, width: 200, height: 200 });
    expect((await call("GET", replaced.body.data.content.avatar_image.url)).status).toBe(404);
  });

  it("checks images by their bytes: type, size and (for covers) dimensions", async () => {
    const a = await actor(SCOPES);
    const notImage = await call("POST", "/users/me/avatar", { token: a.token, body: imageForm("avatar", new TextEncoder().encode("hello"), "a.png") });
    expect(notImage.status).toBe(400);
    expect(notImage.body.meta.error_message).toContain("'avatar'");
    const audio = await call("POST", "/users/me/avatar", { token: a.token, body: imageForm("avatar", fx.mp3, "a.png") });
    expect(audio.status).toBe(400);
    const missing = await call("POST", "/users/me/avatar", { token: a.token, body: imageForm("picture", fx.png) });
    expect(missing.status).toBe(400);
    expect(missing.body.meta.error_message).toContain("'avatar'");
    const big = new Uint8Array(2 * 1024 * 1024 + 10);
    big.set(fx.png);
    expect((await call("POST", "/users/me/avatar", { token: a.token, body: imageForm("avatar", big) })).status).toBe(413);
    expect((await call("POST", "/users/me/avatar", { token: a.token, body: "x", headers: { "Content-Type": "text/plain" } })).status).toBe(415);

    const small = await call("POST", "/users/me/cover", { token: a.token, body: imageForm("cover", fx.png1200x100) });
    expect(small.status).toBe(400);
    expect(small.body.meta.error_message).toMatch(/'cover'.*960.*1200x100/);
    const cover = await call("POST", "/users/me/cover", { token: a.token, body: imageForm("cover", cover1000x300) });
    expect(cover.status, cover.text).toBe(200);
    expect(cover.body.data.content.cover_image).toMatchObject({ width: 1000, height: 300, is_default: false });
    const redirect = await call("GET", `/users/${a.user.id}/cover`);
    expect(redirect.headers.get("location")).toBe(cover.body.data.content.cover_image.url);
    expect((await call("DELETE", "/users/me/cover", { token: a.token })).body.data.content.cover_image.is_default).toBe(true);
  });

  it("downloads an image from `from_url`", async () => {
    // Only these two URLs are intercepted: everything else (the Postgres driver's requests) goes through.
    fetchMock.activate();
    onTestFinished(() => fetchMock.deactivate());
    fetchMock
      .get("https://images.example")
      .intercept({ path: "/ada.png" })
      .reply(200, fx.png, { headers: { "content-type": "image/png" } });
    fetchMock.get("https://images.example").intercept({ path: "/missing.png" }).reply(404, "no");
    const a = await actor(SCOPES);
    const res = await call("POST", "/users/me/avatar", { token: a.token, json: { from_url: "https://images.example/ada.png" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.content.avatar_image).toMatchObject({ width: 40, height: 30, is_default: false });
    const missing = await call("POST", "/users/me/avatar", { token: a.token, json: { from_url: "https://images.example/missing.png" } });
    expect(missing.status).toBe(400);
    expect(missing.body.meta.error_message).toContain("'from_url'");
    const bad = await call("POST", "/users/me/avatar", { token: a.token, json: { from_url: "ftp://images.example/a.png" } });
    expect(bad.status).toBe(400);
  });

  it("needs update_profile to upload; the redirect needs no token and 404s for no user", async () => {
    const noScope = await actor("stream");
    expect((await call("POST", "/users/me/avatar", { token: noScope.token, body: imageForm("avatar", fx.png) })).status).toBe(403);
    expect((await call("GET", "/users/999999999/avatar")).status).toBe(404);
  });
});

describe("badges and verified", { timeout: 60_000 }, () => {
  let badge: { id: string; name: string; description: string };
  beforeAll(async () => {
    const made = await call("POST", "/admin/badges", { token: ADMIN, json: { name: "Early supporter", description: "Joined early" } });
    expect(made.status).toBe(201);
    badge = made.body.data;
  });

  it("lists badges and one badge; no token needed", async () => {
    const all = await call("GET", "/badges");
    expect(all.status).toBe(200);
    expect(all.body.data).toContainEqual(badge);
    expect((await call("GET", `/badges/${badge.id}`)).body.data).toEqual(badge);
    expect((await call("GET", "/badges/999999")).status).toBe(404);
    expect((await call("GET", "/badges/abc")).status).toBe(400);
  });

  it("an awarded badge is listed for its user and can be shown on the profile; others cannot be", async () => {
    const a = await actor(SCOPES);
    expect((await call("GET", "/users/me/badges", { token: a.token })).body.data).toEqual([]);
    const award = await call("PUT", `/admin/users/${a.user.id}/badges/${badge.id}`, { token: ADMIN, now: 1_800_000_000 });
    expect(award.status).toBe(200);
    expect((await call("PUT", `/admin/users/${a.user.id}/badges/999999`, { token: ADMIN })).status).toBe(404);
    const mine = await call("GET", "/users/me/badges", { token: a.token });
    expect(mine.body.data).toEqual([{ ...badge, awarded_at: "2027-01-15T08:00:00Z" }]);

    const shown = await call("PATCH", "/users/me", { token: a.token, json: { badge: { id: badge.id } } });
    expect(shown.body.data.badge).toEqual({ id: badge.id, name: badge.name });
    expect((await call("GET", `/users/${a.user.id}`)).body.data.badge).toEqual({ id: badge.id, name: badge.name });
    const hidden = await call("PATCH", "/users/me", { token: a.token, json: { badge: null } });
    expect(hidden.body.data).not.toHaveProperty("badge");

    const b = await actor(SCOPES);
    const refused = await call("PATCH", "/users/me", { token: b.token, json: { badge: badge.id } });
    expect(refused.status).toBe(400);
    expect(refused.body.meta.error_message).toContain("'badge'");
  });

  it("`verified` is set by the operator and shows the domain and URL", async () => {
    const u = await makeUser();
    const set = await call("PATCH", `/admin/users/${u.id}`, { token: ADMIN, json: { verified_url: "https://www.ada.example/me" } });
    expect(set.status, set.text).toBe(200);
    expect((await call("GET", `/users/${u.id}`)).body.data.verified).toEqual({ domain: "ada.example", url: "https://www.ada.example/me" });
    expect((await call("PATCH", `/admin/users/${u.id}`, { token: ADMIN, json: { verified_url: "javascript:x" } })).status).toBe(400);
    await call("PATCH", `/admin/users/${u.id}`, { token: ADMIN, json: { verified_url: null } });
    expect((await call("GET", `/users/${u.id}`)).body.data).not.toHaveProperty("verified");
    expect((await call("PATCH", `/admin/users/${u.id}`, { json: { verified_url: null } })).status).toBe(401);
  });
});

describe("general user parameters", { timeout: 60_000 }, () => {
  it("include_presence, include_counts, include_html and include_user_html shape the User", async () => {
    const a = await actor(SCOPES);
    await call("PATCH", "/users/me", { token: a.token, json: { content: { text: "about me" } } });
    const plain = (await call("GET", `/users/${a.user.id}`)).body.data;
    expect(plain).not.toHaveProperty("presence");
    expect((await call("GET", `/users/${a.user.id}?include_presence=1`)).body.data.presence).toBe("offline");
    await call("PUT", "/users/me/presence", { token: a.token, form: { presence: "writing" } });
    expect((await call("GET", `/users/${a.user.id}?include_presence=1`)).body.data.presence).toBe("writing");

    const noCounts = (await call("GET", `/users/${a.user.id}?include_counts=0`)).body.data;
    expect(noCounts).not.toHaveProperty("counts");
    const noHtml = (await call("GET", `/users/${a.user.id}?include_user_html=0`)).body.data;
    expect(noHtml.content).not.toHaveProperty("html");
    expect(noHtml.content.text).toBe("about me");
    expect((await call("GET", `/users/${a.user.id}?include_html=0&include_user_html=1`)).body.data.content).not.toHaveProperty("html");
    expect((await call("GET", `/users/${a.user.id}?include_html=1&include_user_html=0`)).body.data.content.html).toContain("about me");
  });

  it("a bad value is a 400 naming the parameter, on any endpoint", async () => {
    const a = await actor(SCOPES);
    for (const path of [
      `/users/${a.user.id}?include_counts=2`,
      "/posts/streams/global?include_deleted=yes",
      `/users/${a.user.id}/clients?include_presence=on`,
    ]) {
      const res = await call("GET", path, { token: a.token });
      expect(res.status, path).toBe(400);
      expect(res.body.meta.error_message).toMatch(/'include_(counts|deleted|presence)' must be 0 or 1/);
    }
    expect((await call("GET", `/users/${a.user.id}?include_counts=true`)).status).toBe(200);
  });
});

describe("GET /apps/me/users/ids and /apps/me/users/tokens", { timeout: 60_000 }, () => {
  it("list the users who authorized the calling app and its user tokens; need an app token", async () => {
    const app = await makeApp();
    const [u1, u2] = await Promise.all([makeUser(), makeUser()]);
    await userToken(app, u1, "stream");
    await userToken(app, u2, "follow");
    await userToken(app, u2, "follow");
    const appTok = await appToken(app);
    const ids = await call("GET", "/apps/me/users/ids", { token: appTok });
    expect(ids.status).toBe(200);
    expect([...ids.body.data].sort()).toEqual([u1.id, u2.id].sort());
    const tokens = await call("GET", "/apps/me/users/tokens?include_counts=0", { token: appTok });
    expect(tokens.status).toBe(200);
    expect(tokens.body.data).toHaveLength(3);
    expect(tokens.body.data.map((t: any) => t.user.id).sort()).toEqual([u1.id, u2.id, u2.id].sort());
    expect(tokens.body.data[0]).toMatchObject({ app: { id: app.client_id }, scopes: expect.arrayContaining(["basic"]) });
    expect(tokens.body.data[0].user).not.toHaveProperty("counts");
    expect(JSON.stringify(tokens.body)).not.toMatch(/access_token|token_hash/);
    const userTok = await userToken(app, u1, "stream");
    expect((await call("GET", "/apps/me/users/ids", { token: userTok })).status).toBe(403);
    expect((await call("GET", "/apps/me/users/tokens")).status).toBe(401);
  });
});
