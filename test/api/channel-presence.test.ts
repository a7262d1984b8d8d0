import { describe, expect, it } from "vitest";
import { actor, call, must } from "../support/client";
import { ALL_SCOPES, appStream, subscribe, userStream } from "../support/streams";

// Channel presence (resources/channels/presence.md), presence `expiration` and
// `update_presence_expiration` (resources/users/presence.md), and the app stream frame meta a
// push relay reads (how-to/app-streams.md), through HTTP and real sockets.

const T0 = 1_900_000_000;
const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 19) + "Z";
const newChannel = async (token: string, json: Record<string, unknown> = {}) =>
  (await must(call("POST", "/channels", { token, json: { type: "com.example.chat", ...json } }), 201)).data.id as string;

describe("channel presence", () => {
  it("sets, lists and reads presence per channel, separately from global presence, with expiry", async () => {
    const a = await actor(ALL_SCOPES);
    const b = await actor(ALL_SCOPES);
    const ch = await newChannel(a.token, { acl: { read: { any_user: true }, write: { any_user: true } } });
    const other = await newChannel(a.token);

    const put = await must(call("PUT", `/users/me/presence/channels/${ch}`, { token: a.token, form: { presence: "typing" }, now: T0 }));
    expect(put.data).toMatchObject({ id: a.user.id, username: a.user.username, presence: "typing", last_seen_at: iso(T0) });
    await must(call("PUT", `/users/me/presence/channels/${ch}`, { token: b.token, json: { expiration: T0 + 60 }, now: T0 + 1 }));

    const list = await must(call("GET", `/channels/${ch}/presence`, { token: b.token, now: T0 + 2 }));
    expect(list.data.map((p: any) => [p.id, p.presence])).toEqual([
      [b.user.id, "online"],
      [a.user.id, "typing"],
    ]);
    expect((await must(call("GET", `/channels/${other}/presence`, { token: a.token, now: T0 + 2 }))).data).toEqual([]);
    // Global presence is untouched.
    expect((await must(call("GET", `/users/${a.user.id}/presence`, { token: a.token, now: T0 + 2 }))).data.presence).toBe("offline");

    const one = await must(call("GET", `/users/${a.user.id}/presence/channels/${ch}`, { token: b.token, now: T0 + 2 }));
    expect(one.data).toMatchObject({ id: a.user.id, presence: "typing" });
    const never = await must(call("GET", `/users/${b.user.id}/presence/channels/${other}`, { token: a.token, now: T0 + 2 }));
    expect(never.data.presence).toBe("offline");
    expect(never.data.last_seen_at).toBeUndefined();

    // b's explicit expiration lapses after 60 s; a's default 15 minutes later.
    const later = await must(call("GET", `/channels/${ch}/presence`, { token: a.token, now: T0 + 61 }));
    expect(later.data.map((p: any) => p.id)).toEqual([a.user.id]);
    expect((await must(call("GET", `/channels/${ch}/presence`, { token: a.token, now: T0 + 15 * 60 + 1 }))).data).toEqual([]);

    // offline, and a past expiration, take the user off the list.
    await must(call("PUT", `/users/me/presence/channels/${ch}`, { token: a.token, form: { presence: "x" }, now: T0 + 100 }));
    const off = await must(
      call("PUT", `/users/me/presence/channels/${ch}`, { token: a.token, form: { presence: "x", expiration: String(T0 + 50) }, now: T0 + 101 }),
    );
    expect(off.data).toMatchObject({ presence: "offline", last_seen_at: iso(T0 + 101) });
    expect((await must(call("GET", `/channels/${ch}/presence`, { token: a.token, now: T0 + 102 }))).data).toEqual([]);
  });

  it("checks access, scope and input, naming the field", async () => {
    const a = await actor(ALL_SCOPES);
    const b = await actor(ALL_SCOPES);
    const noScope = await actor("basic");
    const priv = await newChannel(a.token);
    expect((await call("GET", `/channels/${priv}/presence`, { token: b.token })).status).toBe(404);
    expect((await call("PUT", `/users/me/presence/channels/${priv}`, { token: b.token })).status).toBe(404);
    expect((await call("GET", `/users/${a.user.id}/presence/channels/${priv}`, { token: b.token })).status).toBe(404);
    expect((await call("GET", `/channels/999999999/presence`, { token: a.token })).status).toBe(404);
    const open = await newChannel(a.token, { acl: { read: { any_user: true } } });
    expect((await call("GET", `/channels/${open}/presence`, { token: noScope.token })).status).toBe(403);
    expect((await call("GET", `/channels/${open}/presence`)).status).toBe(401);
    const bad = await call("PUT", `/users/me/presence/channels/${open}`, { token: a.token, form: { expiration: "tomorrow" } });
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toMatch(/'expiration' must be a unix timestamp/);
    const long = await call("PUT", `/users/me/presence/channels/${open}`, { token: a.token, form: { presence: "x".repeat(101) } });
    expect(long.status).toBe(400);
    expect(long.body.meta.error_message).toMatch(/'presence'/);
    expect((await call("GET", `/users/999999999/presence/channels/${open}`, { token: a.token })).status).toBe(404);
  });

  it("emits user_channel_presence to app streams (with meta.channel_id) and /channels/{id}/presence subscriptions", async () => {
    const app = await appStream(["user_channel_presence"]);
    const { user, token, s, cid } = await userStream(ALL_SCOPES, app.app);
    const friend = await actor(ALL_SCOPES);
    const stranger = await actor(ALL_SCOPES);
    const ch = await newChannel(token, { acl: { read: { any_user: true }, write: { any_user: true } } });
    await must(call("PUT", `/users/${friend.user.id}/follow`, { token }));
    const followedSub = await subscribe(`/channels/${ch}/presence`, token, cid);
    const everyoneSub = await subscribe(`/channels/${ch}/presence?include_not_followed=1`, token, cid);

    await must(call("PUT", `/users/me/presence/channels/${ch}`, { token, form: { presence: "here" } }));
    const own = await s.next((f) => f.meta?.type === "user_channel_presence" && f.data[0].id === user.id);
    expect(own.meta).toMatchObject({ channel_id: ch, subscription_ids: expect.arrayContaining([followedSub, everyoneSub]) });
    const appFrame = await app.s.next((f) => f.meta?.type === "user_channel_presence" && f.data[0].id === user.id);
    expect(appFrame.meta).toMatchObject({ channel_id: ch });
    expect(appFrame.data[0]).toMatchObject({ presence: "here", username: user.username });

    await must(call("PUT", `/users/me/presence/channels/${ch}`, { token: stranger.token, form: { presence: "lurking" } }));
    expect((await s.next((f) => f.data?.[0]?.id === stranger.user.id)).meta.subscription_ids).toEqual([everyoneSub]);
    await must(call("PUT", `/users/me/presence/channels/${ch}`, { token: friend.token, form: { presence: "hi" } }));
    expect((await s.next((f) => f.data?.[0]?.id === friend.user.id)).meta.subscription_ids.sort()).toEqual([followedSub, everyoneSub].sort());

    // A renewal with the same status emits nothing; offline is a deletion.
    await must(call("PUT", `/users/me/presence/channels/${ch}`, { token, form: { presence: "here" } }));
    await must(call("PUT", `/users/me/presence/channels/${ch}`, { token, form: { presence: "offline" } }));
    const gone = await s.next((f) => f.meta?.is_deleted && f.data[0].id === user.id);
    expect(gone.data[0].presence).toBe("offline");
    expect(s.frames.filter((f) => f.meta?.type === "user_channel_presence" && f.data[0].id === user.id)).toHaveLength(2);
    for (const x of [s, app.s]) x.ws.close(1000);
  });
});

describe("presence expiration", () => {
  it("PUT /users/me/presence takes expiration: up to 7 days, past means offline, bad values 400", async () => {
    const a = await actor("presence");
    const put = (form: Record<string, string>, now: number) => call("PUT", "/users/me/presence", { token: a.token, form, now });
    expect((await put({ presence: "away", expiration: String(T0 + 3600) }, T0)).status).toBe(200);
    const status = async (now: number) => (await must(call("GET", `/users/${a.user.id}/presence`, { token: a.token, now }))).data.presence;
    expect(await status(T0 + 3599)).toBe("away");
    expect(await status(T0 + 3600)).toBe("offline");

    // Beyond 7 days it is cut to 7 days, as the reference does.
    await put({ presence: "vacation", expiration: String(T0 + 30 * 86400) }, T0 + 4000);
    expect(await status(T0 + 4000 + 7 * 86400 - 1)).toBe("vacation");
    expect(await status(T0 + 4000 + 7 * 86400)).toBe("offline");

    await put({ presence: "back" }, T0 + 10 * 86400);
    const past = await must(put({ presence: "back", expiration: String(T0) }, T0 + 10 * 86400 + 5));
    expect(past.data.presence).toBe("offline");
    const bad = await put({ expiration: "soon" }, T0);
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toBe("Bad Request: 'expiration' must be a unix timestamp in seconds");
  });

  it("honours update_presence_expiration with update_presence on any call", async () => {
    const a = await actor("presence");
    const res = await call("GET", `/users/me/presence?update_presence=busy&update_presence_expiration=${T0 + 120}`, { token: a.token, now: T0 });
    expect(res.body.meta.updated_presence).toBe(true);
    const status = async (now: number) => (await must(call("GET", `/users/${a.user.id}/presence`, { token: a.token, now }))).data.presence;
    expect(await status(T0 + 119)).toBe("busy");
    expect(await status(T0 + 120)).toBe("offline");
    const bad = await call("GET", `/token?update_presence=1&update_presence_expiration=later`, { token: a.token, now: T0 });
    expect(bad.status).toBe(200);
    expect(bad.body.meta.updated_presence).toBe(false);
  });
});

describe("app stream meta for push relays", () => {
  it("a chat room's messages carry its chat-settings name as channel_name", async () => {
    const app = await appStream(["message"]);
    const owner = await actor(ALL_SCOPES);
    const ch = await newChannel(owner.token, {
      type: "io.example.core.chat",
      acl: { read: { public: true } },
      raw: { "io.example.core.chat-settings": [{ name: "Room Nine" }] },
    });
    const msg = (await must(call("POST", `/channels/${ch}/messages`, { token: owner.token, json: { text: "hi room" } }), 201)).data.id;
    const f = await app.s.next((x) => x.meta?.type === "message" && x.data[0].id === msg);
    expect(f.meta).toMatchObject({ channel_type: "io.example.core.chat", channel_name: "Room Nine" });
  });

  it("messages carry channel_type, subscribed_user_ids and suppress_notifications (mutes, blocks, channel mutes)", async () => {
    const app = await appStream(["message", "post"]);
    const owner = await actor(ALL_SCOPES);
    const muter = await actor(ALL_SCOPES);
    const blocker = await actor(ALL_SCOPES);
    const plain = await actor(ALL_SCOPES);
    const ch = await newChannel(owner.token, { acl: { read: { public: true }, write: { any_user: true } } });
    for (const u of [muter, blocker, plain]) await must(call("PUT", `/channels/${ch}/subscribe`, { token: u.token }));
    await must(call("PUT", `/users/${owner.user.id}/mute`, { token: muter.token }));
    await must(call("PUT", `/users/${owner.user.id}/block`, { token: blocker.token }));

    const msg = (await must(call("POST", `/channels/${ch}/messages`, { token: owner.token, json: { text: "hello all" } }), 201)).data.id;
    const f = await app.s.next((x) => x.meta?.type === "message" && x.data[0].id === msg);
    const ids = [owner, muter, blocker, plain].map((u) => u.user.id).sort((x, y) => Number(x) - Number(y));
    expect(f.meta).toMatchObject({ channel_type: "com.example.chat", subscribed_user_ids: ids });
    expect(f.meta.suppress_notifications.sort()).toEqual([muter.user.id, blocker.user.id].sort());

    await must(call("DELETE", `/channels/${ch}/messages/${msg}`, { token: owner.token }));
    const del = await app.s.next((x) => x.meta?.type === "message" && x.meta.is_deleted);
    expect(del.meta.channel_type).toBe("com.example.chat");
    expect(del.meta.subscribed_user_ids).toBeUndefined();

    // Posts: suppress_notifications lists the mentioned users who muted or blocked the author.
    const p = (await must(call("POST", "/posts", { token: owner.token, json: { text: `@${muter.user.username} @${plain.user.username} hi` } }), 201)).data.id;
    const pf = await app.s.next((x) => x.meta?.type === "post" && x.data[0].id === p);
    expect(pf.meta.suppress_notifications).toEqual([muter.user.id]);
    app.s.ws.close(1000);
  });

  it("deleted polls carry subscribed_user_ids and suppress_notifications", async () => {
    const app = await appStream(["poll"]);
    const owner = await actor(ALL_SCOPES);
    const voter = await actor(ALL_SCOPES);
    const poll = (
      await must(
        call("POST", "/polls", {
          token: owner.token,
          json: { type: "com.example.poll", prompt: "Tea?", is_public: true, options: [{ text: "Yes" }, { text: "No" }] },
        }),
        201,
      )
    ).data;
    await must(call("PUT", `/polls/${poll.id}/response`, { token: voter.token, json: { positions: [1], poll_token: poll.poll_token } }));
    await must(call("PUT", `/users/${owner.user.id}/mute`, { token: voter.token }));
    await must(call("DELETE", `/polls/${poll.id}`, { token: owner.token }));
    const f = await app.s.next((x) => x.meta?.type === "poll" && x.meta.is_deleted);
    expect(f.meta.subscribed_user_ids.sort()).toEqual([owner.user.id, voter.user.id].sort());
    expect(f.meta.suppress_notifications).toEqual([voter.user.id]);
    app.s.ws.close(1000);
  });
});
