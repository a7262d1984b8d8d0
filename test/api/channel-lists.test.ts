import { describe, expect, it } from "vitest";
import { actor, call, makeUser } from "../support/client";
import { createChannel, createMessage, dbCallsOf } from "../support/fixtures";

// Channel lookups and lists (the reference's "Channel Lookup", "Channel Subscribing", "Channel
// Search") and the general channel parameters, through the Worker (issue 18).

let clock = Math.floor(Date.now() / 1000) + 200_000;
const tick = () => (clock += 4);
const PM = "io.example.core.pm";

const newChannel = (token: string, body: Record<string, unknown> = {}) => createChannel(token, body, { now: tick() });

const message = (token: string, channelId: string, text: string) => createMessage(token, channelId, text, { now: tick() });

const ids = (res: { body: any }) => res.body.data.map((c: any) => c.id);

describe("GET /channels?ids=", () => {
  it("looks channels up in the order given, skipping unreadable and unknown ones; public ones need no token", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const pub = await newChannel(a.token, { acl: { read: { public: true } } });
    const priv = await newChannel(a.token);
    const shared = await newChannel(a.token, { type: "com.example.room", acl: { read: { user_ids: [b.user.id] } } });

    const asB = await call("GET", `/channels?ids=${shared.id},${priv.id},99999999,${pub.id}`, { token: b.token });
    expect(asB.status).toBe(200);
    expect(ids(asB)).toEqual([shared.id, pub.id]);
    expect(ids(await call("GET", `/channels?ids=${priv.id},${pub.id}`, { token: a.token }))).toEqual([priv.id, pub.id]);
    expect(ids(await call("GET", `/channels?ids=${priv.id},${pub.id}`))).toEqual([pub.id]);
    expect(ids(await call("GET", `/channels?ids=${shared.id},${pub.id}&channel_types=com.example.room`, { token: b.token }))).toEqual([shared.id]);
    expect(ids(await call("GET", `/channels?ids=${shared.id},${pub.id}&exclude_channel_types=com.example.room`, { token: b.token }))).toEqual([pub.id]);

    // No ids asked for: nothing found (a client library's `channels()` with no ids sends `ids=`).
    for (const path of ["/channels", "/channels?ids="]) {
      const none = await call("GET", path, { token: a.token });
      expect([none.status, none.body.data]).toEqual([200, []]);
    }
    expect((await call("GET", "/channels?ids=1,x", { token: a.token })).status).toBe(400);
    expect((await call("GET", `/channels?ids=${pub.id}&include_marker=yes`, { token: a.token })).body.meta.error_message).toMatch(/'include_marker'/);
  });
});

describe("GET /users/me/channels/subscribed (the inbox)", () => {
  it("orders by most recent message, paginates, counts unread types in meta, filters with include_read", async () => {
    const owner = await actor("messages");
    const u = await actor("messages");
    const chat = "io.example.core.chat";
    const c1 = await newChannel(owner.token, { type: chat, acl: { read: { any_user: true }, write: { any_user: true } } });
    const c2 = await newChannel(owner.token, { type: chat, acl: { read: { any_user: true }, write: { any_user: true } } });
    const empty = await newChannel(owner.token, { type: chat, acl: { read: { any_user: true } } });
    for (const ch of [c1, c2, empty]) await call("PUT", `/channels/${ch.id}/subscribe`, { token: u.token, now: tick() });
    await message(owner.token, c2.id, "older");
    const m1 = await message(owner.token, c1.id, "newest");

    const inbox = await call("GET", "/users/me/channels/subscribed", { token: u.token, now: tick() });
    expect(inbox.status).toBe(200);
    // c1 has the newest message; the empty channel was created after c2's creation but before its message.
    expect(ids(inbox)).toEqual([c1.id, c2.id, empty.id]);
    expect(inbox.body.data[0]).toMatchObject({ recent_message_id: m1.id, has_unread: true, marker: { name: `channel:${c1.id}` }, has_sticky_messages: false });
    expect(inbox.body.meta.unread_counts).toEqual({ [PM]: 0, "io.example.core.chat": 2 });
    expect(dbCallsOf(inbox)).toBe(1); // the known token's check rides with the read

    const p1 = await call("GET", "/users/me/channels/subscribed?count=2", { token: u.token });
    expect(ids(p1)).toEqual([c1.id, c2.id]);
    expect(p1.body.meta).toMatchObject({ more: true, max_id: p1.body.data[0].pagination_id, min_id: p1.body.data[1].pagination_id });
    const p2 = await call("GET", `/users/me/channels/subscribed?count=2&before_id=${p1.body.meta.min_id}`, { token: u.token });
    expect(ids(p2)).toEqual([empty.id]);
    expect(p2.body.meta.more).toBe(false);

    // Reading c1 up to its newest message: it is read, and leaves include_read=0.
    await call("POST", "/markers", { token: u.token, json: [{ id: m1.id, name: `channel:${c1.id}` }], now: tick() });
    const unread = await call("GET", "/users/me/channels/subscribed?include_read=0", { token: u.token });
    expect(ids(unread)).toEqual([c2.id]);
    const all = await call("GET", "/users/me/channels/subscribed", { token: u.token });
    expect(all.body.meta.unread_counts["io.example.core.chat"]).toBe(1);
    expect(all.body.data[0].marker).toMatchObject({ name: `channel:${c1.id}`, id: m1.id, last_read_id: m1.id });
    expect(all.body.data[0]).toHaveProperty("has_unread", false);
    expect((await call("GET", "/users/me/channels/subscribed?include_marker=0", { token: u.token })).body.data[0]).not.toHaveProperty("marker");

    expect((await call("GET", "/users/me/channels/subscribed")).status).toBe(401);

    // Each subscription keeps its channel's key: a late subscriber gets it, and deleting c1's only
    // message makes c1 as active as its creation, the oldest of the three.
    const late = await actor("messages");
    for (const ch of [c2, c1]) await call("PUT", `/channels/${ch.id}/subscribe`, { token: late.token, now: tick() });
    expect(ids(await call("GET", "/users/me/channels/subscribed", { token: late.token }))).toEqual([c1.id, c2.id]);
    expect((await call("DELETE", `/channels/${c1.id}/messages/${m1.id}`, { token: owner.token, now: tick() })).status).toBe(200);
    expect(ids(await call("GET", "/users/me/channels/subscribed", { token: u.token }))).toEqual([c2.id, empty.id, c1.id]);
    // ... and its unread state: set at subscribing, cleared when the channel has no live message left
    // or the user's marker reaches its newest (here by update_marker=1 on their own message).
    const lateCounts = async () => (await call("GET", "/users/me/channels/subscribed", { token: late.token })).body.meta.unread_counts[chat];
    expect(await lateCounts()).toBe(1);
    const sent = await call("POST", `/channels/${c2.id}/messages?update_marker=1`, { token: late.token, json: { text: "read up" }, now: tick() });
    expect(sent.status).toBe(201);
    expect(await lateCounts()).toBe(0);
    await message(owner.token, c2.id, "again");
    expect(await lateCounts()).toBe(1);
    expect((await call("GET", "/users/me/channels/subscribed", { token: u.token })).body.meta.unread_counts[chat]).toBe(1);
  });

  it("embeds the recent message (and the deleted newest one) and the ACL's limited users in the same round trip", async () => {
    const owner = await actor("messages");
    const member = await actor("messages presence");
    expect((await call("PUT", "/users/me/presence", { token: member.token, json: { presence: "around" }, now: tick() })).status).toBe(200);
    const ch = await newChannel(owner.token, { acl: { write: { user_ids: [member.user.id] } } });
    await call("PUT", `/channels/${ch.id}/subscribe`, { token: member.token, now: tick() });
    const live = await message(owner.token, ch.id, "still here");
    const gone = await message(owner.token, ch.id, "deleted soon");
    expect((await call("DELETE", `/channels/${ch.id}/messages/${gone.id}`, { token: owner.token, now: tick() })).status).toBe(200);

    const plain = await call("GET", "/users/me/channels/subscribed", { token: member.token, now: tick() });
    expect(plain.body.data[0]).toMatchObject({ recent_message_id: live.id, recent_deleted_message_id: gone.id });
    expect(plain.body.data[0]).not.toHaveProperty("recent_message");
    expect(plain.body.data[0].acl.write).not.toHaveProperty("users");

    const rich = await call("GET", "/users/me/channels/subscribed?include_recent_message=1&include_limited_users=1", { token: member.token, now: tick() });
    expect(dbCallsOf(rich)).toBe(1);
    const got = rich.body.data[0];
    expect(got.recent_message).toMatchObject({ id: live.id, content: { text: "still here" } });
    expect(got.recent_deleted_message).toMatchObject({ id: gone.id, is_deleted: true });
    expect(got.acl.write.users).toEqual([
      {
        id: member.user.id,
        username: member.user.username,
        ...(member.user.name ? { name: member.user.name } : {}),
        avatar_image: { url: expect.any(String) },
        presence: "around",
      },
    ]);
    expect(got.acl.read.users).toEqual([]);

    const single = await call("GET", `/channels/${ch.id}?include_recent_message=1&include_limited_users=1&include_marker=1`, {
      token: member.token,
      now: tick(),
    });
    expect(single.body.data.recent_message.id).toBe(live.id);
    expect(single.body.data.acl.write.users.map((x: any) => x.id)).toEqual([member.user.id]);
    expect(single.body.data.marker).toEqual({ name: `channel:${ch.id}` });
    expect(dbCallsOf(single)).toBe(1);
    // include_marker defaults to 0 on a single channel.
    expect((await call("GET", `/channels/${ch.id}`, { token: member.token })).body.data).not.toHaveProperty("marker");
    // A newer message: the deleted one is no longer the newest.
    const next = await message(owner.token, ch.id, "after the deletion");
    const after = (await call("GET", "/users/me/channels/subscribed", { token: member.token, now: tick() })).body.data[0];
    expect(after.recent_message_id).toBe(next.id);
    expect(after).not.toHaveProperty("recent_deleted_message_id");
  });

  it("has_sticky_messages says whether a live message is sticky", async () => {
    const owner = await actor("messages");
    const ch = await newChannel(owner.token);
    const m = await message(owner.token, ch.id, "pin me");
    expect((await call("GET", `/channels/${ch.id}`, { token: owner.token })).body.data.has_sticky_messages).toBe(false);
    const stick = await call("PUT", `/channels/${ch.id}/messages/${m.id}/sticky`, { token: owner.token, now: tick() });
    expect(stick.status).toBe(200);
    expect((await call("GET", `/channels/${ch.id}`, { token: owner.token })).body.data.has_sticky_messages).toBe(true);
  });
});

describe("GET /users/me/channels and /channels/{id}/subscribers", () => {
  it("lists the caller's own channels (not private-message ones), newest first, paginated", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const first = await newChannel(a.token);
    const second = await newChannel(a.token, { type: "com.example.room" });
    await newChannel(b.token);
    await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "hi" }, now: tick() });

    const mine = await call("GET", "/users/me/channels", { token: a.token });
    expect(mine.status).toBe(200);
    expect(ids(mine)).toEqual([second.id, first.id]);
    expect(mine.body.data[0].pagination_id).toBe(second.id);
    const page = await call("GET", `/users/me/channels?count=1&before_id=${second.id}`, { token: a.token });
    expect(ids(page)).toEqual([first.id]);
    expect(ids(await call("GET", "/users/me/channels?channel_types=com.example.room", { token: a.token }))).toEqual([second.id]);
  });

  it("lists a channel's subscribers to anyone who may read it; 404 to others", async () => {
    const owner = await actor("messages");
    const u = await actor("messages");
    const outsider = await actor("messages");
    const pub = await newChannel(owner.token, { acl: { read: { public: true } } });
    const priv = await newChannel(owner.token, { acl: { read: { user_ids: [u.user.id] } } });
    await call("PUT", `/channels/${pub.id}/subscribe`, { token: u.token, now: tick() });
    await call("PUT", `/channels/${priv.id}/subscribe`, { token: u.token, now: tick() });

    const anon = await call("GET", `/channels/${pub.id}/subscribers`);
    expect(anon.status).toBe(200);
    expect(anon.body.data.map((x: any) => x.id)).toEqual([u.user.id, owner.user.id]);
    expect(anon.body.data[0]).toMatchObject({ username: u.user.username, pagination_id: expect.any(String) });
    const one = await call("GET", `/channels/${pub.id}/subscribers?count=1`);
    expect(one.body.meta.more).toBe(true);
    const rest = await call("GET", `/channels/${pub.id}/subscribers?count=1&before_id=${one.body.meta.min_id}`);
    expect(rest.body.data.map((x: any) => x.id)).toEqual([owner.user.id]);

    expect((await call("GET", `/channels/${priv.id}/subscribers`, { token: u.token })).body.data).toHaveLength(2);
    expect((await call("GET", `/channels/${priv.id}/subscribers`, { token: outsider.token })).status).toBe(404);
    expect((await call("GET", `/channels/${priv.id}/subscribers`)).status).toBe(404);
  });
});

describe("GET /users/me/channels/existing_pm", () => {
  it("finds the private-message channel of exactly those users, by id or @username, with or without the caller", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const c = await makeUser();
    const sent = await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id, c.id], text: "group" }, now: tick() });
    const pm = sent.body.data.channel_id;

    const byIds = await call("GET", `/users/me/channels/existing_pm?ids=${b.user.id},${c.id}`, { token: a.token });
    expect(byIds.status).toBe(200);
    expect(byIds.body.data).toMatchObject({ id: pm, type: PM });
    const withSelf = await call("GET", `/users/me/channels/existing_pm?ids=${a.user.id},@${b.user.username},${c.id}`, { token: a.token });
    expect(withSelf.body.data.id).toBe(pm);
    expect((await call("GET", `/users/me/channels/existing_pm?ids=${a.user.id},${c.id}`, { token: b.token })).body.data.id).toBe(pm);

    const pair = await call("GET", `/users/me/channels/existing_pm?ids=${b.user.id}`, { token: a.token });
    expect(pair.status).toBe(404);
    expect((await call("GET", "/users/me/channels/existing_pm?ids=@no_such_user_zz", { token: a.token })).status).toBe(400);
    expect((await call("GET", "/users/me/channels/existing_pm", { token: a.token })).status).toBe(400);
  });
});

describe("num_unread", () => {
  it("counts unread subscribed channels per type; DELETE marks them read; /pm is the older path", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "one" }, now: tick() });
    const room = await newChannel(a.token, { type: "com.example.room", acl: { read: { any_user: true } } });
    await call("PUT", `/channels/${room.id}/subscribe`, { token: b.token, now: tick() });
    await message(a.token, room.id, "room message");
    const muted = await call("POST", "/channels/pm/messages", {
      token: a.token,
      json: { destinations: [b.user.id, (await makeUser()).id], text: "muted" },
      now: tick(),
    });
    await call("PUT", `/channels/${muted.body.data.channel_id}/mute`, { token: b.token, now: tick() });

    const pm = await call("GET", "/users/me/channels/num_unread", { token: b.token });
    expect(pm.status).toBe(200);
    expect(pm.body.data).toEqual({ [PM]: 1 });
    const both = await call("GET", `/users/me/channels/num_unread?channel_types=${PM},com.example.room`, { token: b.token });
    expect(both.body.data).toEqual({ [PM]: 1, "com.example.room": 1 });
    expect((await call("GET", "/users/me/channels/num_unread/pm", { token: b.token })).body.data).toEqual({ [PM]: 1 });
    const many = Array.from({ length: 11 }, (_, i) => `com.example.t${i}`).join(",");
    expect((await call("GET", `/users/me/channels/num_unread?channel_types=${many}`, { token: b.token })).status).toBe(400);

    const cleared = await call("DELETE", "/users/me/channels/num_unread?channel_types=com.example.room", { token: b.token, now: tick() });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).toEqual({ "com.example.room": 0 });
    expect((await call("GET", `/users/me/channels/num_unread?channel_types=${PM},com.example.room`, { token: b.token })).body.data).toEqual({
      [PM]: 1,
      "com.example.room": 0,
    });
    const marker = (await call("GET", `/channels/${room.id}?include_marker=1`, { token: b.token })).body.data;
    expect(marker).toMatchObject({ has_unread: false, marker: { id: marker.recent_message_id } });

    const legacy = await call("DELETE", "/users/me/channels/num_unread/pm", { token: b.token, now: tick() });
    expect(legacy.body.data).toEqual({ [PM]: 0 });
    expect((await call("GET", "/users/me/channels/num_unread/pm", { token: b.token })).body.data).toEqual({ [PM]: 0 });
    expect((await call("GET", "/users/me/channels/num_unread")).status).toBe(401);
  });
});

describe("GET /channels/search", () => {
  it("searches the chat settings, filters, orders, and hides what the caller may not read", async () => {
    const a = await actor("messages public_messages");
    const tag = `zq${Math.random().toString(36).slice(2, 8)}`;
    const settings = (name: string, categories: string[]) => ({ "io.example.core.chat-settings": [{ name, description: `About ${tag}`, categories }] });
    const fun = await newChannel(a.token, { acl: { read: { public: true } }, raw: settings(`Fun ${tag} Room`, ["fun"]) });
    const tech = await newChannel(a.token, {
      acl: { read: { public: true } },
      raw: { ...settings(`Tech ${tag}`, ["tech", "general"]), "com.example.extra": [{ x: 1 }] },
    });
    const hidden = await newChannel(a.token, { raw: settings(`Secret ${tag}`, ["fun"]) });
    await message(a.token, fun.id, "activity");

    const byText = await call("GET", `/channels/search?q=${tag.toUpperCase()}`);
    expect(byText.status).toBe(200);
    expect(ids(byText)).toEqual([fun.id, tech.id]);
    expect(ids(await call("GET", `/channels/search?q=${tag}`, { token: a.token }))).toEqual([fun.id, hidden.id, tech.id]);
    expect(ids(await call("GET", `/channels/search?q=${tag}&order=id`, { token: a.token }))).toEqual([hidden.id, tech.id, fun.id]);
    expect(ids(await call("GET", `/channels/search?q=${tag}&order=popularity`, { token: a.token }))[0]).toBe(fun.id);
    expect(ids(await call("GET", `/channels/search?q=${tag}&categories=general,tech`))).toEqual([tech.id]);
    expect(ids(await call("GET", `/channels/search?q=${tag}&is_public=0`, { token: a.token }))).toEqual([hidden.id]);
    expect(ids(await call("GET", `/channels/search?q=${tag}&raw_types=com.example.extra`))).toEqual([tech.id]);
    expect(ids(await call("GET", `/channels/search?q=${tag}&owner_id=${a.user.id}&exclude_channel_types=com.example.chat`))).toEqual([]);
    expect(ids(await call("GET", `/channels/search?q=Room ${tag}`))).toEqual([]);
    expect(ids(await call("GET", `/channels/search?q=${tag} Room`))).toEqual([fun.id]);
    const future = new Date((clock + 1000) * 1000).toISOString();
    expect(ids(await call("GET", `/channels/search?q=${tag}&created_after=${future}`))).toEqual([]);
    expect(ids(await call("GET", `/channels/search?q=${tag}&created_before=${future}`))).toEqual([fun.id, tech.id]);

    const p1 = await call("GET", `/channels/search?q=${tag}&count=1`);
    expect(p1.body.meta.more).toBe(true);
    expect(ids(await call("GET", `/channels/search?q=${tag}&count=1&before_id=${p1.body.meta.min_id}`))).toEqual([tech.id]);

    expect((await call("GET", "/channels/search?order=best")).status).toBe(400);
    expect((await call("GET", "/channels/search?created_after=yesterday")).body.meta.error_message).toMatch(/'created_after'/);
    expect((await call("GET", "/channels/search?is_public=maybe")).body.meta.error_message).toMatch(/'is_public'/);
    expect((await call("GET", "/channels/search?order=popularity&before_id=5")).status).toBe(400);
  });
});
