import { describe, expect, it } from "vitest";
import { actor, call, type ApiResponse } from "../helpers";
import { DB } from "../db";
import { isPostgres } from "../../src/db";

// Post reads, the global stream and the interactions page answer again from a kept response
// while nothing they show was written (issue 19). Whatever is kept, a reader never sees a
// response from before a write that returned: each kind of write is made between a kept read
// and the next read here, and the next read must show it.

const SCOPES = "basic stream write_post follow update_profile";

/** Reads `path` until the answer comes from a kept response (kept after the response, so not at once). */
async function kept(path: string, token?: string): Promise<ApiResponse> {
  for (let i = 0; i < 50; i++) {
    const res = await call("GET", path, { token });
    expect(res.status).toBe(200);
    if (res.headers.get("x-cache") === "hit") return res;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${path} was never answered from a kept response`);
}

async function read(path: string, token?: string) {
  const res = await call("GET", path, { token });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The data of a call that must succeed (any 2xx: creations answer 201). */
async function dataOf(p: Promise<ApiResponse>) {
  const res = await p;
  expect(res.status, res.text).toBeLessThan(300);
  return res.body?.data;
}

async function newPost(token: string, text = `post ${Math.random()}`) {
  return dataOf(call("POST", "/posts", { token, json: { text } }));
}

describe("kept responses", () => {
  it("serve the same bytes in one round trip, and are kept per token", async () => {
    const a = await actor(SCOPES);
    const p = await newPost(a.token);
    const first = await call("GET", `/posts/${p.id}`);
    const hit = await kept(`/posts/${p.id}`);
    expect(hit.text).toBe(first.text);
    expect(hit.headers.get("x-debug-db-calls")).toBe("1");
    const b = await actor(SCOPES);
    await dataOf(call("PUT", `/posts/${p.id}/bookmark`, { token: b.token }));
    const mine = await kept(`/posts/${p.id}`, b.token);
    expect(mine.body.data.you_bookmarked).toBe(true);
    // Another token's kept answer is never served to this one.
    expect((await read(`/posts/${p.id}`, a.token)).you_bookmarked).toBe(false);
  });

  it("a write to another post or user leaves a kept post as it is", async () => {
    const a = await actor(SCOPES);
    const b = await actor(SCOPES);
    const mine = await newPost(a.token);
    const other = await newPost(b.token);
    await kept(`/posts/${mine.id}`);
    await dataOf(call("PUT", `/posts/${other.id}`, { token: b.token, json: { text: "revised" } }));
    await dataOf(call("PATCH", "/users/me", { token: b.token, json: { name: "Someone Else" } }));
    expect((await call("GET", `/posts/${mine.id}`)).headers.get("x-cache")).toBe("hit");
  });

  it("a post read shows every write to the post, its author and the reader's relationships", async () => {
    const author = await actor(SCOPES);
    const reader = await actor(SCOPES);
    const p = await newPost(author.token, "before");
    const path = `/posts/${p.id}`;
    const step = async (write: () => Promise<unknown>, check: (post: any) => void, token?: string) => {
      await kept(path, token);
      await write();
      check(await read(path, token));
    };
    await step(() => dataOf(call("PUT", path, { token: author.token, json: { text: "after" } })), (q) => expect(q.content.text).toBe("after"));
    await step(() => newPost(reader.token).then((r) => dataOf(call("POST", "/posts", { token: reader.token, json: { text: "re", reply_to: p.id } })).then(() => r)), (q) => expect(q.counts.replies).toBe(1));
    await step(() => dataOf(call("PUT", `${path}/repost`, { token: reader.token })), (q) => expect(q.counts.reposts).toBe(1));
    await step(() => dataOf(call("PUT", `${path}/bookmark`, { token: reader.token })), (q) => expect(q.you_bookmarked).toBe(true), reader.token);
    await step(() => dataOf(call("PATCH", "/users/me", { token: author.token, json: { name: "New Name" } })), (q) => expect(q.user.name).toBe("New Name"));
    await step(() => dataOf(call("PUT", `/users/${author.user.id}/follow`, { token: reader.token })), (q) => {
      expect(q.user.you_follow).toBe(true);
      expect(q.user.counts.followers).toBe(1);
    }, reader.token);
    await step(() => DB.prepare("UPDATE apps SET name = 'Renamed Client' WHERE id = ?").bind(Number(author.app.id)).run(), (q) => expect(q.source.name).toBe("Renamed Client"));
    await step(() => dataOf(call("DELETE", path, { token: author.token })), (q) => expect(q.is_deleted).toBe(true));
  });

  it("posts by ids show a post created after the list was kept", async () => {
    const a = await actor(SCOPES);
    const p = await newPost(a.token);
    const next = String(Number(p.id) + 1);
    const path = `/posts?ids=${p.id},${next}`;
    expect((await kept(path)).body.data.map((x: any) => x.id)).toEqual([p.id]);
    expect((await newPost(a.token)).id).toBe(next);
    expect((await read(path)).map((x: any) => x.id)).toEqual([p.id, next]);
  });

  it("the global stream shows a new post, and leaves out a muted user's posts at once", async () => {
    const a = await actor(SCOPES);
    const reader = await actor(SCOPES);
    await newPost(a.token);
    await kept("/posts/streams/global");
    const p = await newPost(a.token);
    expect((await read("/posts/streams/global"))[0].id).toBe(p.id);
    await kept("/posts/streams/global", reader.token);
    await dataOf(call("PUT", `/users/${a.user.id}/mute`, { token: reader.token }));
    expect((await read("/posts/streams/global", reader.token)).some((x: any) => x.user?.id === a.user.id)).toBe(false);
    // A user who becomes a feed: the global stream lists human users' posts only.
    await kept("/posts/streams/global");
    await DB.prepare("UPDATE users SET type = 'feed' WHERE id = ?").bind(Number(a.user.id)).run();
    expect((await read("/posts/streams/global")).some((x: any) => x.user?.id === a.user.id)).toBe(false);
  });

  it("the personal, unified, user, mentions, tag and thread lists show a new post at once", async () => {
    const me = await actor(SCOPES);
    const friend = await actor(SCOPES);
    const root = await newPost(friend.token, "root #cachedtag");
    await dataOf(call("PUT", `/users/${friend.user.id}/follow`, { token: me.token }));
    const lists: [string, string | undefined][] = [
      ["/posts/streams/me", me.token],
      ["/posts/streams/unified", me.token],
      [`/users/${friend.user.id}/posts`, undefined],
      [`/users/${me.user.id}/mentions`, undefined],
      ["/posts/tags/cachedtag", undefined],
      [`/posts/${root.id}/thread`, undefined],
    ];
    for (const [path, token] of lists) await kept(path, token);
    const reply = await dataOf(call("POST", "/posts", { token: friend.token, json: { text: `@${me.user.username} hi #cachedtag`, reply_to: root.id } }));
    for (const [path, token] of lists) expect((await read(path, token)).map((p: any) => p.id), path).toContain(reply.id);
    // Unfollowing changes the personal stream.
    await kept("/posts/streams/me", me.token);
    await dataOf(call("DELETE", `/users/${friend.user.id}/follow`, { token: me.token }));
    expect((await read("/posts/streams/me", me.token)).some((p: any) => p.user?.id === friend.user.id)).toBe(false);
  });

  it("the interactions page shows a new interaction and a renamed actor", async () => {
    const me = await actor(SCOPES);
    const fan = await actor(SCOPES);
    const p = await newPost(me.token);
    await dataOf(call("PUT", `/posts/${p.id}/bookmark`, { token: fan.token }));
    const before = (await kept("/users/me/interactions", me.token)).body.data;
    expect(before.map((i: any) => i.action)).toEqual(["bookmark"]);
    expect((await kept("/users/me/interactions", me.token)).headers.get("x-debug-db-calls")).toBe("1");
    await dataOf(call("PUT", `/users/${me.user.id}/follow`, { token: fan.token }));
    expect((await read("/users/me/interactions", me.token)).map((i: any) => i.action)).toEqual(["follow", "bookmark"]);
    await kept("/users/me/interactions", me.token);
    await dataOf(call("PATCH", "/users/me", { token: fan.token, json: { name: "Fan Renamed" } }));
    expect((await read("/users/me/interactions", me.token))[1].users[0].name).toBe("Fan Renamed");
  });

  it("message search shows a new message, a deleted one, and a new private message", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const ch = await dataOf(call("POST", "/channels", { token: a.token, json: { type: "com.example.chat", acl: { read: { public: true }, write: { any_user: true } } } }));
    const say = (text: string) => dataOf(call("POST", `/channels/${ch.id}/messages`, { token: a.token, json: { text } }));
    const first = await say("zebra one");
    const path = `/channels/messages/search?channel_ids=${ch.id}&q=zebra`;
    expect((await kept(path)).body.data.map((m: any) => m.id)).toEqual([first.id]);
    const second = await say("zebra two");
    expect((await read(path)).map((m: any) => m.id)).toEqual([second.id, first.id]);
    await kept(path);
    await dataOf(call("DELETE", `/channels/${ch.id}/messages/${first.id}`, { token: a.token }));
    expect((await read(path)).map((m: any) => m.id)).toEqual([second.id]);
    const pm = `/channels/messages/search?channel_ids=pm&q=okapi`;
    await kept(pm, b.token);
    await dataOf(call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "okapi hello" } }));
    expect((await read(pm, b.token)).map((m: any) => m.content.text)).toEqual(["okapi hello"]);
  });

  it("D1's relevance ranking moves with any message, so a message in another channel is read again", async () => {
    const a = await actor("messages");
    const open = { type: "com.example.chat", acl: { read: { public: true }, write: { any_user: true } } };
    const here = await dataOf(call("POST", "/channels", { token: a.token, json: open }));
    const elsewhere = await dataOf(call("POST", "/channels", { token: a.token, json: open }));
    await dataOf(call("POST", `/channels/${here.id}/messages`, { token: a.token, json: { text: "gnu gnu" } }));
    const path = `/channels/messages/search?channel_ids=${here.id}&q=gnu&order=relevance`;
    await kept(path);
    await dataOf(call("POST", `/channels/${elsewhere.id}/messages`, { token: a.token, json: { text: "gnu elsewhere" } }));
    // FTS5's bm25 weighs words by the whole index; Postgres's ts_rank looks at the message only.
    expect((await call("GET", path)).headers.get("x-cache")).toBe(isPostgres ? "hit" : "miss");
  });

  it("is not used for live presence, nor for the directed-posts filter", async () => {
    const a = await actor(SCOPES);
    const p = await newPost(a.token);
    for (let i = 0; i < 3; i++) {
      expect((await call("GET", `/posts/${p.id}?include_presence=1`)).headers.get("x-cache")).toBeNull();
      // Whether a post is directed depends on whether its leading mention names a user who exists.
      expect((await call("GET", "/posts/streams/global?include_directed_posts=0")).headers.get("x-cache")).toBeNull();
    }
  });
});
