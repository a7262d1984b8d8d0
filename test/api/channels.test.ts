import { describe, expect, it } from "vitest";
import { actor, appToken, call, makeApp, makeUser, userToken } from "../support/client";
import { createChannel } from "../support/fixtures";

// Writes carry an advancing test clock: each token may write 20 times a minute (decisions §9).
let clock = Math.floor(Date.now() / 1000);
const tick = () => (clock += 4);

const PM = "io.example.core.pm";

const newChannel = (token: string, body: Record<string, unknown> = {}) => createChannel(token, body, { now: tick() });

describe("POST /channels", () => {
  it("creates a channel owned and subscribed by the caller, with the ACL of decisions §4", async () => {
    const a = await actor("messages");
    const b = await makeUser();
    const c = await makeUser();
    const res = await call("POST", "/channels", {
      token: a.token,
      now: tick(),
      json: {
        type: "com.example.chat",
        acl: {
          full: { user_ids: [c.id] },
          write: { any_user: false, user_ids: [`@${b.username}`, a.user.id] },
          read: { public: true, immutable: true },
        },
        raw: { "com.example.settings": [{ color: "red" }] },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.meta.code).toBe(201);
    const ch = res.body.data;
    expect(ch).toMatchObject({
      type: "com.example.chat",
      user: { id: a.user.id, username: a.user.username },
      acl: {
        full: { immutable: false, you: true, user_ids: [c.id] },
        // The owner is implicit: naming them in a list adds nothing.
        write: { any_user: false, immutable: false, you: true, user_ids: [b.id] },
        read: { any_user: false, immutable: true, public: true, you: true, user_ids: [] },
      },
      counts: { messages: 0, subscribers: 1 },
      is_active: true,
      recent_message_id: null,
      you_muted: false,
      you_subscribed: true,
    });
    expect(ch.id).toMatch(/^\d+$/);
    expect(ch.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(ch).not.toHaveProperty("raw");

    const withRaw = await call("GET", `/channels/${ch.id}?include_raw=1`);
    expect(withRaw.body.data.raw).toEqual({ "com.example.settings": [{ color: "red" }] });
    const channelRaw = await call("GET", `/channels/${ch.id}?include_channel_raw=1`);
    expect(channelRaw.body.data.raw).toEqual({ "com.example.settings": [{ color: "red" }] });
  });

  it("refuses bad input with a 400 naming the field, and never writes", async () => {
    const a = await actor("messages");
    const bad = async (json: unknown, field: RegExp) => {
      const res = await call("POST", "/channels", { token: a.token, json, now: tick() });
      expect(res.status).toBe(400);
      expect(res.body.meta.error_message).toMatch(field);
      expect(res.body).not.toHaveProperty("data");
    };
    await bad({}, /'type'/);
    await bad({ type: "nodots" }, /'type'/);
    await bad({ type: PM }, /'type'.*pm\/messages/);
    await bad({ type: "com.example.chat", acl: { write: { user_ids: ["@nosuchuser_zz"] } } }, /'acl\.write\.user_ids' has unknown user '@nosuchuser_zz'/);
    await bad({ type: "com.example.chat", acl: { read: { public: "yes" } } }, /'acl\.read\.public'/);
    await bad({ type: "com.example.chat", raw: [1] }, /'raw'/);
    await bad({ type: "com.example.chat", raw: { "com.example.x": "nope" } }, /'raw'/);
    await bad({ type: "com.example.chat", raw: { "com.example.x": [{ v: "x".repeat(9000) }] } }, /'raw' is longer than 8192/);
    const list = await call("GET", "/users/me/channels/subscribed", { token: a.token });
    expect(list.body.data).toEqual([]);
    const type = await call("POST", "/channels", {
      token: a.token,
      body: JSON.stringify({ type: "com.example.chat" }),
      headers: { "Content-Type": "text/plain" },
      now: tick(),
    });
    expect(type.status).toBe(415);
  });

  it("needs a user token with messages, public_messages for public channels, or the type's extended scope", async () => {
    const app = await makeApp();
    const user = await makeUser();
    const none = await call("POST", "/channels", { json: { type: "com.example.chat" }, now: tick() });
    expect(none.status).toBe(401);
    const appTok = await call("POST", "/channels", { token: await appToken(app), json: { type: "com.example.chat" }, now: tick() });
    expect(appTok.status).toBe(403);
    const basic = await call("POST", "/channels", { token: await userToken(app, user, "basic"), json: { type: "com.example.chat" }, now: tick() });
    expect(basic.status).toBe(403);
    expect(basic.body.meta.error_message).toMatch(/'messages'/);

    const pub = await userToken(app, user, "public_messages");
    expect((await call("POST", "/channels", { token: pub, json: { type: "com.example.chat" }, now: tick() })).status).toBe(403);
    expect((await call("POST", "/channels", { token: pub, json: { type: "com.example.chat", acl: { read: { public: true } } }, now: tick() })).status).toBe(
      201,
    );

    const narrow = await userToken(app, user, "messages:com.example.room");
    expect((await call("POST", "/channels", { token: narrow, json: { type: "com.example.room" }, now: tick() })).status).toBe(201);
    expect((await call("POST", "/channels", { token: narrow, json: { type: "com.example.chat" }, now: tick() })).status).toBe(403);
  });
});

describe("GET /channels/{id}: who may read", () => {
  it("public channels need no token; others are 404 to anyone the ACL leaves out", async () => {
    const a = await actor("messages");
    const reader = await actor("messages");
    const other = await actor("messages");
    const pub = await newChannel(a.token, { acl: { read: { public: true } } });
    const priv = await newChannel(a.token, { acl: { read: { user_ids: [reader.user.id] } } });
    const anyUser = await newChannel(a.token, { acl: { read: { any_user: true } } });

    const anon = await call("GET", `/channels/${pub.id}`);
    expect(anon.status).toBe(200);
    expect(anon.body.data.acl.read.you).toBe(true);
    expect(anon.body.data.acl.write.you).toBe(false);
    expect(anon.body.data.you_subscribed).toBe(false);

    expect((await call("GET", `/channels/${priv.id}`)).status).toBe(404);
    expect((await call("GET", `/channels/${priv.id}`, { token: other.token })).status).toBe(404);
    const asReader = await call("GET", `/channels/${priv.id}`, { token: reader.token });
    expect(asReader.status).toBe(200);
    expect(asReader.body.data.acl).toMatchObject({ read: { you: true, user_ids: [reader.user.id] }, write: { you: false }, full: { you: false } });

    expect((await call("GET", `/channels/${anyUser.id}`)).status).toBe(404);
    expect((await call("GET", `/channels/${anyUser.id}`, { token: other.token })).status).toBe(200);
    expect((await call("GET", `/channels/${anyUser.id}`, { token: await appToken(await makeApp()) })).status).toBe(404);

    expect((await call("GET", "/channels/99999999")).status).toBe(404);
    expect((await call("GET", "/channels/abc")).status).toBe(400);
  });
});

describe("PUT /channels/{id}", () => {
  it("lets the owner and full-ACL users change the ACL and raw; others get 403 or 404", async () => {
    const a = await actor("messages");
    const full = await actor("messages");
    const writer = await actor("messages");
    const outsider = await actor("messages");
    const ch = await newChannel(a.token, { acl: { full: { user_ids: [full.user.id] }, write: { user_ids: [writer.user.id] } } });

    expect((await call("GET", `/channels/${ch.id}`, { token: outsider.token })).status).toBe(404);
    const added = await call("PUT", `/channels/${ch.id}`, {
      token: full.token,
      now: tick(),
      json: { acl: { read: { user_ids: [`@${outsider.user.username}`] } }, raw: { "com.example.topic": [{ t: "x" }] } },
    });
    expect(added.status).toBe(200);
    expect(added.body.data.acl.read.user_ids).toEqual([outsider.user.id]);
    expect(added.body.data.acl.write.user_ids).toEqual([writer.user.id]);
    expect((await call("GET", `/channels/${ch.id}`, { token: outsider.token })).status).toBe(200);
    expect((await call("GET", `/channels/${ch.id}?include_raw=1`, { token: a.token })).body.data.raw).toEqual({ "com.example.topic": [{ t: "x" }] });

    const denied = await call("PUT", `/channels/${ch.id}`, { token: writer.token, json: { acl: { read: { public: true } } }, now: tick() });
    expect(denied.status).toBe(403);

    const removed = await call("PUT", `/channels/${ch.id}?include_raw=1`, {
      token: a.token,
      json: { raw: null, acl: { read: { user_ids: [] } } },
      now: tick(),
    });
    expect(removed.status).toBe(200);
    expect(removed.body.data).not.toHaveProperty("raw");
    expect((await call("GET", `/channels/${ch.id}`, { token: outsider.token })).status).toBe(404);
    expect((await call("PUT", `/channels/${ch.id}`, { token: outsider.token, json: {}, now: tick() })).status).toBe(404);
  });

  it("refuses to change an immutable ACL section (400) but accepts restating it", async () => {
    const a = await actor("messages");
    const b = await makeUser();
    const ch = await newChannel(a.token, { acl: { write: { immutable: true, user_ids: [b.id] } } });
    const change = await call("PUT", `/channels/${ch.id}`, { token: a.token, json: { acl: { write: { any_user: true } } }, now: tick() });
    expect(change.status).toBe(400);
    expect(change.body.meta.error_message).toMatch(/'acl\.write' is immutable/);
    const unfreeze = await call("PUT", `/channels/${ch.id}`, { token: a.token, json: { acl: { write: { immutable: false } } }, now: tick() });
    expect(unfreeze.status).toBe(400);
    const same = await call("PUT", `/channels/${ch.id}`, {
      token: a.token,
      json: { acl: { write: { immutable: true, user_ids: [b.id] }, read: { any_user: true } } },
      now: tick(),
    });
    expect(same.status).toBe(200);
    expect(same.body.data.acl.read.any_user).toBe(true);
    expect(same.body.data.acl.write).toMatchObject({ immutable: true, any_user: false, user_ids: [b.id] });
  });
});

describe("subscriptions", () => {
  it("PUT/DELETE /channels/{id}/subscribe and GET /users/me/channels/subscribed (paginated, filterable by type)", async () => {
    const owner = await actor("messages");
    const u = await actor("messages");
    const c1 = await newChannel(owner.token, { acl: { read: { public: true } } });
    const c2 = await newChannel(owner.token, { type: "com.example.room", acl: { read: { any_user: true } } });
    const hidden = await newChannel(owner.token);

    const s1 = await call("PUT", `/channels/${c1.id}/subscribe`, { token: u.token, now: tick() });
    expect(s1.status).toBe(200);
    expect(s1.body.data).toMatchObject({ id: c1.id, you_subscribed: true, counts: { subscribers: 2 } });
    const again = await call("PUT", `/channels/${c1.id}/subscribe`, { token: u.token, now: tick() });
    expect(again.body.data.counts.subscribers).toBe(2);
    await call("PUT", `/channels/${c2.id}/subscribe`, { token: u.token, now: tick() });
    expect((await call("PUT", `/channels/${hidden.id}/subscribe`, { token: u.token, now: tick() })).status).toBe(404);

    const all = await call("GET", "/users/me/channels/subscribed", { token: u.token });
    expect(all.status).toBe(200);
    expect(all.body.data.map((c: any) => c.id)).toEqual([c2.id, c1.id]);
    expect(all.body.data.every((c: any) => c.you_subscribed && c.pagination_id)).toBe(true);
    const first = await call("GET", "/users/me/channels/subscribed?count=1", { token: u.token });
    expect(first.body.data.map((c: any) => c.id)).toEqual([c2.id]);
    expect(first.body.meta).toMatchObject({ more: true, min_id: first.body.data[0].pagination_id, max_id: first.body.data[0].pagination_id });
    const next = await call("GET", `/users/me/channels/subscribed?count=1&before_id=${first.body.meta.min_id}`, { token: u.token });
    expect(next.body.data.map((c: any) => c.id)).toEqual([c1.id]);
    expect(next.body.meta.more).toBe(false);
    const typed = await call("GET", "/users/me/channels/subscribed?channel_types=com.example.room", { token: u.token });
    expect(typed.body.data.map((c: any) => c.id)).toEqual([c2.id]);

    const un = await call("DELETE", `/channels/${c1.id}/subscribe`, { token: u.token, now: tick() });
    expect(un.status).toBe(200);
    expect(un.body.data).toMatchObject({ you_subscribed: false, counts: { subscribers: 1 } });
    expect((await call("GET", "/users/me/channels/subscribed", { token: u.token })).body.data.map((c: any) => c.id)).toEqual([c2.id]);
    expect((await call("GET", "/users/me/channels/subscribed")).status).toBe(401);
  });
});

describe("channel muting (api.md §3)", () => {
  it("subscribed → PUT mute → muted, not subscribed; listed in /users/me/channels/muted", async () => {
    const owner = await actor("messages");
    const u = await actor("messages");
    const ch = await newChannel(owner.token, { acl: { read: { public: true } } });
    await call("PUT", `/channels/${ch.id}/subscribe`, { token: u.token, now: tick() });

    const muted = await call("PUT", `/channels/${ch.id}/mute`, { token: u.token, now: tick() });
    expect(muted.status).toBe(200);
    expect(muted.body.data).toMatchObject({ id: ch.id, you_muted: true, you_subscribed: false, counts: { subscribers: 1 } });
    expect((await call("GET", "/users/me/channels/subscribed", { token: u.token })).body.data).toEqual([]);
    const list = await call("GET", "/users/me/channels/muted", { token: u.token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: any) => c.id)).toEqual([ch.id]);
    expect(list.body.data[0]).toMatchObject({ you_muted: true, pagination_id: expect.any(String) });
    expect(list.body.meta).toMatchObject({ more: false, min_id: list.body.data[0].pagination_id });

    // Muting again changes nothing.
    const again = await call("PUT", `/channels/${ch.id}/mute`, { token: u.token, now: tick() });
    expect(again.body.data).toMatchObject({ you_muted: true, you_subscribed: false });
    expect((await call("GET", "/users/me/channels/muted", { token: u.token })).body.data).toHaveLength(1);
  });

  it("not muted → PUT mute → muted; muted → DELETE mute → not muted, and not resubscribed", async () => {
    const owner = await actor("messages");
    const u = await actor("messages");
    const ch = await newChannel(owner.token, { acl: { read: { any_user: true } } });
    const muted = await call("PUT", `/channels/${ch.id}/mute`, { token: u.token, now: tick() });
    expect(muted.body.data).toMatchObject({ you_muted: true, you_subscribed: false });

    const unmuted = await call("DELETE", `/channels/${ch.id}/mute`, { token: u.token, now: tick() });
    expect(unmuted.status).toBe(200);
    expect(unmuted.body.data).toMatchObject({ id: ch.id, you_muted: false, you_subscribed: false });
    expect((await call("GET", "/users/me/channels/muted", { token: u.token })).body.data).toEqual([]);

    // Subscribed, muted (unsubscribed), unmuted: still not subscribed.
    await call("PUT", `/channels/${ch.id}/subscribe`, { token: u.token, now: tick() });
    await call("PUT", `/channels/${ch.id}/mute`, { token: u.token, now: tick() });
    const back = await call("DELETE", `/channels/${ch.id}/mute`, { token: u.token, now: tick() });
    expect(back.body.data).toMatchObject({ you_muted: false, you_subscribed: false });
    expect((await call("GET", "/users/me/channels/subscribed", { token: u.token })).body.data).toEqual([]);
  });

  it("a muted user is not auto-subscribed by others' private messages until they unmute", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const first = await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "one" }, now: tick() });
    expect(first.status).toBe(201);
    const pm = first.body.data.channel_id;
    expect((await call("GET", `/channels/${pm}`, { token: b.token })).body.data.you_subscribed).toBe(true);

    // Unsubscribed but not muted: the next message subscribes B again.
    await call("DELETE", `/channels/${pm}/subscribe`, { token: b.token, now: tick() });
    await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "two" }, now: tick() });
    expect((await call("GET", `/channels/${pm}`, { token: b.token })).body.data.you_subscribed).toBe(true);

    // Muted: B leaves and stays out.
    const muted = await call("PUT", `/channels/${pm}/mute`, { token: b.token, now: tick() });
    expect(muted.body.data).toMatchObject({ you_muted: true, you_subscribed: false, counts: { subscribers: 1 } });
    await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [`@${b.user.username}`], text: "three" }, now: tick() });
    await call("POST", `/channels/${pm}/messages`, { token: a.token, json: { text: "four" }, now: tick() });
    const still = await call("GET", `/channels/${pm}`, { token: b.token });
    expect(still.body.data).toMatchObject({ you_muted: true, you_subscribed: false, counts: { subscribers: 1, messages: 4 } });
    expect((await call("GET", "/users/me/channels/subscribed", { token: b.token })).body.data).toEqual([]);
    // B can still read the channel it muted.
    expect((await call("GET", `/channels/${pm}/messages`, { token: b.token })).body.data).toHaveLength(4);

    // Unmuted: not resubscribed by the unmute itself, but the next message subscribes B.
    const unmuted = await call("DELETE", `/channels/${pm}/mute`, { token: b.token, now: tick() });
    expect(unmuted.body.data).toMatchObject({ you_muted: false, you_subscribed: false });
    await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "five" }, now: tick() });
    expect((await call("GET", `/channels/${pm}`, { token: b.token })).body.data).toMatchObject({ you_subscribed: true, counts: { subscribers: 2 } });
  });

  it("subscribing by one's own act lifts the mute", async () => {
    const owner = await actor("messages");
    const u = await actor("messages");
    const ch = await newChannel(owner.token, { acl: { read: { public: true } } });
    await call("PUT", `/channels/${ch.id}/mute`, { token: u.token, now: tick() });
    const sub = await call("PUT", `/channels/${ch.id}/subscribe`, { token: u.token, now: tick() });
    expect(sub.body.data).toMatchObject({ you_muted: false, you_subscribed: true });
    expect((await call("GET", "/users/me/channels/muted", { token: u.token })).body.data).toEqual([]);
  });

  it("needs a user token with the messages scope; unreadable channels are 404 and nothing is stored", async () => {
    const owner = await actor("messages");
    const u = await actor("messages");
    const ch = await newChannel(owner.token, { acl: { read: { public: true } } });
    const priv = await newChannel(owner.token);
    expect((await call("PUT", `/channels/${ch.id}/mute`, { now: tick() })).status).toBe(401);
    const app = await makeApp();
    expect((await call("PUT", `/channels/${ch.id}/mute`, { token: await appToken(app), now: tick() })).status).toBe(403);
    const pub = await userToken(app, u.user, "public_messages");
    expect((await call("PUT", `/channels/${ch.id}/mute`, { token: pub, now: tick() })).status).toBe(403);
    expect((await call("DELETE", `/channels/${ch.id}/mute`, { token: pub, now: tick() })).status).toBe(403);
    expect((await call("GET", "/users/me/channels/muted", { token: pub })).status).toBe(403);

    expect((await call("PUT", `/channels/${priv.id}/mute`, { token: u.token, now: tick() })).status).toBe(404);
    expect((await call("DELETE", `/channels/${priv.id}/mute`, { token: u.token, now: tick() })).status).toBe(404);
    expect((await call("PUT", "/channels/99999999/mute", { token: u.token, now: tick() })).status).toBe(404);
    expect((await call("GET", "/users/me/channels/muted", { token: u.token })).body.data).toEqual([]);
  });

  it("paginates the muted list, most recently muted first", async () => {
    const owner = await actor("messages");
    const u = await actor("messages");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ch = await newChannel(owner.token, { acl: { read: { public: true } } });
      await call("PUT", `/channels/${ch.id}/mute`, { token: u.token, now: tick() });
      ids.push(ch.id);
    }
    const p1 = await call("GET", "/users/me/channels/muted?count=2", { token: u.token });
    expect(p1.body.data.map((c: any) => c.id)).toEqual([ids[2], ids[1]]);
    expect(p1.body.meta.more).toBe(true);
    const p2 = await call("GET", `/users/me/channels/muted?count=2&before_id=${p1.body.meta.min_id}`, { token: u.token });
    expect(p2.body.data.map((c: any) => c.id)).toEqual([ids[0]]);
    expect(p2.body.meta.more).toBe(false);
    const oldest = await call("GET", "/users/me/channels/muted?count=-2", { token: u.token });
    expect(oldest.body.data.map((c: any) => c.id)).toEqual([ids[1], ids[0]]);
  });
});
