import { describe, expect, it } from "vitest";
import { actor, call, must, userToken } from "../support/client";
import { ALL_SCOPES, eventsOf, rowsOf, socket, subscribe, userStream } from "../support/streams";

// User streams: the reference's 14 subscribable endpoints and the connection and subscription
// query parameters (how-to/user-streams.md), through the HTTP surface and real sockets.

const follow = (token: string, userId: string) => must(call("PUT", `/users/${userId}/follow`, { token }));
const post = async (token: string, json: Record<string, unknown>) => (await must(call("POST", "/posts", { token, json }), 201)).data.id as string;
const hasSub = (sub: string) => (f: any) => f.meta?.subscription_ids?.includes(sub);

describe("user stream subscribable endpoints", () => {
  it("routes posts to /users/me/posts and /posts/{id}/thread", async () => {
    const { token, s, cid } = await userStream();
    const other = await actor(ALL_SCOPES);
    const root = await post(other.token, { text: "a thread root" });
    const postsSub = await subscribe("/users/me/posts", token, cid);
    const threadSub = await subscribe(`/posts/${root}/thread`, token, cid);
    expect(await rowsOf(cid)).toHaveLength(2);

    const mine = await post(token, { text: "my post", reply_to: root });
    const f = await s.next((x) => x.data?.[0]?.id === mine);
    expect(f.meta.subscription_ids.sort()).toEqual([postsSub, threadSub].sort());
    const reply = await post(other.token, { text: "their reply", reply_to: root });
    expect((await s.next((x) => x.data?.[0]?.id === reply)).meta.subscription_ids).toEqual([threadSub]);
    const unrelated = await post(other.token, { text: "elsewhere" });
    const marker = await post(token, { text: "marker" });
    await s.next((x) => x.data?.[0]?.id === marker);
    expect(s.frames.some((x) => x.data?.[0]?.id === unrelated)).toBe(false);
    s.ws.close(1000);
  });

  it("routes follows to /users/me/following and /users/me/followers", async () => {
    const { user, token, s, cid } = await userStream();
    const other = await actor(ALL_SCOPES);
    const followingSub = await subscribe("/users/me/following", token, cid);
    const followersSub = await subscribe("/users/me/followers", token, cid);
    await follow(token, other.user.id);
    const out = await s.next((f) => f.meta?.type === "follow");
    expect(out.meta.subscription_ids).toEqual([followingSub]);
    expect(out.data.followed_user.id).toBe(other.user.id);
    await follow(other.token, user.id);
    const inbound = await s.next((f) => f.meta?.type === "follow" && f.data.user.id === other.user.id);
    expect(inbound.meta.subscription_ids).toEqual([followersSub]);
    s.ws.close(1000);
  });

  it("routes channel events to /channels (subscribed channels, channel_types) and subscriptions to /channels/{id}/subscribers", async () => {
    const { token, s, cid } = await userStream();
    const other = await actor(ALL_SCOPES);
    const chat = (
      await must(call("POST", "/channels", { token, json: { type: "com.example.chat", acl: { read: { any_user: true }, write: { any_user: true } } } }), 201)
    ).data.id;
    const notes = (await must(call("POST", "/channels", { token, json: { type: "com.example.notes" } }), 201)).data.id;
    const strangers = (await must(call("POST", "/channels", { token: other.token, json: { type: "com.example.chat" } }), 201)).data.id;
    const allSub = await subscribe("/users/me/channels/subscribed", token, cid);
    const chatOnly = await subscribe("/users/me/channels/subscribed?channel_types=com.example.chat", token, cid);
    expect(chatOnly).not.toBe(allSub);
    const subsSub = await subscribe(`/channels/${chat}/subscribers`, token, cid);

    await must(call("POST", `/channels/${chat}/messages`, { token, json: { text: "chat message" } }), 201);
    const m1 = await s.next((f) => f.meta?.type === "message" && f.data[0].channel_id === chat);
    expect(m1.meta.subscription_ids.sort()).toEqual([allSub, chatOnly].sort());
    expect(m1.meta.channel_type).toBe("com.example.chat");
    await must(call("POST", `/channels/${notes}/messages`, { token, json: { text: "note" } }), 201);
    const m2 = await s.next((f) => f.meta?.type === "message" && f.data[0].channel_id === notes);
    expect(m2.meta.subscription_ids).toEqual([allSub]);
    await must(call("POST", `/channels/${strangers}/messages`, { token: other.token, json: { text: "not mine" } }), 201);

    await must(call("PUT", `/channels/${chat}/subscribe`, { token: other.token }));
    const joined = await s.next(hasSub(subsSub));
    expect(joined.meta.type).toBe("channel_subscription");
    expect(joined.data.user.id).toBe(other.user.id);
    expect(s.frames.some((f) => f.data?.[0]?.channel_id === strangers)).toBe(false);
    s.ws.close(1000);
  });
});

describe("user stream parameters", () => {
  it("keeps /presence to followed users by default; include_not_followed=1 is another subscription for everyone", async () => {
    const { user, token, s, cid } = await userStream();
    const followed = await actor("presence");
    const stranger = await actor("presence");
    await follow(token, followed.user.id);
    const followedSub = await subscribe("/presence", token, cid);
    const allSub = await subscribe("/presence?include_not_followed=1", token, cid);
    expect(allSub).not.toBe(followedSub);
    expect(await subscribe("/presence?include_not_followed=true", token, cid)).toBe(allSub);
    expect(await rowsOf(cid)).toHaveLength(2);

    await must(call("PUT", "/users/me/presence", { token: stranger.token, form: { presence: "hi" } }));
    expect((await s.next((f) => f.data?.[0]?.id === stranger.user.id)).meta.subscription_ids).toEqual([allSub]);
    await must(call("PUT", "/users/me/presence", { token: followed.token, form: { presence: "hello" } }));
    expect((await s.next((f) => f.data?.[0]?.id === followed.user.id)).meta.subscription_ids.sort()).toEqual([followedSub, allSub].sort());
    await must(call("PUT", "/users/me/presence", { token, form: { presence: "me" } }));
    expect((await s.next((f) => f.data?.[0]?.id === user.id)).meta.subscription_ids.sort()).toEqual([followedSub, allSub].sort());

    // Blocked users are left out even with include_not_followed=1.
    await must(call("PUT", `/users/${stranger.user.id}/block`, { token }));
    await must(call("PUT", "/users/me/presence", { token: stranger.token, form: { presence: "again" } }));
    await must(call("PUT", "/users/me/presence", { token, form: { presence: "me again" } }));
    await s.next((f) => f.data?.[0]?.presence === "me again");
    expect(s.frames.some((f) => f.data?.[0]?.presence === "again")).toBe(false);
    s.ws.close(1000);
  });

  it("applies include_muted on post streams and include_deleted=0", async () => {
    const { token, s, cid } = await userStream();
    const muted = await actor(ALL_SCOPES);
    await follow(token, muted.user.id);
    await must(call("PUT", `/users/${muted.user.id}/mute`, { token }));
    const plain = await subscribe("/posts/streams/me", token, cid);
    const withMuted = await subscribe("/posts/streams/me?include_muted=1", token, cid);
    const noDeleted = await subscribe("/users/me/posts?include_deleted=0", token, cid);
    const withDeleted = await subscribe("/users/me/posts", token, cid);
    const p = await post(muted.token, { text: "muted but asked for" });
    expect((await s.next((f) => f.data?.[0]?.id === p)).meta.subscription_ids).toEqual([withMuted]);

    const mine = await post(token, { text: "to delete" });
    await s.next((f) => f.data?.[0]?.id === mine && !f.meta.is_deleted);
    await must(call("DELETE", `/posts/${mine}`, { token }));
    const gone = await s.next((f) => f.data?.[0]?.id === mine && f.meta.is_deleted);
    expect(gone.meta.subscription_ids.sort()).toEqual([plain, withMuted, withDeleted].sort());
    expect(gone.meta.subscription_ids).not.toContain(noDeleted);
    s.ws.close(1000);
  });

  it("applies file filters per subscription", async () => {
    const { token, s, cid } = await userStream();
    const all = await subscribe("/users/me/files", token, cid);
    const typed = await subscribe("/users/me/files?file_types=com.example.keep", token, cid);
    const complete = await subscribe("/users/me/files?include_incomplete=0", token, cid);
    const a = (await must(call("POST", "/files", { token, json: { kind: "other", type: "com.example.keep", name: "a.txt" } }), 201)).data.id;
    expect((await s.next((f) => f.meta?.type === "file" && f.data.id === a)).meta.subscription_ids.sort()).toEqual([all, typed].sort());
    const b = (await must(call("POST", "/files", { token, json: { kind: "other", type: "com.example.other", name: "b.txt" } }), 201)).data.id;
    expect((await s.next((f) => f.meta?.type === "file" && f.data.id === b)).meta.subscription_ids).toEqual([all]);
    expect(complete).toMatch(/^[0-9a-f]{32}$/);
    s.ws.close(1000);
  });

  it("shapes frames with the connection's parameters (include_html, include_message_raw)", async () => {
    const { app, user, token } = await userStream();
    const raw = { "com.example.raw": [{ a: 1 }] };
    const plainToken = await userToken(app, user, ALL_SCOPES);
    const shaped = await socket("/user?include_html=0&include_message_raw=1", token);
    const plain = await socket("/user", plainToken);
    const cidOf = async (x: typeof shaped) => (await x.next()).meta.connection_id as string;
    const ch = (await must(call("POST", "/channels", { token, json: { type: "com.example.chat" } }), 201)).data.id;
    await subscribe(`/channels/${ch}/messages`, token, await cidOf(shaped));
    await subscribe(`/channels/${ch}/messages`, plainToken, await cidOf(plain));
    await must(call("POST", `/channels/${ch}/messages`, { token, json: { text: "shaped", raw } }), 201);
    const a = await shaped.next((f) => f.meta?.type === "message");
    const b = await plain.next((f) => f.meta?.type === "message");
    expect(a.data[0].content.html).toBeUndefined();
    expect(a.data[0].content.text).toBe("shaped");
    expect(a.data[0].raw).toEqual(raw);
    expect(b.data[0].content.html).toContain("shaped");
    expect(b.data[0].raw).toBeUndefined();
    expect((await openStream400("/user?include_html=maybe", token)).status).toBe(400);
    for (const x of [shaped, plain]) x.ws.close(1000);
    expect(eventsOf(a ? shaped : plain).length).toBeGreaterThan(0);
  });
});

async function openStream400(path: string, token: string) {
  const { openStream } = await import("../support/client");
  return (await openStream(path, token)) as { status: number };
}
