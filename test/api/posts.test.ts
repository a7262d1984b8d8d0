import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { actor, appToken, call, makeApp, makeUser, userToken } from "../support/client";
import { DB } from "../support/db";
import { createPost, dbCallsOf, idsOf } from "../support/fixtures";

// Posts: create, revise, delete, repost, bookmark, lookups and streams (issue 4).

const SCOPES = "write_post stream follow";
const T0 = Math.floor(Date.now() / 1000);

type Actor = Awaited<ReturnType<typeof actor>>;

const post = (a: Actor, text: string, extra: Record<string, unknown> = {}, now?: number, query = "") => createPost(a, text, extra, { now, query });

const user = async (id: string) => (await call("GET", `/users/${id}`)).body.data;

describe("POST /posts", { timeout: 60_000 }, () => {
  let a: Actor;
  let b: Actor;
  beforeAll(async () => {
    [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
  }, 60_000);

  it("creates a post (201) with content, counts, source, embedded user and its own thread", async () => {
    const res = await call("POST", "/posts", { token: a.token, json: { text: `hi @${b.user.username} #greeting` } });
    expect(res.status).toBe(201);
    expect(res.body.meta.code).toBe(201);
    const p = res.body.data;
    expect(p.id).toMatch(/^\d+$/);
    expect(p.thread_id).toBe(p.id);
    expect(p).not.toHaveProperty("reply_to");
    expect(p.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(p.content.text).toBe(`hi @${b.user.username} #greeting`);
    expect(p.content.html).toContain(`data-mention-id="${b.user.id}"`);
    expect(p.content.entities.mentions).toEqual([expect.objectContaining({ id: b.user.id, text: b.user.username })]);
    expect(p.content.entities.tags).toEqual([expect.objectContaining({ text: "greeting" })]);
    expect(p.counts).toEqual({ bookmarks: 0, replies: 0, reposts: 0, threads: 0 });
    expect(p.source).toEqual({ id: a.app.client_id, name: a.app.name, url: "https://app.example.com" });
    expect(p.user.id).toBe(a.user.id);
    expect(p.user.counts.posts).toBeGreaterThanOrEqual(1);
    expect(p.you_bookmarked).toBe(false);
    expect(p.you_reposted).toBe(false);
    for (const k of ["is_deleted", "is_nsfw", "is_revised", "raw", "repost_of"]) expect(p).not.toHaveProperty(k);
  });

  it("puts the new id in place of {object_id} in link URLs", async () => {
    const p = await post(a, "see [this](https://example.com/p/{object_id}) and https://example.org/{object_id}");
    expect(p.content.entities.links.map((l: any) => l.url)).toEqual([`https://example.com/p/${p.id}`, `https://example.org/${p.id}`]);
    expect(p.content.html).toContain(`href="https://example.com/p/${p.id}"`);
    expect(p.content.html).toContain(`href="https://example.org/${p.id}"`);
    expect(p.content.html).not.toContain('href="https://example.org/{object_id}"');
    // The text itself stays as written.
    expect(p.content.text).toContain("https://example.org/{object_id}");
    const again = await call("GET", `/posts/${p.id}`);
    expect(again.body.data.content).toEqual(p.content);
  });

  it("needs a user token with the write_post scope", async () => {
    expect((await call("POST", "/posts", { json: { text: "x" } })).status).toBe(401);
    const noScope = await actor("stream");
    const forbidden = await call("POST", "/posts", { token: noScope.token, json: { text: "x" } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.meta.error_message).toContain("write_post");
    const app = await makeApp();
    expect((await call("POST", "/posts", { token: await appToken(app), json: { text: "x" } })).status).toBe(403);
  });

  it("refuses bad input with a 400 naming the field, and non-JSON with 415", async () => {
    const w = await actor(SCOPES);
    const cases: [unknown, string][] = [
      [{}, "'text'"],
      [{ text: "" }, "'text'"],
      [{ text: "   " }, "'text'"],
      [{ text: 5 }, "'text'"],
      [{ text: "x".repeat(257) }, "'text'"],
      [{ text: "ok", reply_to: "abc" }, "'reply_to'"],
      [{ text: "ok", reply_to: "999999999999" }, "'reply_to'"],
      [{ text: "ok", is_nsfw: "maybe" }, "'is_nsfw'"],
      [{ text: "ok", raw: [1] }, "'raw'"],
      [{ text: "ok", raw: { "io.example.thing": "x" } }, "'raw"],
      [{ text: "ok", raw: { "io.example.big": [{ v: "x".repeat(8200) }] } }, "'raw'"],
    ];
    for (const [json, field] of cases) {
      const res = await call("POST", "/posts", { token: w.token, json });
      expect(res.status, JSON.stringify(json).slice(0, 60)).toBe(400);
      expect(res.body.meta.error_message).toContain(field);
      expect(res.body).not.toHaveProperty("data");
    }
    const form = await call("POST", "/posts", { token: w.token, form: { text: "hello" } });
    expect(form.status).toBe(415);
  });

  it("accepts text of exactly 256 characters", async () => {
    const text = "é".repeat(256);
    expect((await post(b, text)).content.text).toBe(text);
  });

  it("marks #nsfw posts NSFW unless is_nsfw says otherwise", async () => {
    expect((await post(a, "late night #NSFW")).is_nsfw).toBe(true);
    expect(await post(a, "late night #nsfw but fine", { is_nsfw: false })).not.toHaveProperty("is_nsfw");
    expect((await post(a, "no tag here", { is_nsfw: true })).is_nsfw).toBe(true);
    expect(await post(a, "no tag at all")).not.toHaveProperty("is_nsfw");
  });

  it("keeps raw and returns it only with include_raw=1 or include_post_raw=1", async () => {
    const raw = { "io.example.geo": [{ lat: 1.5, lon: 2 }] };
    const p = await post(b, "with raw", { raw });
    expect(p).not.toHaveProperty("raw");
    expect((await call("GET", `/posts/${p.id}`)).body.data).not.toHaveProperty("raw");
    expect((await call("GET", `/posts/${p.id}?include_raw=1`)).body.data.raw).toEqual(raw);
    expect((await call("GET", `/posts/${p.id}?include_post_raw=1`)).body.data.raw).toEqual(raw);
    const exact = { k: [{ v: "" }] };
    exact.k[0].v = "x".repeat(8192 - JSON.stringify(exact).length);
    expect(JSON.stringify(exact).length).toBe(8192);
    const created = await call("POST", "/posts?include_raw=1", { token: b.token, json: { text: "exactly at the limit", raw: exact } });
    expect(created.status).toBe(201);
    expect(created.body.data.raw).toEqual(exact);
  });

  it("refuses the same text from the same user within 60 seconds", async () => {
    const c = await actor(SCOPES);
    const first = await post(c, "same words", {}, T0);
    const dup = await call("POST", "/posts", { token: c.token, json: { text: "same words" }, now: T0 + 59 });
    expect(dup.status).toBe(400);
    expect(dup.body.meta.error_message).toContain("'text'");
    // Someone else may say it, and the author may again once 60 seconds have passed.
    await post(b, "same words", {}, T0 + 1);
    const later = await post(c, "same words", {}, T0 + 60);
    expect(later.id).not.toBe(first.id);
    // A deleted post does not count.
    await call("DELETE", `/posts/${later.id}`, { token: c.token, now: T0 + 61 });
    await post(c, "same words", {}, T0 + 62);
    const u = await user(c.user.id);
    expect(u.counts.posts).toBe(2);
  });

  it("sets the personal marker with update_marker=1", async () => {
    const c = await actor(SCOPES);
    const p = await post(c, "mark me", {}, undefined, "?update_marker=1");
    const row = await DB.prepare("select position, last_read_id from markers where user_id = ? and name = 'personal'").bind(Number(c.user.id)).first();
    expect(row).toEqual({ position: Number(p.id), last_read_id: Number(p.id) });
    const q = await post(c, "mark me again", {}, undefined, "?update_marker=1");
    const row2 = await DB.prepare("select position from markers where user_id = ? and name = 'personal'").bind(Number(c.user.id)).first();
    expect(row2).toEqual({ position: Number(q.id) });
  });
});

describe("replies and threads", { timeout: 60_000 }, () => {
  it("replies join the root's thread and count as replies and threads of their ancestors", async () => {
    const [a, b, c] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    const root = await post(a, "root");
    const r1 = await post(b, "first reply", { reply_to: root.id });
    expect(r1.reply_to).toBe(root.id);
    expect(r1.thread_id).toBe(root.id);
    const r2 = await post(c, "reply to the reply", { reply_to: Number(r1.id) });
    expect(r2.thread_id).toBe(root.id);
    await post(a, "author answers", { reply_to: root.id });

    const rootNow = (await call("GET", `/posts/${root.id}`)).body.data;
    expect(rootNow.counts).toMatchObject({ replies: 2, threads: 3 });
    const r1Now = (await call("GET", `/posts/${r1.id}`)).body.data;
    expect(r1Now.counts).toMatchObject({ replies: 1, threads: 1 });

    const thread = await call("GET", `/posts/${r2.id}/thread`);
    expect(thread.status).toBe(200);
    expect(thread.body.data).toHaveLength(4);
    expect(thread.body.data.at(-1).id).toBe(root.id);
    expect(thread.body.data.every((p: any) => p.thread_id === root.id && p.pagination_id === p.id)).toBe(true);

    // Deleting a reply takes it out of the counts; the thread lists it as deleted unless include_deleted=0.
    await call("DELETE", `/posts/${r2.id}`, { token: c.token });
    expect((await call("GET", `/posts/${root.id}`)).body.data.counts).toMatchObject({ replies: 2, threads: 2 });
    expect((await call("GET", `/posts/${r1.id}`)).body.data.counts).toMatchObject({ replies: 0, threads: 0 });
    const tombstone = (await call("GET", `/posts/${root.id}/thread`)).body.data.find((x: any) => x.id === r2.id);
    expect(tombstone).toMatchObject({ id: r2.id, is_deleted: true });
    expect(tombstone).not.toHaveProperty("content");
    expect(idsOf(await call("GET", `/posts/${root.id}/thread?include_deleted=0`))).not.toContain(r2.id);

    // A reply is recorded as an interaction for the author replied to (not for one's own post).
    const rows = await DB.prepare(
      "select g.user_id, g.action, g.object_id, e.actor_id from interaction_groups g join interaction_events e on e.group_id = g.id where g.object_id in (?, ?) and g.action = 'reply' order by e.id",
    )
      .bind(Number(root.id), Number(r1.id))
      .all();
    expect(rows.results).toEqual([
      { user_id: Number(a.user.id), action: "reply", object_id: Number(root.id), actor_id: Number(b.user.id) },
      { user_id: Number(b.user.id), action: "reply", object_id: Number(r1.id), actor_id: Number(c.user.id) },
    ]);
  });

  it("refuses replies to deleted posts and answers 404 for the thread of an unknown post", async () => {
    const a = await actor(SCOPES);
    const p = await post(a, "soon gone");
    await call("DELETE", `/posts/${p.id}`, { token: a.token });
    const res = await call("POST", "/posts", { token: a.token, json: { text: "too late", reply_to: p.id } });
    expect(res.status).toBe(400);
    expect(res.body.meta.error_message).toContain("'reply_to'");
    expect((await call("GET", "/posts/999999999999/thread")).status).toBe(404);
  });

  it("a reply to a repost replies to the original", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const original = await post(a, "worth sharing");
    await call("PUT", `/posts/${original.id}/repost`, { token: b.token });
    const repostId = idsOf(await call("GET", `/users/${b.user.id}/posts`))[0];
    const reply = await post(b, "and a reply", { reply_to: repostId });
    expect(reply.reply_to).toBe(original.id);
    expect(reply.thread_id).toBe(original.id);
  });
});

describe("PUT /posts/{id} (revise) and GET /posts/{id}/revisions", { timeout: 60_000 }, () => {
  it('revises within 300 seconds, once; earlier versions are listed from revision "0"', async () => {
    const [a, m] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "first version #draft", {}, T0);
    const none = await call("GET", `/posts/${p.id}/revisions`);
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);

    const res = await call("PUT", `/posts/${p.id}`, { token: a.token, json: { text: `second version @${m.user.username}` }, now: T0 + 299 });
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(p.id);
    expect(res.body.data.content.text).toBe(`second version @${m.user.username}`);
    expect(res.body.data.is_revised).toBe(true);
    expect(res.body.data.created_at).toBe(p.created_at);

    const revisions = await call("GET", `/posts/${p.id}/revisions`);
    expect(revisions.body.data).toHaveLength(1);
    expect(revisions.body.data[0]).toMatchObject({ id: p.id, revision: "0", content: p.content });
    expect(revisions.body.data[0]).not.toHaveProperty("is_revised");

    // Mentions follow the current version.
    expect(idsOf(await call("GET", `/users/${m.user.id}/mentions`))).toContain(p.id);

    const twice = await call("PUT", `/posts/${p.id}`, { token: a.token, json: { text: "third version" }, now: T0 + 200 });
    expect(twice.status).toBe(400);
    expect(twice.body.meta.error_message).toMatch(/already revised/);
    expect((await call("GET", `/posts/${p.id}/revisions`)).body.data).toHaveLength(1);
  });

  it("refuses a revision 300 seconds after creation or by someone else (403), 404 for no post", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "fixed in time", {}, T0);
    const late = await call("PUT", `/posts/${p.id}`, { token: a.token, json: { text: "too late" }, now: T0 + 300 });
    expect(late.status).toBe(400);
    expect(late.body.meta.error_message).toContain("300 seconds");
    const other = await call("PUT", `/posts/${p.id}`, { token: b.token, json: { text: "not mine" }, now: T0 + 10 });
    expect(other.status).toBe(403);
    expect((await call("PUT", "/posts/999999999999", { token: a.token, json: { text: "x" } })).status).toBe(404);
    expect((await call("GET", "/posts/999999999999/revisions")).status).toBe(404);
    expect((await call("GET", `/posts/${p.id}`)).body.data.content.text).toBe("fixed in time");
  });
});

describe("DELETE /posts/{id}", { timeout: 60_000 }, () => {
  it("lets only the author delete; the post keeps its id and loses its content", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "short-lived", { raw: { "io.example.x": [{}] } });
    const before = (await user(a.user.id)).counts.posts;
    const forbidden = await call("DELETE", `/posts/${p.id}`, { token: b.token });
    expect(forbidden.status).toBe(403);
    const res = await call("DELETE", `/posts/${p.id}`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: p.id, is_deleted: true, thread_id: p.id });
    expect(res.body.data).not.toHaveProperty("content");
    const got = await call("GET", `/posts/${p.id}?include_raw=1`);
    expect(got.body.data).toMatchObject({ id: p.id, is_deleted: true });
    expect(got.body.data).not.toHaveProperty("content");
    expect(got.body.data).not.toHaveProperty("raw");
    expect((await user(a.user.id)).counts.posts).toBe(before - 1);
    // Deleting again changes nothing.
    expect((await call("DELETE", `/posts/${p.id}`, { token: a.token })).status).toBe(200);
    expect((await user(a.user.id)).counts.posts).toBe(before - 1);
    expect(idsOf(await call("GET", `/users/${a.user.id}/posts`))).toContain(p.id);
    expect(idsOf(await call("GET", `/users/${a.user.id}/posts?include_deleted=0`))).not.toContain(p.id);
    expect((await call("DELETE", "/posts/999999999999", { token: a.token })).status).toBe(404);
  });

  it("removes the reposts of a deleted post", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "reposted then deleted");
    await call("PUT", `/posts/${p.id}/repost`, { token: b.token });
    const repostId = idsOf(await call("GET", `/users/${b.user.id}/posts`))[0];
    expect((await user(b.user.id)).counts.posts).toBe(1);
    await call("DELETE", `/posts/${p.id}`, { token: a.token });
    expect((await call("GET", `/posts/${repostId}`)).status).toBe(404);
    expect((await user(b.user.id)).counts.posts).toBe(0);
    expect((await call("GET", `/users/${b.user.id}/posts`)).body.data).toEqual([]);
  });
});

describe("reposts", { timeout: 60_000 }, () => {
  it("reposts once (201, then 200), embeds the original and mirrors its content; undo removes it", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "original thought #idea");
    const res = await call("PUT", `/posts/${p.id}/repost`, { token: b.token });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ id: p.id, you_reposted: true, counts: { reposts: 1 } });
    const again = await call("PUT", `/posts/${p.id}/repost`, { token: b.token });
    expect(again.status).toBe(200);
    expect(again.body.data.counts.reposts).toBe(1);

    const stream = await call("GET", `/users/${b.user.id}/posts`, { token: b.token });
    const repost = stream.body.data[0];
    expect(repost.id).not.toBe(p.id);
    expect(repost.thread_id).toBe(repost.id);
    expect(repost.user.id).toBe(b.user.id);
    expect(repost.repost_of).toMatchObject({ id: p.id, user: { id: a.user.id }, source: { id: a.app.client_id } });
    expect(repost.content).toEqual(p.content);
    expect(repost.you_reposted).toBe(true);
    expect(repost.source.id).toBe(b.app.client_id);
    expect((await user(b.user.id)).counts.posts).toBe(1);

    // Reposting the repost reposts the original (already done: 200).
    expect((await call("PUT", `/posts/${repost.id}/repost`, { token: b.token })).status).toBe(200);

    const undo = await call("DELETE", `/posts/${p.id}/repost`, { token: b.token });
    expect(undo.status).toBe(200);
    expect(undo.body.data).toMatchObject({ id: p.id, you_reposted: false, counts: { reposts: 0 } });
    expect((await call("GET", `/posts/${repost.id}`)).status).toBe(404);
    expect((await user(b.user.id)).counts.posts).toBe(0);
    const undoAgain = await call("DELETE", `/posts/${p.id}/repost`, { token: b.token });
    expect(undoAgain.body.data.counts.reposts).toBe(0);
  });

  it("a repost embeds its original with the viewer's own flags on the original and its author", async () => {
    const [a, b, c] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "to be shared");
    await call("PUT", `/users/${a.user.id}/follow`, { token: c.token });
    await call("PUT", `/posts/${p.id}/bookmark`, { token: c.token });
    await call("PUT", `/posts/${p.id}/repost`, { token: b.token });
    const [repost] = (await call("GET", `/users/${b.user.id}/posts`, { token: c.token })).body.data;
    expect(repost).toMatchObject({ you_reposted: false, user: { id: b.user.id, you_follow: false } });
    expect(repost.repost_of).toMatchObject({
      id: p.id,
      you_bookmarked: true,
      you_reposted: false,
      user: { id: a.user.id, you_follow: true, follows_you: false },
    });
    // A post that is not a repost embeds none.
    const [own] = (await call("GET", `/users/${a.user.id}/posts`, { token: c.token })).body.data;
    expect(own).toMatchObject({ id: p.id, you_bookmarked: true });
    expect(own.repost_of ?? null).toBeNull();
  });

  it("refuses reposting one's own or a deleted post, 404 for no post", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "mine");
    expect((await call("PUT", `/posts/${p.id}/repost`, { token: a.token })).status).toBe(400);
    await call("DELETE", `/posts/${p.id}`, { token: a.token });
    expect((await call("PUT", `/posts/${p.id}/repost`, { token: b.token })).status).toBe(400);
    expect((await call("PUT", "/posts/999999999999/repost", { token: b.token })).status).toBe(404);
    expect((await call("DELETE", "/posts/999999999999/repost", { token: b.token })).status).toBe(404);
  });

  it("records the repost as an interaction for the original's author", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "interactive");
    await call("PUT", `/posts/${p.id}/repost`, { token: b.token });
    const row = await DB.prepare(
      "select g.user_id, e.actor_id from interaction_groups g join interaction_events e on e.group_id = g.id where g.action = 'repost' and g.object_id = ?",
    )
      .bind(Number(p.id))
      .first();
    expect(row).toEqual({ user_id: Number(a.user.id), actor_id: Number(b.user.id) });
  });
});

describe("bookmarks", { timeout: 60_000 }, () => {
  it("bookmarks once, counts on the post and the user, undo; deleted posts can be bookmarked", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "keep this");
    const res = await call("PUT", `/posts/${p.id}/bookmark`, { token: b.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: p.id, you_bookmarked: true, counts: { bookmarks: 1 } });
    expect((await call("PUT", `/posts/${p.id}/bookmark`, { token: b.token })).body.data.counts.bookmarks).toBe(1);
    expect((await user(b.user.id)).counts.bookmarks).toBe(1);
    expect((await call("GET", `/posts/${p.id}`, { token: b.token })).body.data.you_bookmarked).toBe(true);
    expect((await call("GET", `/posts/${p.id}`, { token: a.token })).body.data.you_bookmarked).toBe(false);

    const undo = await call("DELETE", `/posts/${p.id}/bookmark`, { token: b.token });
    expect(undo.body.data).toMatchObject({ you_bookmarked: false, counts: { bookmarks: 0 } });
    expect((await call("DELETE", `/posts/${p.id}/bookmark`, { token: b.token })).body.data.counts.bookmarks).toBe(0);
    expect((await user(b.user.id)).counts.bookmarks).toBe(0);

    await call("DELETE", `/posts/${p.id}`, { token: a.token });
    const deleted = await call("PUT", `/posts/${p.id}/bookmark`, { token: b.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ is_deleted: true, you_bookmarked: true, counts: { bookmarks: 1 } });
    expect((await call("PUT", "/posts/999999999999/bookmark", { token: b.token })).status).toBe(404);
    const row = await DB.prepare("select count(*) as n from interaction_groups where action = 'bookmark' and object_id = ? and user_id = ?")
      .bind(Number(p.id), Number(a.user.id))
      .first();
    expect(row).toEqual({ n: 1 });
  });

  it("a bookmark of a repost bookmarks the original", async () => {
    const [a, b, c] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "shared and kept");
    await call("PUT", `/posts/${p.id}/repost`, { token: b.token });
    const repostId = idsOf(await call("GET", `/users/${b.user.id}/posts`))[0];
    const res = await call("PUT", `/posts/${repostId}/bookmark`, { token: c.token });
    expect(res.body.data).toMatchObject({ id: p.id, you_bookmarked: true, counts: { bookmarks: 1 } });
  });

  it("keeps counts exact under many concurrent bookmarks and reposts (no lost or double updates)", async () => {
    const author = await actor(SCOPES);
    const p = await post(author, "popular");
    const app = await makeApp();
    const fans = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const u = await makeUser();
        return { user: u, token: await userToken(app, u, SCOPES) };
      }),
    );
    // Every fan bookmarks and reposts, twice each, all at once.
    const results = await Promise.all(
      fans.flatMap((f) => [
        call("PUT", `/posts/${p.id}/bookmark`, { token: f.token }),
        call("PUT", `/posts/${p.id}/bookmark`, { token: f.token }),
        call("PUT", `/posts/${p.id}/repost`, { token: f.token }),
        call("PUT", `/posts/${p.id}/repost`, { token: f.token }),
      ]),
    );
    expect(results.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    const now = (await call("GET", `/posts/${p.id}`)).body.data;
    expect(now.counts.bookmarks).toBe(16);
    expect(now.counts.reposts).toBe(16);
    const rows = await DB.prepare(
      "select (select count(*) from bookmarks where post_id = ?1) as bookmarks, (select count(*) from posts where repost_of = ?1) as reposts",
    )
      .bind(Number(p.id))
      .first();
    expect(rows).toEqual({ bookmarks: 16, reposts: 16 });
    const users = await Promise.all(fans.map((f) => user(f.user.id)));
    expect(users.every((u) => u.counts.bookmarks === 1 && u.counts.posts === 1)).toBe(true);

    // And undone concurrently, half of them twice.
    await Promise.all(
      fans.flatMap((f, i) => [
        call("DELETE", `/posts/${p.id}/bookmark`, { token: f.token }),
        call("DELETE", `/posts/${p.id}/repost`, { token: f.token }),
        ...(i % 2 ? [call("DELETE", `/posts/${p.id}/bookmark`, { token: f.token }), call("DELETE", `/posts/${p.id}/repost`, { token: f.token })] : []),
      ]),
    );
    const after = (await call("GET", `/posts/${p.id}`)).body.data;
    expect(after.counts).toMatchObject({ bookmarks: 0, reposts: 0 });
    const usersAfter = await Promise.all(fans.map((f) => user(f.user.id)));
    expect(usersAfter.every((u) => u.counts.bookmarks === 0 && u.counts.posts === 0)).toBe(true);
  }, 180_000);
});

describe("lookups", { timeout: 60_000 }, () => {
  it("GET /posts/{id}: 404 for no post, 400 for a non-integer id", async () => {
    expect((await call("GET", "/posts/999999999999")).status).toBe(404);
    const bad = await call("GET", "/posts/abc");
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("'post_id'");
  });

  it("GET /posts?ids= returns found posts in the order asked, skipping unknown ids", async () => {
    const a = await actor(SCOPES);
    const p1 = await post(a, "one");
    const p2 = await post(a, "two");
    const res = await call("GET", `/posts?ids=${p2.id},999999999999,${p1.id},${p2.id}`);
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual([p2.id, p1.id]);
    expect((await call("GET", "/posts?ids=1,x")).status).toBe(400);
    const missing = await call("GET", "/posts");
    expect(missing.status).toBe(400);
    expect(missing.body.meta.error_message).toContain("'ids'");
  });

  it("shows you_bookmarked and you_reposted for the caller", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "flags");
    await call("PUT", `/posts/${p.id}/bookmark`, { token: b.token });
    await call("PUT", `/posts/${p.id}/repost`, { token: b.token });
    const mine = (await call("GET", `/posts?ids=${p.id}`, { token: b.token })).body.data[0];
    expect(mine).toMatchObject({ you_bookmarked: true, you_reposted: true });
    const anon = (await call("GET", `/posts?ids=${p.id}`)).body.data[0];
    expect(anon).toMatchObject({ you_bookmarked: false, you_reposted: false });
  });

  it("shows a deleted client as [REMOVED]", async () => {
    const a = await actor(SCOPES);
    const p = await post(a, "from an app that goes away");
    expect((await call("DELETE", `/admin/apps/${a.app.id}`, { token: "test-admin-token" })).status).toBe(200);
    expect((await call("GET", `/posts/${p.id}`)).body.data.source).toEqual({ id: "0", name: "[REMOVED]", url: "" });
  });
});

describe("streams", { timeout: 60_000 }, () => {
  let a: Actor, b: Actor, c: Actor, viewer: Actor;
  let first: number;
  beforeAll(async () => {
    [a, b, c, viewer] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    first = Number((await post(viewer, "viewer's first")).id);
  }, 60_000);

  it("global: human users' posts and replies, no reposts, deleted posts as tombstones, bots left out", async () => {
    const bot = await actor(SCOPES, { type: "bot" });
    const p = await post(a, "global hello");
    const r = await post(b, "global reply", { reply_to: p.id });
    const gone = await post(a, "global gone");
    await call("DELETE", `/posts/${gone.id}`, { token: a.token });
    const beep = await post(bot, "beep");
    await call("PUT", `/posts/${p.id}/repost`, { token: c.token });
    const res = await call("GET", `/posts/streams/global?count=200&since_id=${first}`);
    expect(res.status).toBe(200);
    const got = idsOf(res);
    expect(got).toEqual(expect.arrayContaining([p.id, r.id]));
    expect(res.body.data.find((x: any) => x.id === gone.id)).toMatchObject({ is_deleted: true });
    expect(got).not.toContain(beep.id);
    expect(res.body.data.some((x: any) => x.repost_of)).toBe(false);
    expect(idsOf(await call("GET", `/posts/streams/global?count=200&since_id=${first}&include_deleted=0`))).not.toContain(gone.id);
  });

  it("me: own and followed users' posts and reposts; unified adds mentions; needs a user token with stream", async () => {
    const d = await actor(SCOPES);
    await call("PUT", `/users/${a.user.id}/follow`, { token: d.token });
    const own = await post(d, "my own");
    const followed = await post(a, "from someone followed");
    const stranger = await post(c, "from a stranger");
    const mention = await post(c, `hey @${d.user.username}`);
    await call("PUT", `/posts/${stranger.id}/repost`, { token: a.token });
    const me = await call("GET", "/posts/streams/me", { token: d.token });
    expect(me.status).toBe(200);
    const meIds = idsOf(me);
    expect(meIds).toEqual(expect.arrayContaining([own.id, followed.id]));
    expect(meIds).not.toContain(stranger.id);
    expect(meIds).not.toContain(mention.id);
    const repost = me.body.data.find((x: any) => x.repost_of?.id === stranger.id);
    expect(repost?.user.id).toBe(a.user.id);

    const unified = idsOf(await call("GET", "/posts/streams/unified", { token: d.token }));
    expect(unified).toEqual(expect.arrayContaining([own.id, followed.id, mention.id]));

    expect((await call("GET", "/posts/streams/me")).status).toBe(401);
    const noStream = await actor("write_post");
    expect((await call("GET", "/posts/streams/me", { token: noStream.token })).status).toBe(403);
    expect((await call("GET", "/posts/streams/unified", { token: await appToken(a.app) })).status).toBe(403);
  });

  it("muted and blocked users are left out of the caller's streams, not out of their own post list", async () => {
    const [m, x, y] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    for (const who of [x, y]) await call("PUT", `/users/${who.user.id}/follow`, { token: m.token });
    const px = await post(x, `x talks to @${m.user.username}`);
    const py = await post(y, "y talks");
    const pz = await post(a, "a talks");
    await call("PUT", `/posts/${pz.id}/repost`, { token: y.token });
    const before = idsOf(await call("GET", "/posts/streams/unified", { token: m.token }));
    expect(before).toEqual(expect.arrayContaining([px.id, py.id]));

    await call("PUT", `/users/${x.user.id}/mute`, { token: m.token });
    await call("PUT", `/users/${a.user.id}/block`, { token: m.token });
    const unified = await call("GET", "/posts/streams/unified", { token: m.token });
    expect(idsOf(unified)).not.toContain(px.id);
    expect(idsOf(unified)).toContain(py.id);
    // y's repost of a blocked user's post is left out too.
    expect(unified.body.data.some((p: any) => p.repost_of?.id === pz.id)).toBe(false);
    expect(idsOf(await call("GET", "/posts/streams/me", { token: m.token }))).not.toContain(px.id);
    expect(idsOf(await call("GET", "/users/me/mentions", { token: m.token }))).not.toContain(px.id);
    expect(idsOf(await call("GET", `/posts/streams/global?since_id=${Number(px.id) - 1}&count=200`, { token: m.token }))).not.toContain(px.id);
    expect(idsOf(await call("GET", `/posts/streams/global?since_id=${Number(px.id) - 1}&count=200`))).toContain(px.id);
    expect(idsOf(await call("GET", `/users/${x.user.id}/posts`, { token: m.token }))).toContain(px.id);

    // The blocked user no longer sees the blocker's posts in streams either.
    const pm = await post(m, "m talks");
    expect(idsOf(await call("GET", `/posts/streams/global?since_id=${Number(pm.id) - 1}`, { token: a.token }))).not.toContain(pm.id);

    await call("DELETE", `/users/${x.user.id}/mute`, { token: m.token });
    expect(idsOf(await call("GET", "/posts/streams/unified", { token: m.token }))).toContain(px.id);
  });

  it("/users/{id}/posts and /users/{id}/mentions: by id or @username; 404 for no user; me needs a token", async () => {
    const p = await post(b, `for @${c.user.username}`);
    const byName = await call("GET", `/users/@${b.user.username}/posts`);
    expect(byName.status).toBe(200);
    expect(idsOf(byName)[0]).toBe(p.id);
    expect(idsOf(await call("GET", `/users/${c.user.id}/mentions`))).toContain(p.id);
    expect(idsOf(await call("GET", `/users/me/mentions`, { token: c.token }))).toContain(p.id);
    expect((await call("GET", "/users/me/mentions")).status).toBe(401);
    expect((await call("GET", "/users/999999999999/posts")).status).toBe(404);
    expect((await call("GET", "/users/999999999999/mentions")).status).toBe(404);
    expect((await call("GET", "/users/@nosuchuser_zz/posts")).status).toBe(404);
  });

  it("paginates with count, since_id, before_id and negative count", async () => {
    const w = await actor(SCOPES);
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await post(w, `page item ${i}`, {}, T0 + i * 10)).id);
    const newest = [...made].reverse();
    const path = `/users/${w.user.id}/posts`;

    const p1 = await call("GET", `${path}?count=3`);
    expect(idsOf(p1)).toEqual(newest.slice(0, 3));
    expect(p1.body.meta).toEqual({ code: 200, more: true, max_id: newest[0], min_id: newest[2] });
    expect(p1.body.data.map((p: any) => p.pagination_id)).toEqual(newest.slice(0, 3));

    const p2 = await call("GET", `${path}?count=3&before_id=${p1.body.meta.min_id}`);
    expect(idsOf(p2)).toEqual(newest.slice(3, 6));
    const p3 = await call("GET", `${path}?count=3&before_id=${p2.body.meta.min_id}`);
    expect(idsOf(p3)).toEqual(newest.slice(6));
    expect(p3.body.meta.more).toBe(false);

    const since = await call("GET", `${path}?since_id=${made[4]}`);
    expect(idsOf(since)).toEqual([made[6], made[5]]);
    const range = await call("GET", `${path}?since_id=${made[1]}&before_id=${made[4]}`);
    expect(idsOf(range)).toEqual([made[3], made[2]]);
    const oldest = await call("GET", `${path}?count=-2`);
    expect(idsOf(oldest)).toEqual([made[1], made[0]]);
    expect(oldest.body.meta.more).toBe(true);
    const oldestSince = await call("GET", `${path}?count=-2&since_id=${made[1]}`);
    expect(idsOf(oldestSince)).toEqual([made[3], made[2]]);

    expect(idsOf(await call("GET", `${path}?count=abc`))).toEqual(newest);
    const bad = await call("GET", `${path}?since_id=last_read`);
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("'since_id'");
    const empty = await call("GET", `${path}?since_id=${made[6]}`);
    expect(empty.body).toEqual({ meta: { code: 200, more: false }, data: [] });
  });
});

describe("one database round trip per read", { timeout: 60_000 }, () => {
  let reposts: string[] = [];
  let all: string[] = [];
  beforeAll(async () => {
    // 12 authors (each with an app of their own) with 17 posts each: 204 posts, written straight
    // into the database (the volume is what matters here), then 24 reposts through the API.
    const authors = await Promise.all(Array.from({ length: 12 }, () => actor(SCOPES)));
    const apps = await DB.prepare(`select id, client_id from apps where client_id in (${authors.map(() => "?").join(",")})`)
      .bind(...authors.map((w) => w.app.client_id))
      .all<{ id: number; client_id: string }>();
    const appOf = new Map(apps.results.map((r) => [r.client_id, r.id]));
    const at = Math.floor(Date.now() / 1000);
    const insert = DB.prepare(
      `insert into posts (user_id, app_id, thread_id, text, html, entities, created_at, revised_at)
       values (?, ?, 0, ?, ?, '{"links":[],"mentions":[],"tags":[]}', ?, ?) returning id`,
    );
    const rows = await DB.batch(
      authors.flatMap((w, i) =>
        Array.from({ length: 17 }, (_, k) =>
          insert.bind(Number(w.user.id), appOf.get(w.app.client_id)!, `bulk ${i}/${k}`, `<span>bulk ${i}/${k}</span>`, at, at),
        ),
      ),
    );
    await DB.prepare("update posts set thread_id = id where thread_id = 0").run();
    const ids17 = rows.map((r) => String((r.results[0] as { id: number }).id));
    const perAuthor = authors.map((_, i) => ids17.slice(i * 17, i * 17 + 17));
    all = perAuthor.flat();
    await Promise.all(
      authors.map(async (w, i) => {
        for (const target of [perAuthor[(i + 1) % authors.length][0], perAuthor[(i + 2) % authors.length][1]]) {
          const res = await call("PUT", `/posts/${target}/repost`, { token: w.token });
          if (res.status !== 201) throw new Error(`repost: ${res.status} ${res.text}`);
        }
      }),
    );
    reposts = (await Promise.all(authors.map(async (w) => idsOf(await call("GET", `/users/${w.user.id}/posts?count=2`))))).flat();
    all.push(...reposts);
  }, 120_000);

  it("GET /posts/{id} of a repost (two users, two sources) costs one call; with a token too, once the isolate knows the token", async () => {
    const res = await call("GET", `/posts/${reposts[0]}`);
    expect(res.status).toBe(200);
    expect(res.body.data.repost_of.user.id).not.toBe(res.body.data.user.id);
    expect(dbCallsOf(res)).toBe(1);
    const t = await actor(SCOPES);
    // The token's first use looks it up (one more call); later reads carry its check in their own batch.
    const first = await call("GET", `/posts/${reposts[0]}`, { token: t.token });
    expect(dbCallsOf(first)).toBe(2);
    const withToken = await call("GET", `/posts/${reposts[0]}`, { token: t.token });
    expect(withToken.status).toBe(200);
    expect(dbCallsOf(withToken)).toBe(1);
  });

  it("a page of 200 posts costs one call: GET /posts?ids=, the global stream, a user's posts and a thread", async () => {
    expect(all.length).toBeGreaterThan(200);
    const byIds = await call("GET", `/posts?ids=${all.join(",")}`);
    expect(byIds.body.data).toHaveLength(200);
    expect(idsOf(byIds)).toEqual(all.slice(0, 200));
    expect(dbCallsOf(byIds)).toBe(1);

    const global = await call("GET", "/posts/streams/global?count=200");
    expect(global.body.data).toHaveLength(200);
    expect(dbCallsOf(global)).toBe(1);

    const byUser = await call("GET", `/users/${(await call("GET", `/posts/${reposts[0]}`)).body.data.user.id}/posts?count=200`);
    expect(byUser.body.data.some((p: any) => p.repost_of)).toBe(true);
    expect(dbCallsOf(byUser)).toBe(1);

    const thread = await call("GET", `/posts/${all[0]}/thread`);
    expect(dbCallsOf(thread)).toBe(1);
  });
});
