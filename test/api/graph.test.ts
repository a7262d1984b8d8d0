import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { actor, appToken, call, makeApp, makeUser, userToken } from "../support/client";
import { DB } from "../support/db";
import { idsOf } from "../support/fixtures";

// The social graph: follow, mute, block (issue 4).

const SCOPES = "write_post stream follow";
const user = async (id: string, token?: string) => (await call("GET", `/users/${id}`, { token })).body.data;

describe("follow", { timeout: 60_000 }, () => {
  it("follows (the followed user comes back with you_follow), counts both sides, once; unfollow undoes it", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const res = await call("PUT", `/users/${b.user.id}/follow`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: b.user.id, you_follow: true, follows_you: false, counts: { followers: 1 } });
    expect((await call("PUT", `/users/${b.user.id}/follow`, { token: a.token })).body.data.counts.followers).toBe(1);
    expect((await user(a.user.id)).counts.following).toBe(1);
    expect((await user(a.user.id, b.token)).follows_you).toBe(true);

    const undo = await call("DELETE", `/users/@${b.user.username}/follow`, { token: a.token });
    expect(undo.status).toBe(200);
    expect(undo.body.data).toMatchObject({ id: b.user.id, you_follow: false, counts: { followers: 0 } });
    expect((await call("DELETE", `/users/${b.user.id}/follow`, { token: a.token })).body.data.counts.followers).toBe(0);
    expect((await user(a.user.id)).counts.following).toBe(0);
  });

  it("records a follow as an interaction for the followed user", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    await call("PUT", `/users/${b.user.id}/follow`, { token: a.token });
    const row = await DB.prepare(
      "select g.object_id, e.actor_id from interaction_groups g join interaction_events e on e.group_id = g.id where g.action = 'follow' and g.user_id = ?",
    )
      .bind(Number(b.user.id))
      .first();
    expect(row).toEqual({ object_id: Number(b.user.id), actor_id: Number(a.user.id) });
  });

  it("needs a user token with the follow scope; 400 for oneself, 404 for no user", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    expect((await call("PUT", `/users/${b.user.id}/follow`)).status).toBe(401);
    const noScope = await actor("write_post");
    const forbidden = await call("PUT", `/users/${b.user.id}/follow`, { token: noScope.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.meta.error_message).toContain("follow");
    expect((await call("PUT", `/users/${b.user.id}/mute`, { token: await appToken(a.app) })).status).toBe(403);
    const self = await call("PUT", "/users/me/follow", { token: a.token });
    expect(self.status).toBe(400);
    expect(self.body.meta.error_message).toContain("'user_id'");
    expect((await call("PUT", `/users/${a.user.id}/block`, { token: a.token })).status).toBe(400);
    for (const path of ["follow", "mute", "block"]) {
      expect((await call("PUT", `/users/999999999999/${path}`, { token: a.token })).status).toBe(404);
      expect((await call("DELETE", `/users/999999999999/${path}`, { token: a.token })).status).toBe(404);
    }
    expect((await call("PUT", "/users/abc/follow", { token: a.token })).status).toBe(400);
  });

  it("keeps follower counts exact under many concurrent follows", async () => {
    const star = await actor(SCOPES);
    const app = await makeApp();
    const fans = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const u = await makeUser();
        return { user: u, token: await userToken(app, u, SCOPES) };
      }),
    );
    await Promise.all(fans.flatMap((f) => [1, 2].map(() => call("PUT", `/users/${star.user.id}/follow`, { token: f.token }))));
    expect((await user(star.user.id)).counts.followers).toBe(12);
    const row = await DB.prepare("select count(*) as n from follows where followed_id = ?").bind(Number(star.user.id)).first();
    expect(row).toEqual({ n: 12 });
    await Promise.all(fans.flatMap((f) => [1, 2].map(() => call("DELETE", `/users/${star.user.id}/follow`, { token: f.token }))));
    expect((await user(star.user.id)).counts.followers).toBe(0);
    const counts = await Promise.all(fans.map(async (f) => (await user(f.user.id)).counts.following));
    expect(counts.every((n) => n === 0)).toBe(true);
  }, 180_000);
});

describe("mute", { timeout: 60_000 }, () => {
  it("mutes (you_muted) and unmutes; a muted user's posts leave the caller's streams", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    await call("PUT", `/users/${b.user.id}/follow`, { token: a.token });
    const p = (await call("POST", "/posts", { token: b.token, json: { text: "muted words" } })).body.data;
    expect(idsOf(await call("GET", "/posts/streams/me", { token: a.token }))).toContain(p.id);
    const res = await call("PUT", `/users/${b.user.id}/mute`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: b.user.id, you_muted: true, you_follow: true });
    expect((await call("PUT", `/users/${b.user.id}/mute`, { token: a.token })).body.data.you_muted).toBe(true);
    expect(idsOf(await call("GET", "/posts/streams/me", { token: a.token }))).not.toContain(p.id);
    // Muting is private: the muted user sees nothing.
    expect((await user(a.user.id, b.token)).you_muted).toBe(false);
    const undo = await call("DELETE", `/users/${b.user.id}/mute`, { token: a.token });
    expect(undo.body.data.you_muted).toBe(false);
    expect(idsOf(await call("GET", "/posts/streams/me", { token: a.token }))).toContain(p.id);
  });
});

describe("block", { timeout: 60_000 }, () => {
  it("blocks (you_blocked), ends follows both ways with their counts, and stops new follows", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    await call("PUT", `/users/${b.user.id}/follow`, { token: a.token });
    await call("PUT", `/users/${a.user.id}/follow`, { token: b.token });
    expect((await user(a.user.id)).counts).toMatchObject({ followers: 1, following: 1 });

    const res = await call("PUT", `/users/${b.user.id}/block`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: b.user.id, you_blocked: true, you_follow: false, follows_you: false, you_can_follow: false });
    for (const u of [a, b]) expect((await user(u.user.id)).counts).toMatchObject({ followers: 0, following: 0 });
    expect((await call("PUT", `/users/${b.user.id}/block`, { token: a.token })).status).toBe(200);

    const refused = await call("PUT", `/users/${a.user.id}/follow`, { token: b.token });
    expect(refused.status).toBe(403);
    expect((await call("PUT", `/users/${b.user.id}/follow`, { token: a.token })).status).toBe(403);
    expect((await user(a.user.id, b.token)).you_can_follow).toBe(false);

    // Each is left out of the other's streams.
    const pb = (await call("POST", "/posts", { token: b.token, json: { text: `blocked says hi @${a.user.username}` } })).body.data;
    expect(idsOf(await call("GET", "/users/me/mentions", { token: a.token }))).not.toContain(pb.id);
    expect(idsOf(await call("GET", `/posts/streams/global?since_id=${Number(pb.id) - 1}`, { token: a.token }))).not.toContain(pb.id);

    const undo = await call("DELETE", `/users/${b.user.id}/block`, { token: a.token });
    expect(undo.body.data).toMatchObject({ you_blocked: false, you_can_follow: true });
    expect(idsOf(await call("GET", "/users/me/mentions", { token: a.token }))).toContain(pb.id);
    const follow = await call("PUT", `/users/${a.user.id}/follow`, { token: b.token });
    expect(follow.status).toBe(200);
    expect(follow.body.data.counts.followers).toBe(1);
  });
});
