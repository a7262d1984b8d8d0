import { describe, expect, it } from "vitest";
import { DB } from "../support/db";
import { actor, call } from "../support/client";
import { createPost, dbCallsOf } from "../support/fixtures";

// A read with a token this isolate already knows runs at once and checks the token inside its
// first batch (src/auth/token-cache.ts): one round trip instead of two, and a token deleted
// anywhere (here: straight in the database, as another isolate would) is still refused at once.

describe("the token check that rides with the first read", () => {
  it("a known token's read costs one round trip; its first use costs two", async () => {
    const a = await actor("basic stream write_post");
    const post = await createPost(a, "one round trip");
    const first = await call("GET", `/posts/${post.id}`, { token: a.token });
    const again = await call("GET", `/posts/${post.id}`, { token: a.token });
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(post.id);
    // The POST looked the token up already, so both reads may find it known; the second surely does.
    expect(dbCallsOf(first)).toBeLessThanOrEqual(2);
    expect(dbCallsOf(again)).toBe(1);
  });

  it("a token deleted elsewhere is a 401 on the next read, whatever the route would have answered", async () => {
    const a = await actor("basic stream write_post");
    const post = await createPost(a, "soon unauthorized");
    expect((await call("GET", "/posts/streams/me", { token: a.token })).status).toBe(200);
    await DB.prepare("DELETE FROM tokens WHERE user_id = ?").bind(Number(a.user.id)).run();
    for (const path of [`/posts/${post.id}`, "/posts/streams/me", "/users/me", "/posts/not-a-number", "/users/me/channels/subscribed"]) {
      const res = await call("GET", path, { token: a.token });
      expect(res.status, path).toBe(401);
      expect(res.body.meta.error_message, path).toMatch(/unknown or was deleted/);
    }
  });

  it("a user disabled elsewhere is a 401 on the next read", async () => {
    const a = await actor("basic stream");
    expect((await call("GET", "/users/me", { token: a.token })).status).toBe(200);
    await DB.prepare("UPDATE users SET is_disabled = 1 WHERE id = ?").bind(Number(a.user.id)).run();
    expect((await call("GET", "/users/me", { token: a.token })).status).toBe(401);
    expect((await call("GET", "/posts/streams/global", { token: a.token })).status).toBe(401);
  });

  it("a read that writes (update_presence) writes nothing for a token deleted elsewhere", async () => {
    const a = await actor("basic stream presence");
    expect((await call("GET", "/posts/streams/global?update_presence=online", { token: a.token })).status).toBe(200);
    const presence = async () =>
      (await DB.prepare("SELECT presence FROM presence WHERE user_id = ?").bind(Number(a.user.id)).first<{ presence: string }>())?.presence;
    expect(await presence()).toBe("online");
    await DB.prepare("DELETE FROM tokens WHERE user_id = ?").bind(Number(a.user.id)).run();
    const res = await call("GET", "/posts/streams/global?update_presence=away%20now", { token: a.token });
    expect(res.status).toBe(401);
    expect(await presence()).toBe("online");
  });

  it("GET /token shows the user as of now, not as the isolate last saw the token", async () => {
    const a = await actor("basic stream update_profile");
    expect((await call("GET", "/token", { token: a.token })).status).toBe(200);
    await DB.prepare("UPDATE users SET name = 'Renamed Elsewhere' WHERE id = ?").bind(Number(a.user.id)).run();
    const res = await call("GET", "/token", { token: a.token });
    expect(res.body.data.user.name).toBe("Renamed Elsewhere");
  });

  it("a write whose check rides in its first read costs a round trip less, and writes nothing for a token deleted elsewhere", async () => {
    const [a, b] = await Promise.all([actor("basic stream write_post messages public_messages follow"), actor("basic write_post")]);
    const target = await createPost(b, "to bookmark, repost and answer");
    const channel = await call("POST", "/channels", { token: a.token, json: { type: "io.example.chat", acl: { read: { public: true } } } });
    expect(channel.status, channel.text).toBe(201);
    expect((await call("GET", "/users/me", { token: a.token })).status).toBe(200);
    // Known token: the check rides with the post's read, then the write (two round trips, not three).
    const bookmark = await call("PUT", `/posts/${target.id}/bookmark`, { token: a.token });
    expect(bookmark.status, bookmark.text).toBe(200);
    expect(dbCallsOf(bookmark)).toBe(2);
    const reply = await call("POST", "/posts", { token: a.token, json: { text: "an answer", reply_to: target.id } });
    expect(reply.status, reply.text).toBe(201);
    expect(dbCallsOf(reply)).toBe(2);
    const mention = await call("POST", "/posts", { token: a.token, json: { text: `hello @${b.user.username}` } });
    expect(mention.status, mention.text).toBe(201);
    expect(dbCallsOf(mention)).toBe(2);
    const message = await call("POST", `/channels/${channel.body.data.id}/messages`, { token: a.token, json: { text: "hello" } });
    expect(message.status, message.text).toBe(201);
    expect(dbCallsOf(message)).toBe(2);
    const c = await actor("basic");
    const follow = await call("PUT", `/users/${c.user.id}/follow`, { token: a.token });
    expect(follow.status, follow.text).toBe(200);
    expect(dbCallsOf(follow)).toBe(2);

    await DB.prepare("DELETE FROM tokens WHERE user_id = ?").bind(Number(a.user.id)).run();
    const count = async (q: string) => Number(await DB.prepare(q).bind(Number(a.user.id)).first("n"));
    const before = {
      posts: await count("SELECT count(*) AS n FROM posts WHERE user_id = ?"),
      messages: await count("SELECT count(*) AS n FROM messages WHERE user_id = ?"),
      follows: await count("SELECT count(*) AS n FROM follows WHERE follower_id = ?"),
      bookmarks: await count("SELECT count(*) AS n FROM bookmarks WHERE user_id = ?"),
    };
    for (const [method, path, json] of [
      ["PUT", `/posts/${target.id}/repost`, undefined],
      ["PUT", `/posts/${target.id}/bookmark`, { note: "changed" }],
      ["POST", "/posts", { text: "another answer", reply_to: target.id }],
      ["POST", "/posts", { text: "not a reply" }],
      ["POST", `/channels/${channel.body.data.id}/messages`, { text: "hello again" }],
      ["PUT", `/users/${b.user.id}/follow`, undefined],
    ] as const) {
      const res = await call(method, path, { token: a.token, json });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    expect(await count("SELECT count(*) AS n FROM posts WHERE user_id = ?")).toBe(before.posts);
    expect(await count("SELECT count(*) AS n FROM messages WHERE user_id = ?")).toBe(before.messages);
    expect(await count("SELECT count(*) AS n FROM follows WHERE follower_id = ?")).toBe(before.follows);
    expect(await count("SELECT count(*) AS n FROM bookmarks WHERE user_id = ? AND note IS NULL")).toBe(before.bookmarks);
  });

  it("a deleted token stays refused and a new one works at once", async () => {
    const a = await actor("basic stream");
    expect((await call("GET", "/users/me", { token: a.token })).status).toBe(200);
    expect((await call("DELETE", "/token", { token: a.token })).status).toBe(200);
    expect((await call("GET", "/users/me", { token: a.token })).status).toBe(401);
    expect((await call("GET", "/users/me", { token: a.token })).status).toBe(401);
    const b = await actor("basic stream");
    expect((await call("GET", "/users/me", { token: b.token })).status).toBe(200);
  });
});
