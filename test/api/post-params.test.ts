import { beforeAll, describe, expect, it } from "vitest";
import { actor, call } from "../support/client";
import * as fx from "../fixtures/media";
import { createPost, dbCallsOf, idsOf } from "../support/fixtures";

// The general post (and user) parameters, wherever posts and users are returned (issue 17).

const SCOPES = "write_post stream follow messages files";
type Actor = Awaited<ReturnType<typeof actor>>;

const post = (a: Actor, text: string, extra: Record<string, unknown> = {}) => createPost(a, text, extra);

describe("rendering parameters", { timeout: 60_000 }, () => {
  let a: Actor, b: Actor, c: Actor;
  let p: any;
  beforeAll(async () => {
    [a, b, c] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    p = await post(a, "render me #params");
  }, 60_000);

  it("include_counts, include_html, include_post_html, include_user_html", async () => {
    const noCounts = (await call("GET", `/posts/${p.id}?include_counts=0`)).body.data;
    expect(noCounts).not.toHaveProperty("counts");
    expect(noCounts.user).not.toHaveProperty("counts");
    const noHtml = (await call("GET", `/posts/${p.id}?include_html=0`)).body.data;
    expect(noHtml.content).not.toHaveProperty("html");
    expect(noHtml.user.content).not.toHaveProperty("html");
    expect(noHtml.content.text).toBe("render me #params");
    const noPostHtml = (await call("GET", `/posts/${p.id}?include_post_html=0`)).body.data;
    expect(noPostHtml.content).not.toHaveProperty("html");
    expect(noPostHtml.user.content).toHaveProperty("html");
    const noUserHtml = (await call("GET", `/posts/${p.id}?include_user_html=0`)).body.data;
    expect(noUserHtml.content).toHaveProperty("html");
    expect(noUserHtml.user.content).not.toHaveProperty("html");
  });

  it("include_user=0 gives user_id; include_client=0 gives the client id as source", async () => {
    const slim = (await call("GET", `/posts/${p.id}?include_user=0&include_client=0`)).body.data;
    expect(slim).not.toHaveProperty("user");
    expect(slim.user_id).toBe(a.user.id);
    expect(slim.source).toBe(a.app.client_id);
    const stream = await call("GET", `/users/${a.user.id}/posts?include_user=0`);
    expect(stream.body.data.every((x: any) => x.user_id === a.user.id && !("user" in x))).toBe(true);
  });

  it("include_presence shows the live status of a post's author and of a repost's original author; without it, none", async () => {
    const [author, reposter] = await Promise.all([actor(`${SCOPES} presence`), actor(SCOPES)]);
    const original = await post(author, "present");
    expect((await call("PUT", "/users/me/presence", { token: author.token, json: { presence: "writing tests" } })).status).toBe(200);
    expect((await call("PUT", `/posts/${original.id}/repost`, { token: reposter.token })).status).toBe(201);
    for (const [path, token] of [
      [`/users/${reposter.user.id}/posts`, c.token],
      ["/posts/streams/me", reposter.token],
    ]) {
      const shown = await call("GET", `${path}?include_presence=1`, { token });
      const repost = shown.body.data.find((x: any) => x.repost_of?.id === original.id);
      expect(repost.user.presence, path).toBe("offline");
      expect(repost.repost_of.user.presence, path).toBe("writing tests");
      const hidden = await call("GET", path, { token });
      expect(hidden.body.data.find((x: any) => x.repost_of?.id === original.id).repost_of.user, path).not.toHaveProperty("presence");
    }
    const one = await call("GET", `/posts/${original.id}?include_presence=1`, { token: c.token });
    expect(one.body.data.user.presence).toBe("writing tests");
  });

  it("include_bookmarked_by and include_reposted_by list the users, most recent first, in the same round trip", async () => {
    await call("PUT", `/posts/${p.id}/bookmark`, { token: b.token });
    await call("PUT", `/posts/${p.id}/bookmark`, { token: c.token });
    await call("PUT", `/posts/${p.id}/repost`, { token: b.token });
    const plain = (await call("GET", `/posts/${p.id}`)).body.data;
    expect(plain).not.toHaveProperty("bookmarked_by");
    const res = await call("GET", `/posts/${p.id}?include_bookmarked_by=1&include_reposted_by=1`);
    expect(res.body.data.bookmarked_by.map((u: any) => u.id)).toEqual([c.user.id, b.user.id]);
    expect(res.body.data.reposted_by.map((u: any) => u.id)).toEqual([b.user.id]);
    expect(dbCallsOf(res)).toBe(1);
    // A repost shows those of its original.
    const repost = (await call("GET", `/users/${b.user.id}/posts?include_bookmarked_by=1`)).body.data[0];
    expect(repost.repost_of.id).toBe(p.id);
    expect(repost.bookmarked_by.map((u: any) => u.id)).toEqual([c.user.id, b.user.id]);
    const list = await call("GET", `/posts?ids=${p.id}&include_reposted_by=1`);
    expect(list.body.data[0].reposted_by.map((u: any) => u.id)).toEqual([b.user.id]);
  });

  it("users embedded anywhere follow the user parameters: interactions, messages, files", async () => {
    const inter = await call("GET", "/users/me/interactions?include_counts=0&include_user=0", { token: a.token });
    expect(inter.status).toBe(200);
    expect(inter.body.data[0].objects[0]).not.toHaveProperty("counts");
    expect(inter.body.data[0].objects[0].user_id).toBe(a.user.id);

    const ch = await call("POST", "/channels", { token: a.token, json: { type: "com.example.room", acl: { read: { public: true } } } });
    expect(ch.status, ch.text).toBe(201);
    await call("POST", `/channels/${ch.body.data.id}/messages`, { token: a.token, json: { text: "hello" } });
    const msgs = await call("GET", `/channels/${ch.body.data.id}/messages?include_user=0`);
    expect(msgs.body.data[0].user_id).toBe(a.user.id);
    expect(msgs.body.data[0]).not.toHaveProperty("user");
    expect((await call("GET", `/channels/${ch.body.data.id}?include_presence=1`)).body.data.user.presence).toBe("offline");

    const form = new FormData();
    form.append("content", new Blob([fx.png]), "p.png");
    form.append("type", "com.example.photo");
    const file = await call("POST", "/files?include_counts=0", { token: a.token, body: form });
    expect(file.status, file.text).toBe(201);
    expect(file.body.data.user).not.toHaveProperty("counts");
    expect((await call("GET", `/files/${file.body.data.id}?include_user=0`, { token: a.token })).body.data.user_id).toBe(a.user.id);
  });
});

describe("filtering parameters", { timeout: 60_000 }, () => {
  let me: Actor, friend: Actor, stranger: Actor, other: Actor;
  let first: number;
  beforeAll(async () => {
    [me, friend, stranger, other] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    await call("PUT", `/users/${friend.user.id}/follow`, { token: me.token });
    first = Number((await post(other, "before everything")).id);
  }, 60_000);

  it("include_directed_posts=0 leaves out posts led by mentions of users the caller does not follow", async () => {
    const toStranger = await post(other, `@${stranger.user.username} hi there`);
    const toFriend = await post(other, `@${friend.user.username} hello`);
    const toMe = await post(other, `@${me.user.username} hey you`);
    const mine = await post(me, `@${stranger.user.username} from me`);
    const inside = await post(other, `hi @${stranger.user.username} inside`);
    const all = idsOf(await call("GET", `/posts/streams/global?since_id=${first}`, { token: me.token }));
    expect(all).toEqual(expect.arrayContaining([toStranger.id, toFriend.id, toMe.id, mine.id, inside.id]));
    const undirected = idsOf(await call("GET", `/posts/streams/global?since_id=${first}&include_directed_posts=0`, { token: me.token }));
    expect(undirected).not.toContain(toStranger.id);
    expect(undirected).toEqual(expect.arrayContaining([toFriend.id, toMe.id, mine.id, inside.id]));
    // Without a token nobody is followed: every directed post is left out.
    const anonymous = idsOf(await call("GET", `/posts/streams/global?since_id=${first}&include_directed_posts=0`));
    expect(anonymous).toEqual(expect.arrayContaining([inside.id]));
    expect(anonymous).not.toContain(toFriend.id);
  });

  it("include_mention_posts=0, include_replies=0", async () => {
    const mention = await post(other, `talking about @${friend.user.username}`);
    const plain = await post(other, "plain words");
    const reply = await post(friend, "a reply", { reply_to: plain.id });
    const noMentions = idsOf(await call("GET", `/posts/streams/global?since_id=${mention.id - 1}&include_mention_posts=0`));
    expect(noMentions).toEqual([reply.id, plain.id]);
    const noReplies = idsOf(await call("GET", `/posts/streams/global?since_id=${mention.id - 1}&include_replies=0`));
    expect(noReplies).toEqual([plain.id, mention.id]);
  });

  it("include_copy_mentions=0 on a user's mentions leaves out copy mentions", async () => {
    const normal = await post(other, `hello @${stranger.user.username}`);
    const copy = await post(other, `nice post /@${stranger.user.username}`);
    const mentions = `/users/${stranger.user.id}/mentions`;
    expect(idsOf(await call("GET", mentions)).slice(0, 2)).toEqual([copy.id, normal.id]);
    const noCopies = idsOf(await call("GET", `${mentions}?include_copy_mentions=0`));
    expect(noCopies).toContain(normal.id);
    expect(noCopies).not.toContain(copy.id);
  });

  it("include_muted=1 keeps muted users' posts; include_deleted=0 on lookups", async () => {
    const noisy = await actor(SCOPES);
    const loud = await post(noisy, "loud post");
    await call("PUT", `/users/${noisy.user.id}/mute`, { token: me.token });
    expect(idsOf(await call("GET", `/posts/streams/global?since_id=${loud.id - 1}`, { token: me.token }))).not.toContain(loud.id);
    expect(idsOf(await call("GET", `/posts/streams/global?since_id=${loud.id - 1}&include_muted=1`, { token: me.token }))).toContain(loud.id);

    await call("DELETE", `/posts/${loud.id}`, { token: noisy.token });
    expect((await call("GET", `/posts/${loud.id}`)).body.data.is_deleted).toBe(true);
    expect((await call("GET", `/posts/${loud.id}?include_deleted=0`)).status).toBe(404);
    const keep = await post(other, "still here");
    expect(idsOf(await call("GET", `/posts?ids=${loud.id},${keep.id}&include_deleted=0`))).toEqual([keep.id]);
  });
});
