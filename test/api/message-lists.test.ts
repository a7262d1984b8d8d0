import { describe, expect, it } from "vitest";
import { actor, call, makeApp, userToken } from "../support/client";
import { createChannel } from "../support/fixtures";

// Message lookups and lists beyond a channel's stream (issue 18): GET /channels/messages?ids=,
// GET /users/me/messages, GET /channels/{cid}/messages/{mid}/thread; the general message
// parameters; delete rights and `deleted_by` (the reference's lifecycle and lookup pages).

// Writes carry an advancing test clock: each token may write 20 times a minute (decisions §9).
let clock = Math.floor(Date.now() / 1000) + 100_000;
const tick = () => (clock += 4);

const newChannel = (token: string, acl: Record<string, unknown> = {}, type = "com.example.chat") => createChannel(token, { type, acl }, { now: tick() });

async function sent(token: string, channelId: string, text: string, extra: Record<string, unknown> = {}) {
  const res = await call("POST", `/channels/${channelId}/messages`, { token, json: { text, ...extra }, now: tick() });
  if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
  return res.body.data;
}

const ids = (res: { body: any }) => res.body.data.map((m: any) => m.id);

describe("GET /channels/messages?ids=", () => {
  it("returns the readable messages in the order asked, each once, skipping unknown and unreadable ones", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const pub = await newChannel(a.token, { read: { public: true } });
    const priv = await newChannel(a.token);
    const m1 = await sent(a.token, pub.id, "one");
    const m2 = await sent(a.token, pub.id, "two");
    const secret = await sent(a.token, priv.id, "secret");
    const q = `/channels/messages?ids=${m2.id},99999999,${m1.id},${secret.id},${m2.id}`;

    const anon = await call("GET", q);
    expect(anon.status).toBe(200);
    expect(ids(anon)).toEqual([m2.id, m1.id]);
    expect(ids(await call("GET", q, { token: b.token }))).toEqual([m2.id, m1.id]);
    expect(ids(await call("GET", q, { token: a.token }))).toEqual([m2.id, m1.id, secret.id]);
  });

  it("lists deleted messages without content unless include_deleted=0; a bad ids list is a 400", async () => {
    const a = await actor("messages");
    const ch = await newChannel(a.token, { read: { public: true } });
    const live = await sent(a.token, ch.id, "live");
    const gone = await sent(a.token, ch.id, "gone");
    expect((await call("DELETE", `/channels/${ch.id}/messages/${gone.id}`, { token: a.token, now: tick() })).status).toBe(200);
    const all = await call("GET", `/channels/messages?ids=${live.id},${gone.id}`);
    expect(all.body.data[1]).toMatchObject({ id: gone.id, is_deleted: true });
    expect(all.body.data[1]).not.toHaveProperty("content");
    // Deleted by its author: no deleted_by.
    expect(all.body.data[1]).not.toHaveProperty("deleted_by");
    expect(ids(await call("GET", `/channels/messages?ids=${live.id},${gone.id}&include_deleted=0`))).toEqual([live.id]);

    const bad = await call("GET", "/channels/messages?ids=1,x");
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("'ids'");
    expect((await call("GET", "/channels/messages")).status).toBe(400);
    expect((await call("GET", `/channels/messages?ids=${live.id}&include_deleted=2`)).status).toBe(400);
  });
});

describe("GET /users/me/messages", () => {
  it("pages the caller's own messages newest first, in every channel, deleted ones as is_deleted", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const ch1 = await newChannel(a.token, { read: { public: true }, write: { any_user: true } });
    const ch2 = await newChannel(b.token, { write: { user_ids: [a.user.id] } });
    const x = await sent(a.token, ch1.id, "x");
    await sent(b.token, ch1.id, "not mine");
    const y = await sent(a.token, ch2.id, "y");
    const z = await sent(a.token, ch1.id, "z");
    await call("DELETE", `/channels/${ch1.id}/messages/${x.id}`, { token: a.token, now: tick() });

    const all = await call("GET", "/users/me/messages", { token: a.token });
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual([z.id, y.id, x.id]);
    expect(all.body.data[2].is_deleted).toBe(true);
    expect(all.body.data[0].pagination_id).toBe(z.id);
    expect(all.body.meta).toMatchObject({ more: false, max_id: z.id, min_id: x.id });

    const first = await call("GET", "/users/me/messages?count=2", { token: a.token });
    expect(ids(first)).toEqual([z.id, y.id]);
    expect(first.body.meta.more).toBe(true);
    expect(ids(await call("GET", `/users/me/messages?before_id=${y.id}`, { token: a.token }))).toEqual([x.id]);
    expect(ids(await call("GET", "/users/me/messages?include_deleted=0", { token: a.token }))).toEqual([z.id, y.id]);
  });

  it("needs a user token with the messages scope", async () => {
    expect((await call("GET", "/users/me/messages")).status).toBe(401);
    const noScope = await actor("basic");
    expect((await call("GET", "/users/me/messages", { token: noScope.token })).status).toBe(403);
  });

  it("a token narrowed to a channel type sees only messages in channels of that type", async () => {
    const a = await actor("messages");
    const chat = await newChannel(a.token, {}, "com.example.chat");
    const other = await newChannel(a.token, {}, "com.example.other");
    const inChat = await sent(a.token, chat.id, "chat");
    await sent(a.token, other.id, "other");
    // The same user with a token narrowed to one channel type.
    const tok = await userToken(await makeApp(), a.user, "messages:com.example.chat");
    expect(ids(await call("GET", "/users/me/messages", { token: tok }))).toEqual([inChat.id]);
  });
});

describe("GET /channels/{channel_id}/messages/{message_id}/thread", () => {
  it("lists every message of the message's thread, newest first, paginated", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const ch = await newChannel(a.token, { read: { public: true }, write: { any_user: true } });
    const root = await sent(a.token, ch.id, "root");
    const r1 = await sent(b.token, ch.id, "r1", { reply_to: root.id });
    await sent(a.token, ch.id, "elsewhere");
    const r2 = await sent(a.token, ch.id, "r2", { reply_to: r1.id });

    for (const m of [root, r1, r2]) {
      const res = await call("GET", `/channels/${ch.id}/messages/${m.id}/thread`);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([r2.id, r1.id, root.id]);
      expect(res.body.data.every((x: any) => x.thread_id === root.id)).toBe(true);
    }
    const page = await call("GET", `/channels/${ch.id}/messages/${root.id}/thread?count=2`, { token: b.token });
    expect(ids(page)).toEqual([r2.id, r1.id]);
    expect(page.body.meta).toMatchObject({ more: true, min_id: r1.id, max_id: r2.id });
    expect(ids(await call("GET", `/channels/${ch.id}/messages/${root.id}/thread?count=-2`))).toEqual([r1.id, root.id]);

    await call("DELETE", `/channels/${ch.id}/messages/${r1.id}`, { token: b.token, now: tick() });
    expect(ids(await call("GET", `/channels/${ch.id}/messages/${root.id}/thread?include_deleted=0`))).toEqual([r2.id, root.id]);
  });

  it("is a 404 for an unknown message, a message of another channel, or a channel the caller cannot read", async () => {
    const a = await actor("messages");
    const outsider = await actor("messages");
    const ch = await newChannel(a.token);
    const other = await newChannel(a.token, { read: { public: true } });
    const m = await sent(a.token, ch.id, "private");
    const elsewhere = await sent(a.token, other.id, "public");
    expect((await call("GET", `/channels/${ch.id}/messages/${m.id}/thread`, { token: a.token })).status).toBe(200);
    expect((await call("GET", `/channels/${ch.id}/messages/${m.id}/thread`, { token: outsider.token })).status).toBe(404);
    expect((await call("GET", `/channels/${ch.id}/messages/${m.id}/thread`)).status).toBe(404);
    expect((await call("GET", `/channels/${other.id}/messages/${m.id}/thread`)).status).toBe(404);
    expect((await call("GET", `/channels/${other.id}/messages/99999999/thread`)).status).toBe(404);
    expect((await call("GET", `/channels/${other.id}/messages/${elsewhere.id}/thread`)).status).toBe(200);
  });
});

describe("general message parameters", () => {
  it("include_html / include_message_html, include_client, include_message_raw / include_raw, include_user", async () => {
    const a = await actor("messages");
    const ch = await newChannel(a.token, { read: { public: true } });
    const m = await sent(a.token, ch.id, "hello #tag", { raw: { "com.example.meta": [{ k: 1 }] } });
    const one = `/channels/${ch.id}/messages/${m.id}`;
    const lists = [`/channels/${ch.id}/messages`, `/channels/messages?ids=${m.id}`, `/channels/${ch.id}/messages/${m.id}/thread`];

    const plain = (await call("GET", one)).body.data;
    expect(plain.content.html).toContain("<span");
    expect(plain.source).toMatchObject({ id: a.app.client_id, name: a.app.name });
    expect(plain).not.toHaveProperty("raw");

    for (const path of [one, ...lists]) {
      const sep = path.includes("?") ? "&" : "?";
      const get = async (q: string) => {
        const res = await call("GET", `${path}${sep}${q}`, { token: a.token });
        expect(res.status, `${path} ${q}`).toBe(200);
        return Array.isArray(res.body.data) ? res.body.data[0] : res.body.data;
      };
      expect((await get("include_message_html=0")).content).not.toHaveProperty("html");
      const noHtml = await get("include_html=0");
      expect(noHtml.content).not.toHaveProperty("html");
      expect(noHtml.content.text).toBe("hello #tag");
      expect(noHtml.user.content ?? {}).not.toHaveProperty("html");
      // include_html takes priority over include_message_html.
      expect((await get("include_html=1&include_message_html=0")).content.html).toContain("<span");
      expect((await get("include_client=0")).source).toBe(a.app.client_id);
      expect((await get("include_message_raw=1")).raw).toEqual({ "com.example.meta": [{ k: 1 }] });
      expect((await get("include_raw=1")).raw).toEqual({ "com.example.meta": [{ k: 1 }] });
      const noUser = await get("include_user=0");
      expect(noUser.user_id).toBe(a.user.id);
      expect(noUser).not.toHaveProperty("user");
    }
    const bad = await call("GET", `${one}?include_message_html=yes`);
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("include_message_html");
  });
});

describe("delete rights and deleted_by", () => {
  it("full-access users and the owner delete others' messages in ordinary channels, which then show deleted_by", async () => {
    const owner = await actor("messages");
    const mod = await actor("messages");
    const writer = await actor("messages");
    const other = await actor("messages");
    const ch = await newChannel(owner.token, { full: { user_ids: [mod.user.id] }, read: { public: true }, write: { any_user: true } });
    const w1 = await sent(writer.token, ch.id, "spam 1");
    const w2 = await sent(writer.token, ch.id, "spam 2");
    const w3 = await sent(writer.token, ch.id, "mine");

    expect((await call("DELETE", `/channels/${ch.id}/messages/${w1.id}`, { token: other.token, now: tick() })).status).toBe(403);
    const byMod = await call("DELETE", `/channels/${ch.id}/messages/${w1.id}`, { token: mod.token, now: tick() });
    expect(byMod.status).toBe(200);
    expect(byMod.body.data).toMatchObject({ is_deleted: true, deleted_by: mod.user.id });
    const byOwner = await call("DELETE", `/channels/${ch.id}/messages/${w2.id}`, { token: owner.token, now: tick() });
    expect(byOwner.body.data.deleted_by).toBe(owner.user.id);
    const own = await call("DELETE", `/channels/${ch.id}/messages/${w3.id}`, { token: writer.token, now: tick() });
    expect(own.body.data.is_deleted).toBe(true);
    expect(own.body.data).not.toHaveProperty("deleted_by");

    // Shown wherever the message is read.
    expect((await call("GET", `/channels/${ch.id}/messages/${w1.id}`)).body.data.deleted_by).toBe(mod.user.id);
    const list = (await call("GET", `/channels/${ch.id}/messages`)).body.data;
    expect(list.map((m: any) => m.deleted_by ?? null)).toEqual([null, owner.user.id, mod.user.id]);
  });

  it("in private-message channels only the author may delete", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const m = (await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "hi" }, now: tick() })).body.data;
    const reply = await sent(b.token, m.channel_id, "hello back");
    // a owns the PM channel, yet may not delete b's message.
    expect((await call("DELETE", `/channels/${m.channel_id}/messages/${reply.id}`, { token: a.token, now: tick() })).status).toBe(403);
    expect((await call("DELETE", `/channels/${m.channel_id}/messages/${reply.id}`, { token: b.token, now: tick() })).status).toBe(200);
  });

  it("authors read and delete their messages after losing access to the channel", async () => {
    const owner = await actor("messages");
    const writer = await actor("messages");
    const ch = await newChannel(owner.token, { write: { user_ids: [writer.user.id] } });
    const m = await sent(writer.token, ch.id, "before");
    const cut = await call("PUT", `/channels/${ch.id}`, { token: owner.token, json: { acl: { write: { user_ids: [] } } }, now: tick() });
    expect(cut.status).toBe(200);
    expect((await call("GET", `/channels/${ch.id}/messages`, { token: writer.token })).status).toBe(404);
    expect((await call("GET", `/channels/${ch.id}/messages/${m.id}`, { token: writer.token })).status).toBe(200);
    expect(ids(await call("GET", `/channels/messages?ids=${m.id}`, { token: writer.token }))).toEqual([m.id]);
    const del = await call("DELETE", `/channels/${ch.id}/messages/${m.id}`, { token: writer.token, now: tick() });
    expect(del.status).toBe(200);
    expect(del.body.data.is_deleted).toBe(true);
  });
});
