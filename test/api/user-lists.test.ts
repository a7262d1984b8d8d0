import { beforeAll, describe, expect, it } from "vitest";
import { actor, appToken, call, makeApp, makeUser, uniqueName } from "../support/client";
import { dbCallsOf } from "../support/fixtures";

// Lists of users: following, followers, muted, blocked, search, suggested (issue 17).

const SCOPES = "follow update_profile write_post stream";
type Actor = Awaited<ReturnType<typeof actor>>;
const ids = (res: { body: any }) => (res.body.data as any[]).map((u) => u.id);

describe("GET /users/{id}/following and /followers", { timeout: 60_000 }, () => {
  let a: Actor, b: Actor, c: Actor, d: Actor;
  beforeAll(async () => {
    [a, b, c, d] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    // a follows c, then b, then d; b and d follow a.
    for (const t of [c, b, d]) expect((await call("PUT", `/users/${t.user.id}/follow`, { token: a.token })).status).toBe(200);
    for (const t of [b, d]) await call("PUT", `/users/${a.user.id}/follow`, { token: t.token });
  }, 60_000);

  it("lists followed users newest follow first (the follow's id is the pagination id), paginated", async () => {
    const res = await call("GET", `/users/${a.user.id}/following`, { token: b.token });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([d.user.id, b.user.id, c.user.id]);
    const [first, , last] = res.body.data;
    expect(Number(first.pagination_id)).toBeGreaterThan(Number(last.pagination_id));
    expect(res.body.meta).toMatchObject({ more: false, max_id: first.pagination_id, min_id: last.pagination_id });
    expect(res.body.data.find((u: any) => u.id === b.user.id).you_follow).toBe(false);
    expect(res.body.data.find((u: any) => u.id === d.user.id).follows_you).toBe(false);

    const page1 = await call("GET", `/users/${a.user.id}/following?count=2`, { token: b.token });
    expect(ids(page1)).toEqual([d.user.id, b.user.id]);
    expect(page1.body.meta.more).toBe(true);
    const page2 = await call("GET", `/users/${a.user.id}/following?count=2&before_id=${page1.body.meta.min_id}`, { token: b.token });
    expect(ids(page2)).toEqual([c.user.id]);
    expect(page2.body.meta.more).toBe(false);
    const oldest = await call("GET", `/users/${a.user.id}/following?count=-1`, { token: b.token });
    expect(ids(oldest)).toEqual([c.user.id]);
  });

  it("lists followers; order=id sorts by user id, order=last_post_id by latest post (users who never posted left out)", async () => {
    const followers = await call("GET", `/users/@${a.user.username}/followers`, { token: a.token });
    expect(ids(followers)).toEqual([d.user.id, b.user.id]);
    expect(followers.body.data.every((u: any) => u.follows_you && u.you_follow)).toBe(true);

    const byId = await call("GET", `/users/${a.user.id}/following?order=id`, { token: a.token });
    const sorted = [b.user.id, c.user.id, d.user.id].sort((x, y) => Number(y) - Number(x));
    expect(ids(byId)).toEqual(sorted);
    expect(byId.body.data.map((u: any) => u.pagination_id)).toEqual(sorted);

    const late = await call("POST", "/posts", { token: c.token, json: { text: "c posts last" } });
    const early = await call("POST", "/posts", { token: b.token, json: { text: "b posts" } });
    await call("POST", "/posts", { token: c.token, json: { text: "c posts again" } });
    const byPost = await call("GET", `/users/${a.user.id}/following?order=last_post_id`, { token: a.token });
    expect(ids(byPost)).toEqual([c.user.id, b.user.id]);
    expect(Number(byPost.body.data[1].pagination_id)).toBe(Number(early.body.data.id));
    expect(Number(byPost.body.data[0].pagination_id)).toBeGreaterThan(Number(late.body.data.id));
  });

  it("needs a token, answers in one database call, 404s for no user and 400s for a bad order", async () => {
    expect((await call("GET", `/users/${a.user.id}/following`)).status).toBe(401);
    const app = await appToken(await makeApp());
    const withApp = await call("GET", `/users/${a.user.id}/followers`, { token: app });
    expect(withApp.status).toBe(200);
    expect(dbCallsOf(withApp)).toBe(2);
    expect((await call("GET", "/users/999999999/following", { token: app })).status).toBe(404);
    const bad = await call("GET", `/users/${a.user.id}/following?order=name`, { token: app });
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("'order'");
  });

  it("takes the general user parameters", async () => {
    const res = await call("GET", `/users/${a.user.id}/following?include_counts=0&include_presence=1`, { token: a.token });
    expect(res.body.data[0]).not.toHaveProperty("counts");
    expect(res.body.data[0].presence).toBe("offline");
  });
});

describe("GET /users/{id}/muted and /blocked", { timeout: 60_000 }, () => {
  it("list the caller's own muted and blocked users only", async () => {
    const [a, b, c] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    await call("PUT", `/users/${b.user.id}/mute`, { token: a.token });
    await call("PUT", `/users/${c.user.id}/mute`, { token: a.token });
    await call("PUT", `/users/${c.user.id}/block`, { token: a.token });
    const muted = await call("GET", "/users/me/muted", { token: a.token });
    expect(muted.status).toBe(200);
    expect(ids(muted).sort()).toEqual([b.user.id, c.user.id].sort());
    expect(muted.body.data.every((u: any) => u.you_muted)).toBe(true);
    expect(muted.body.data.every((u: any) => u.pagination_id === u.id)).toBe(true);
    expect(ids(await call("GET", `/users/${a.user.id}/blocked`, { token: a.token }))).toEqual([c.user.id]);
    const page = await call("GET", "/users/me/muted?count=1", { token: a.token });
    expect(page.body.data).toHaveLength(1);
    expect(page.body.meta.more).toBe(true);

    const other = await call("GET", `/users/${a.user.id}/muted`, { token: b.token });
    expect(other.status).toBe(403);
    expect((await call("GET", `/users/${a.user.id}/blocked`, { token: await appToken(a.app) })).status).toBe(403);
    expect((await call("GET", "/users/me/blocked")).status).toBe(401);
  });
});

describe("GET /users/search", { timeout: 60_000 }, () => {
  const tag = uniqueName("q").slice(0, 8);
  let ada: any, adam: any, feed: any;
  beforeAll(async () => {
    ada = await makeUser({ username: `${tag}ada`, name: "Ada Lovelace" });
    adam = await makeUser({ username: `${tag}xy`, name: "Adam Smith" });
    feed = await makeUser({ username: `${tag}news`, type: "feed", name: "Daily News" });
    const a = await actor(SCOPES);
    void a;
  }, 60_000);

  it("finds users by word prefixes of username, name and profile text, ranked; no token needed", async () => {
    const res = await call("GET", `/users/search?q=${tag}`);
    expect(res.status).toBe(200);
    expect(ids(res).sort()).toEqual([ada.id, adam.id, feed.id].sort());
    expect(ids(await call("GET", `/users/search?q=${tag} lovel`))).toEqual([ada.id]);
    expect(ids(await call("GET", `/users/search?q=${tag} ad&order=id`))).toEqual([adam.id, ada.id]);
    // The username counts more than the name: "ada" is in one username, and in both names.
    const ranked = await call("GET", `/users/search?q=${tag}ada`);
    expect(ids(ranked)).toEqual([ada.id]);
    expect(ids(await call("GET", `/users/search?q=${tag}&user_types=feed`))).toEqual([feed.id]);
    expect(ids(await call("GET", `/users/search?q=${tag}&types=feed`))).toEqual([feed.id]);
    expect(ids(await call("GET", `/users/search?q=${tag}&user_types=human&order=id&count=1`))).toEqual([adam.id]);
  });

  it("filters by locale, timezone, creation time and follow relations; pages the ranking by keyset", async () => {
    const a = await actor(SCOPES, { username: `${tag}me` });
    await call("PUT", "/users/me", { token: a.token, json: { locale: "fr_FR", timezone: "Europe/Paris" } });
    expect(ids(await call("GET", `/users/search?q=${tag}&locale=fr_FR`))).toEqual([a.user.id]);
    expect(ids(await call("GET", `/users/search?q=${tag}&timezone=Europe/Paris`))).toEqual([a.user.id]);
    expect(ids(await call("GET", `/users/search?q=${tag}&created_after=2100-01-01T00:00:00Z`))).toEqual([]);
    await call("PUT", `/users/${ada.id}/follow`, { token: a.token });
    expect(ids(await call("GET", `/users/search?q=${tag}&is_following=1`, { token: a.token }))).toEqual([ada.id]);
    expect(ids(await call("GET", `/users/search?q=${tag}&is_following=0&order=id`, { token: a.token }))).toEqual([a.user.id, feed.id, adam.id]);
    expect((await call("GET", `/users/search?q=${tag}&is_follower=1`)).status).toBe(401);

    const all = ids(await call("GET", `/users/search?q=${tag}`));
    const first = await call("GET", `/users/search?q=${tag}&count=2`);
    expect(ids(first)).toEqual(all.slice(0, 2));
    expect(first.body.meta.more).toBe(true);
    const rest = await call("GET", `/users/search?q=${tag}&count=2&before_id=${first.body.meta.min_id}`);
    expect(ids(rest)).toEqual(all.slice(2, 4));
  });

  it("without q lists users newest first; refuses bad parameters with a 400 naming them; one database call", async () => {
    const newest = await call("GET", "/users/search?count=1");
    expect(newest.status).toBe(200);
    expect(dbCallsOf(newest)).toBe(1);
    for (const [q, name] of [
      ["user_types=robot", "'user_types'"],
      ["order=best", "'order'"],
      ["created_after=yesterday", "'created_after'"],
      ["is_following=2", "'is_following'"],
    ]) {
      const res = await call("GET", `/users/search?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.meta.error_message).toContain(name);
    }
    expect((await call("GET", `/users/search?q=${encodeURIComponent('"* OR -')}`)).status).toBe(200);
  });
});

describe("GET /users/suggested", { timeout: 60_000 }, () => {
  it("suggests active users followed by users the caller follows, most recently active first", async () => {
    const [me, friend, x, y, z, muted] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    await call("PUT", `/users/${friend.user.id}/follow`, { token: me.token });
    for (const t of [x, y, z, muted, me]) await call("PUT", `/users/${t.user.id}/follow`, { token: friend.token });
    await call("PUT", `/users/${z.user.id}/follow`, { token: me.token });
    await call("PUT", `/users/${muted.user.id}/mute`, { token: me.token });
    for (const t of [y, x, z, muted]) await call("POST", "/posts", { token: t.token, json: { text: `active ${t.user.username}` } });
    const res = await call("GET", "/users/suggested", { token: me.token });
    expect(res.status, res.text).toBe(200);
    // y and x posted (x last); z is followed already, muted is muted, the friend and me are left out.
    expect(ids(res)).toEqual([x.user.id, y.user.id]);
    const page = await call("GET", "/users/suggested?count=1", { token: me.token });
    expect(ids(page)).toEqual([x.user.id]);
    expect(ids(await call("GET", `/users/suggested?count=1&before_id=${page.body.meta.min_id}`, { token: me.token }))).toEqual([y.user.id]);
    // Posts older than 30 days do not count.
    const later = Math.floor(Date.now() / 1000) + 31 * 86400;
    expect(ids(await call("GET", "/users/suggested", { token: me.token, now: later }))).toEqual([]);
    expect((await call("GET", "/users/suggested", { token: (await actor("stream")).token })).status).toBe(403);
  });
});
