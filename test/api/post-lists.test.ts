import { beforeAll, describe, expect, it } from "vitest";
import { actor, call } from "../support/client";
import { DB } from "../support/db";
import * as fx from "../fixtures/media";
import { createPost, dbCallsOf, idsOf } from "../support/fixtures";

// Tags, explore streams, bookmarks lists, post interactions, reports and NSFW reposts (issue 17).

const SCOPES = "write_post stream follow";
type Actor = Awaited<ReturnType<typeof actor>>;

const post = (a: Actor, text: string, extra: Record<string, unknown> = {}, now?: number) => createPost(a, text, extra, { now });

describe("GET /posts/tags/{tag} (and /posts/tag/{tag})", { timeout: 60_000 }, () => {
  it("lists posts carrying a tag (matched as tags compare), newest first, paginated; deleted ones as tombstones", async () => {
    const [a, b, bot] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES, { type: "bot" })]);
    const p1 = await post(a, "first #Night_Owls");
    const p2 = await post(b, "second #nightowls and more");
    const p3 = await post(bot, "from a bot #NIGHTOWLS");
    await post(a, "no tag nightowls");
    const gone = await post(a, "gone #nightowls");
    await call("DELETE", `/posts/${gone.id}`, { token: a.token });
    await call("PUT", `/posts/${p1.id}/repost`, { token: b.token });

    const res = await call("GET", "/posts/tags/NightOwls");
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual([gone.id, p3.id, p2.id, p1.id]);
    expect(res.body.data[0]).toMatchObject({ is_deleted: true });
    expect(res.body.data.every((p: any) => p.pagination_id === p.id)).toBe(true);
    expect(dbCallsOf(res)).toBe(1);
    expect(idsOf(await call("GET", "/posts/tags/%23nightowls?include_deleted=0&count=2"))).toEqual([p3.id, p2.id]);
    const older = await call("GET", `/posts/tag/nightowls?include_deleted=0&before_id=${p2.id}`);
    expect(older.status).toBe(200);
    expect(idsOf(older)).toEqual([p1.id]);
    expect(idsOf(await call("GET", "/posts/tags/nosuchtagatall"))).toEqual([]);
    // A revision that drops the tag takes the post off the tag's list.
    await call("PUT", `/posts/${p2.id}`, { token: b.token, json: { text: "second, revised" } });
    expect(idsOf(await call("GET", "/posts/tags/nightowls?include_deleted=0"))).toEqual([p3.id, p1.id]);
    expect((await call("GET", "/posts/tags/%23")).status).toBe(400);
  });
});

describe("post explore streams", { timeout: 60_000 }, () => {
  let a: Actor, b: Actor;
  beforeAll(async () => {
    [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
  }, 60_000);

  it("GET /posts/streams/explore lists the streams, each with its url", async () => {
    const res = await call("GET", "/posts/streams/explore");
    expect(res.status).toBe(200);
    expect(res.body.data.map((s: any) => s.slug)).toEqual(["conversations", "photos", "trending", "missed_conversations", "newcomers", "256"]);
    for (const s of res.body.data) {
      expect(s).toMatchObject({ title: expect.any(String), description: expect.any(String) });
      expect(s.url).toMatch(new RegExp(`/v1/posts/streams/explore/${s.slug}$`));
      expect((await call("GET", s.url)).status, s.slug).toBe(200);
    }
    expect((await call("GET", "/posts/streams/explore/nope")).status).toBe(404);
  });

  it("conversations: threads others replied to; missed_conversations: posts nobody acted on, older than an hour", async () => {
    const now = Math.floor(Date.now() / 1000);
    const root = await post(a, "what do you think?", {}, now - 7200);
    const quiet = await post(a, "anyone?", {}, now - 7200);
    const fresh = await post(a, "just posted", {}, now);
    const selfOnly = await post(b, "talking to myself", {}, now - 7200);
    const reply = await post(b, "a reply", { reply_to: root.id }, now - 7100);
    await post(b, "me again", { reply_to: selfOnly.id }, now - 7100);
    const conversations = idsOf(await call("GET", "/posts/streams/explore/conversations?count=200"));
    expect(conversations).toContain(root.id);
    expect(conversations).not.toContain(selfOnly.id);
    expect(conversations).not.toContain(quiet.id);
    // Kept at write time: the other's reply deleted, the author's own reply does not count; a reply
    // by someone else deeper in the thread does.
    const own = await post(a, "answering myself", { reply_to: root.id }, now - 7000);
    expect((await call("DELETE", `/posts/${reply.id}`, { token: b.token })).status).toBe(200);
    expect(idsOf(await call("GET", "/posts/streams/explore/conversations?count=200"))).not.toContain(root.id);
    await post(b, "deeper", { reply_to: own.id }, now - 6900);
    expect(idsOf(await call("GET", "/posts/streams/explore/conversations?count=200"))).toContain(root.id);
    const missed = idsOf(await call("GET", "/posts/streams/explore/missed_conversations?count=200", { now }));
    expect(missed).toContain(quiet.id);
    expect(missed).not.toContain(root.id);
    expect(missed).not.toContain(fresh.id);
  });

  it("photos: newest first, a post with both an image file and an oEmbed photo once, paged by before_id", async () => {
    const owner = await actor(`${SCOPES} files`);
    const form = new FormData();
    form.set("content", new Blob([fx.png]), "photo.png");
    form.set("type", "com.example.photo");
    form.set("is_public", "1");
    const file = (await call("POST", "/files", { token: owner.token, body: form })).body.data;
    const oembedPhoto = { type: "photo", url: "https://img.example/q.jpg", width: 10, height: 10, version: "1.0" };
    const onlyPhoto = await post(owner, "an oEmbed photo", { raw: { "io.example.core.oembed": [oembedPhoto] } });
    const both = await post(owner, "a file and a photo", {
      raw: { "io.example.core.oembed": [{ "+io.example.core.file": { file_id: file.id, file_token: file.file_token, format: "oembed" } }, oembedPhoto] },
    });
    const newest = await post(owner, "another oEmbed photo", { raw: { "io.example.core.oembed": [oembedPhoto] } });
    const first = await call("GET", "/posts/streams/explore/photos?count=2");
    expect(idsOf(first)).toEqual([newest.id, both.id]);
    const next = idsOf(await call("GET", `/posts/streams/explore/photos?count=200&before_id=${first.body.meta.min_id}`));
    expect(next[0]).toBe(onlyPhoto.id);
    expect([...idsOf(first), ...next].filter((id: string) => id === both.id)).toHaveLength(1);
  });

  it("photos, trending, newcomers and 256", async () => {
    const photo = await post(a, "look", {
      raw: { "io.example.core.oembed": [{ type: "photo", url: "https://img.example/p.jpg", width: 10, height: 10, version: "1.0" }] },
    });
    const text = await post(a, "no photo here");
    const photos = idsOf(await call("GET", "/posts/streams/explore/photos?count=200"));
    expect(photos).toContain(photo.id);
    expect(photos).not.toContain(text.id);

    const hot = await post(a, "hot take");
    for (const t of await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)])) await call("PUT", `/posts/${hot.id}/bookmark`, { token: t.token });
    const trending = idsOf(await call("GET", "/posts/streams/explore/trending?count=200"));
    expect(trending).toContain(hot.id);
    expect(trending).not.toContain(text.id);
    const later = Math.floor(Date.now() / 1000) + 3 * 86400;
    expect(idsOf(await call("GET", "/posts/streams/explore/trending?count=200", { now: later }))).not.toContain(hot.id);

    const long = await post(b, "x".repeat(256));
    const full = idsOf(await call("GET", "/posts/streams/explore/256?count=200"));
    expect(full).toEqual([long.id]);

    const newcomer = await actor(SCOPES);
    const firsts = [];
    // Reposts are not among an author's posts: the first 50 originals stay newcomers.
    expect((await call("PUT", `/posts/${text.id}/repost`, { token: newcomer.token })).status).toBe(201);
    for (let i = 0; i < 51; i++) firsts.push(await post(newcomer, `post number ${i}`));
    const newcomers = idsOf(await call("GET", "/posts/streams/explore/newcomers?count=200"));
    expect(newcomers).toContain(firsts[0].id);
    expect(newcomers).toContain(firsts[49].id);
    expect(newcomers).not.toContain(firsts[50].id);
  });
});

describe("GET /users/{id}/bookmarks", { timeout: 60_000 }, () => {
  it("lists bookmarks most recently bookmarked first; the note only on one's own; needs a user token", async () => {
    const [a, b, author] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    const p1 = await post(author, "bookmark me first");
    const p2 = await post(author, "bookmark me second");
    const p3 = await post(author, "bookmark me later");
    expect((await call("PUT", `/posts/${p2.id}/bookmark`, { token: a.token, json: { note: "Robert has great posts." } })).status).toBe(200);
    await call("PUT", `/posts/${p3.id}/bookmark`, { token: a.token });
    await call("PUT", `/posts/${p1.id}/bookmark`, { token: a.token });
    const mine = await call("GET", "/users/me/bookmarks", { token: a.token });
    expect(mine.status).toBe(200);
    expect(idsOf(mine)).toEqual([p1.id, p3.id, p2.id]);
    expect(mine.body.data[2].note).toBe("Robert has great posts.");
    expect(mine.body.data[0]).not.toHaveProperty("note");
    expect(mine.body.data.every((p: any) => p.you_bookmarked)).toBe(true);
    expect(Number(mine.body.data[0].pagination_id)).toBeGreaterThan(Number(mine.body.data[1].pagination_id));
    expect(dbCallsOf(mine)).toBe(1); // the known token's check rides with the read

    const theirs = await call("GET", `/users/${a.user.id}/bookmarks`, { token: b.token });
    expect(idsOf(theirs)).toEqual([p1.id, p3.id, p2.id]);
    expect(theirs.body.data.some((p: any) => "note" in p)).toBe(false);

    // Bookmarking again with a note changes the note; pages go by the bookmark's id.
    await call("PUT", `/posts/${p3.id}/bookmark`, { token: a.token, json: { note: "changed" } });
    const page = await call("GET", "/users/me/bookmarks?count=2", { token: a.token });
    expect(page.body.data[1]).toMatchObject({ id: p3.id, note: "changed" });
    expect(idsOf(await call("GET", `/users/me/bookmarks?before_id=${page.body.meta.min_id}`, { token: a.token }))).toEqual([p2.id]);

    await call("DELETE", `/posts/${p1.id}`, { token: author.token });
    expect((await call("GET", "/users/me/bookmarks", { token: a.token })).body.data[0]).toMatchObject({ id: p1.id, is_deleted: true });
    expect(idsOf(await call("GET", "/users/me/bookmarks?include_deleted=0", { token: a.token }))).toEqual([p3.id, p2.id]);

    const tooLong = await call("PUT", `/posts/${p2.id}/bookmark`, { token: b.token, json: { note: "n".repeat(129) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.meta.error_message).toContain("'note'");
    expect((await call("GET", `/users/${a.user.id}/bookmarks`)).status).toBe(401);
    expect((await call("GET", "/users/999999999/bookmarks", { token: b.token })).status).toBe(404);
  });
});

describe("GET /posts/{id}/interactions (and /actions), /users/me/actions", { timeout: 60_000 }, () => {
  it("lists bookmarks, reposts and replies of a post, merged, without objects; no token needed", async () => {
    const [author, x, y] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    const p = await post(author, "interact with me");
    await call("PUT", `/posts/${p.id}/bookmark`, { token: x.token });
    await call("PUT", `/posts/${p.id}/bookmark`, { token: y.token });
    await call("PUT", `/posts/${p.id}/repost`, { token: x.token });
    await post(y, "replying", { reply_to: p.id });
    const res = await call("GET", `/posts/${p.id}/interactions`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((i: any) => i.action)).toEqual(["reply", "repost", "bookmark"]);
    expect(res.body.data[2].users.map((u: any) => u.id)).toEqual([y.user.id, x.user.id]);
    expect(res.body.data.every((i: any) => !("objects" in i) && i.pagination_id && i.event_date)).toBe(true);
    expect(dbCallsOf(res)).toBe(1);

    const only = await call("GET", `/posts/${p.id}/actions?filters=bookmark,repost`);
    expect(only.body.data.map((i: any) => i.action)).toEqual(["repost", "bookmark"]);
    expect((await call("GET", `/posts/${p.id}/interactions?exclude=reply&count=1`)).body.data.map((i: any) => i.action)).toEqual(["repost"]);
    const bad = await call("GET", `/posts/${p.id}/interactions?filters=follow`);
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("'filters'");
    expect((await call("GET", "/posts/999999999/interactions")).status).toBe(404);

    const mine = await call("GET", "/users/me/actions", { token: author.token });
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((i: any) => i.action)).toEqual(["reply", "repost", "bookmark"]);
    expect(mine.body.data[0].objects[0].id).toBe(p.id);
  });
});

describe("POST /posts/{id}/report", { timeout: 60_000 }, () => {
  it("stores a report once and answers 201 with the post; 400 for a bad reason, 404 for a deleted post", async () => {
    const [a, reporter] = await Promise.all([actor(SCOPES), actor("stream")]);
    const p = await post(a, "report me");
    const res = await call("POST", `/posts/${p.id}/report`, { token: reporter.token, json: { reason: "nsfw" } });
    expect(res.status).toBe(201);
    expect(res.body.meta.code).toBe(201);
    expect(res.body.data.id).toBe(p.id);
    expect((await call("POST", `/posts/${p.id}/report`, { token: reporter.token, form: { reason: "nsfw" } })).status).toBe(201);
    const bad = await call("POST", `/posts/${p.id}/report`, { token: reporter.token, json: { reason: "boring" } });
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("'reason'");
    expect((await call("POST", `/posts/${p.id}/report`, { token: reporter.token })).status).toBe(400);
    await call("DELETE", `/posts/${p.id}`, { token: a.token });
    expect((await call("POST", `/posts/${p.id}/report`, { token: reporter.token, json: { reason: "nsfw" } })).status).toBe(404);
    expect((await call("POST", `/posts/${p.id}/report`, { json: { reason: "nsfw" } })).status).toBe(401);
  });
});

describe("reposts marked NSFW", { timeout: 60_000 }, () => {
  it("PUT /posts/{id}/repost takes is_nsfw: the repost is NSFW, the embedded original as it was", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const p = await post(a, "safe for work");
    const res = await call("PUT", `/posts/${p.id}/repost`, { token: b.token, json: { is_nsfw: true } });
    expect(res.status).toBe(201);
    const repost = (await call("GET", `/users/${b.user.id}/posts`)).body.data[0];
    expect(repost.repost_of.id).toBe(p.id);
    expect(repost.is_nsfw).toBe(true);
    expect(repost.repost_of).not.toHaveProperty("is_nsfw");
    expect((await call("PUT", `/posts/${p.id}/repost`, { token: b.token, json: { is_nsfw: "maybe" } })).status).toBe(400);
  });
});

// Moved from the kept-response cache's tests (removed, issue 27): each kind of write is made
// between two reads, and the second read must show it, whatever the read path keeps.
describe("reads after writes", { timeout: 60_000 }, () => {
  const WRITER = "basic stream write_post follow update_profile";
  const must = async (p: Promise<{ status: number; text: string; body: any }>) => {
    const res = await p;
    expect(res.status, res.text).toBeLessThan(300);
    return res.body?.data;
  };
  const read = (path: string, token?: string) => must(call("GET", path, { token }));

  it("a post read shows every write to the post, its author, its client and the reader's relationships", async () => {
    const [author, reader] = await Promise.all([actor(WRITER), actor(WRITER)]);
    const p = await post(author, "before");
    const path = `/posts/${p.id}`;
    const step = async (write: () => Promise<unknown>, check: (post: any) => void, token?: string) => {
      await read(path, token);
      await write();
      check(await read(path, token));
    };
    await step(
      () => must(call("PUT", path, { token: author.token, json: { text: "after" } })),
      (q) => expect(q.content.text).toBe("after"),
    );
    await step(
      () => post(reader, "re", { reply_to: p.id }),
      (q) => expect(q.counts.replies).toBe(1),
    );
    await step(
      () => must(call("PUT", `${path}/repost`, { token: reader.token })),
      (q) => expect(q.counts.reposts).toBe(1),
    );
    await step(
      () => must(call("PUT", `${path}/bookmark`, { token: reader.token })),
      (q) => expect(q.you_bookmarked).toBe(true),
      reader.token,
    );
    await step(
      () => must(call("PATCH", "/users/me", { token: author.token, json: { name: "New Name" } })),
      (q) => expect(q.user.name).toBe("New Name"),
    );
    await step(
      () => must(call("PUT", `/users/${author.user.id}/follow`, { token: reader.token })),
      (q) => {
        expect(q.user.you_follow).toBe(true);
        expect(q.user.counts.followers).toBe(1);
      },
      reader.token,
    );
    await step(
      () => must(call("DELETE", path, { token: author.token })),
      (q) => expect(q.is_deleted).toBe(true),
    );
    // A client never changes but by its deletion; the isolate that deletes it forgets the client
    // it remembered for renders (stores/app-refs.ts) at once.
    await step(
      () => must(call("DELETE", `/admin/apps/${author.app.id}`, { token: "test-admin-token" })),
      (q) => expect(q.source).toEqual({ id: "0", name: "[REMOVED]", url: "" }),
    );
  });

  it("the personal, unified, user, mentions, tag and thread lists show a new post; unfollowing and becoming a feed take effect", async () => {
    const [me, friend] = await Promise.all([actor(WRITER), actor(WRITER)]);
    const root = await post(friend, "root #afterwrites");
    await must(call("PUT", `/users/${friend.user.id}/follow`, { token: me.token }));
    const lists: [string, string | undefined][] = [
      ["/posts/streams/me", me.token],
      ["/posts/streams/unified", me.token],
      [`/users/${friend.user.id}/posts`, undefined],
      [`/users/${me.user.id}/mentions`, undefined],
      ["/posts/tags/afterwrites", undefined],
      [`/posts/${root.id}/thread`, undefined],
      ["/posts/streams/global", undefined],
    ];
    for (const [path, token] of lists) await read(path, token);
    const reply = await post(friend, `@${me.user.username} hi #afterwrites`, { reply_to: root.id });
    for (const [path, token] of lists)
      expect(
        (await read(path, token)).map((p: any) => p.id),
        path,
      ).toContain(reply.id);
    await must(call("DELETE", `/users/${friend.user.id}/follow`, { token: me.token }));
    expect((await read("/posts/streams/me", me.token)).some((p: any) => p.user?.id === friend.user.id)).toBe(false);
    // The global stream lists human users' posts only.
    await DB.prepare("UPDATE users SET type = 'feed' WHERE id = ?").bind(Number(friend.user.id)).run();
    expect((await read("/posts/streams/global")).some((p: any) => p.user?.id === friend.user.id)).toBe(false);
  });
});
