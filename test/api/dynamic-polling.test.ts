import { describe, expect, it } from "vitest";
import { actor, call } from "../support/client";
import { createPost, dbCallsOf, testClock } from "../support/fixtures";

// Dynamic polling (reference how-to): a list asked with `since_id` carries `meta.deleted_ids` and
// `meta.revised_ids`, the stream's posts (a channel's messages) deleted or revised after post
// `since_id` was created, so that a polling client learns that what it shows changed.

const tick = testClock();
type Actor = Awaited<ReturnType<typeof actor>>;

const post = (a: Actor, text: string, extra: Record<string, unknown> = {}) => createPost(a, text, extra, { now: tick() });

describe("post streams with since_id: meta.deleted_ids and meta.revised_ids", { timeout: 60_000 }, () => {
  it("a poll since the newest post reports a revision and a delete made after the first poll", async () => {
    const [a, b] = await Promise.all([actor("write_post stream follow"), actor("write_post stream follow")]);
    await call("PUT", `/users/${a.user.id}/follow`, { token: b.token, now: tick() });
    const old = await post(a, "old, to be revised #pollwatch");
    const gone = await post(a, "to be deleted #pollwatch");
    const reply = await post(b, "a reply", { reply_to: old.id });
    const repost = await call("PUT", `/posts/${old.id}/repost`, { token: b.token, now: tick() });
    expect(repost.status).toBe(201);
    const newest = await post(a, "newest #pollwatch");

    // PUT …/repost answers the original: b's repost is the newest post of b's own stream.
    const repostId = (await call("GET", `/users/${b.user.id}/posts`)).body.data[0].id;
    expect(repostId).not.toBe(old.id);

    // First poll: everything up to `newest`; nothing has changed since.
    const first = await call("GET", `/users/${a.user.id}/posts`);
    expect(first.body.meta.max_id).toBe(newest.id);
    const quiet = await call("GET", `/users/${a.user.id}/posts?since_id=${newest.id}`);
    expect(quiet.body.data).toEqual([]);
    expect(quiet.body.meta.deleted_ids).toBeUndefined();
    expect(quiet.body.meta.revised_ids).toBeUndefined();

    // After the first poll: a revision, a delete, and the repost taken back.
    expect((await call("PUT", `/posts/${old.id}`, { token: a.token, json: { text: "old, revised #pollwatch" }, now: tick() })).status).toBe(200);
    expect((await call("DELETE", `/posts/${gone.id}`, { token: a.token, now: tick() })).status).toBe(200);
    expect((await call("DELETE", `/posts/${old.id}/repost`, { token: b.token, now: tick() })).status).toBe(200);

    const polls = {
      user: `/users/${a.user.id}/posts`,
      global: "/posts/streams/global",
      tag: "/posts/tags/pollwatch",
      thread: `/posts/${reply.id}/thread`,
    };
    for (const [name, path] of Object.entries(polls)) {
      const res = await call("GET", `${path}?since_id=${newest.id}`);
      expect(res.status, name).toBe(200);
      expect(res.body.data, name).toEqual([]);
      expect(dbCallsOf(res), name).toBe(1);
      const deleted = (res.body.meta.deleted_ids ?? []) as string[];
      // The deleted post is in all but the thread of `old` (its own thread).
      expect(deleted.includes(gone.id), name).toBe(name !== "thread");
      expect(res.body.meta.revised_ids, name).toContain(old.id);
      // b's repost is in none of these.
      expect(deleted.includes(repostId), name).toBe(false);
    }
    // b's own stream hears of the repost taken back (its row is gone).
    const reposter = await call("GET", `/users/${b.user.id}/posts?since_id=${newest.id}`);
    expect(reposter.body.meta.deleted_ids).toEqual([repostId]);
    // The follower's home timeline (posts fanned out to it) hears of all three.
    const home = await call("GET", `/posts/streams/me?since_id=${newest.id}`, { token: b.token });
    expect(home.body.meta).toMatchObject({ deleted_ids: [repostId, gone.id], revised_ids: [old.id] });
    // include_deleted=0 hides the deleted post from pages, not from the ids of what changed.
    const hidden = await call("GET", `${polls.user}?since_id=${newest.id}&include_deleted=0`);
    expect(hidden.body.meta.deleted_ids).toContain(gone.id);

    // Another user's stream, and a poll since after the changes, report nothing.
    const c = await actor("write_post stream");
    const other = await call("GET", `/users/${c.user.id}/posts?since_id=${newest.id}`);
    expect(other.body.meta.deleted_ids).toBeUndefined();
    expect(other.body.meta.revised_ids).toBeUndefined();
    const later = await post(a, "after the changes");
    const after = await call("GET", `${polls.user}?since_id=${later.id}`);
    expect(after.body.meta.deleted_ids).toBeUndefined();
    expect(after.body.meta.revised_ids).toBeUndefined();
    // An older since_id hears of them too (the changes came after that post as well).
    const older = await call("GET", `${polls.user}?since_id=${gone.id}`);
    expect(older.body.meta.deleted_ids).toContain(gone.id);
    // Without since_id there is nothing to compare with.
    expect((await call("GET", polls.user)).body.meta.deleted_ids).toBeUndefined();
  });

  it("a post revised and then deleted is only in deleted_ids; mentions hear of posts deleted that mentioned the user", async () => {
    const [a, b] = await Promise.all([actor("write_post stream"), actor("write_post stream")]);
    const mention = await post(a, `hello @${b.user.username}`);
    const mark = await post(a, "mark");
    await call("PUT", `/posts/${mention.id}`, { token: a.token, json: { text: `hello again @${b.user.username}` }, now: tick() });
    await call("DELETE", `/posts/${mention.id}`, { token: a.token, now: tick() });
    const res = await call("GET", `/users/${b.user.id}/mentions?since_id=${mark.id}`);
    expect(res.status).toBe(200);
    expect(res.body.meta.deleted_ids).toEqual([mention.id]);
    expect(res.body.meta.revised_ids).toBeUndefined();
  });
});

describe("GET /channels/{id}/messages with since_id: meta.deleted_ids", { timeout: 60_000 }, () => {
  it("reports the channel's messages deleted after message since_id was created", async () => {
    const a = await actor("messages public_messages");
    const ch = (await call("POST", "/channels", { token: a.token, json: { type: "com.example.chat", acl: { read: { public: true } } }, now: tick() })).body
      .data;
    const send = async (text: string) => (await call("POST", `/channels/${ch.id}/messages`, { token: a.token, json: { text }, now: tick() })).body.data;
    const gone = await send("to be deleted");
    const newest = await send("newest");
    const quiet = await call("GET", `/channels/${ch.id}/messages?since_id=${newest.id}`);
    expect(quiet.body.data).toEqual([]);
    expect(quiet.body.meta.deleted_ids).toBeUndefined();

    expect((await call("DELETE", `/channels/${ch.id}/messages/${gone.id}`, { token: a.token, now: tick() })).status).toBe(200);
    const res = await call("GET", `/channels/${ch.id}/messages?since_id=${newest.id}`);
    expect(res.status).toBe(200);
    expect(res.body.meta.deleted_ids).toEqual([gone.id]);
    expect(dbCallsOf(res)).toBe(1);
    // Another channel's poll does not hear of it.
    const other = (await call("POST", "/channels", { token: a.token, json: { type: "com.example.chat", acl: { read: { public: true } } }, now: tick() })).body
      .data;
    expect((await call("GET", `/channels/${other.id}/messages?since_id=${newest.id}`)).body.meta.deleted_ids).toBeUndefined();
  });
});
