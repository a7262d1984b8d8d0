import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { actor, appToken, call, makeApp, makeUser, userToken } from "../support/client";
import { DB } from "../support/db";
import { createChannel } from "../support/fixtures";

// Writes carry an advancing test clock: each token may write 20 times a minute (decisions §9).
let clock = Math.floor(Date.now() / 1000);
const tick = () => (clock += 4);

const PM = "io.example.core.pm";

const newChannel = (token: string, acl: Record<string, unknown> = {}, type = "com.example.chat") => createChannel(token, { type, acl }, { now: tick() });

async function send(token: string, channelId: string, json: Record<string, unknown>, query = "") {
  return call("POST", `/channels/${channelId}/messages${query}`, { token, json, now: tick() });
}

async function sent(token: string, channelId: string, text: string, extra: Record<string, unknown> = {}) {
  const res = await send(token, channelId, { text, ...extra });
  if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
  return res.body.data;
}

describe("POST /channels/{id}/messages", () => {
  it("creates a message (201) with the fields of decisions §4", async () => {
    const a = await actor("messages");
    const b = await makeUser();
    const ch = await newChannel(a.token, { read: { public: true } });
    const at = tick();
    const res = await call("POST", `/channels/${ch.id}/messages`, {
      token: a.token,
      now: at,
      json: { text: `hi @${b.username} #News see example.com/m/{object_id}`, is_nsfw: true, raw: { "com.example.meta": [{ k: 1 }] } },
    });
    expect(res.status).toBe(201);
    expect(res.body.meta.code).toBe(201);
    const m = res.body.data;
    expect(m).toMatchObject({
      channel_id: ch.id,
      thread_id: m.id,
      counts: { replies: 0 },
      source: { id: a.app.client_id, name: a.app.name },
      user: { id: a.user.id },
      is_sticky: false,
      is_nsfw: true,
    });
    expect(m.created_at).toBe(new Date(at * 1000).toISOString().slice(0, 19) + "Z");
    expect(m).not.toHaveProperty("reply_to");
    expect(m).not.toHaveProperty("is_deleted");
    expect(m).not.toHaveProperty("raw");
    expect(m.content.text).toBe(`hi @${b.username} #News see example.com/m/{object_id}`);
    expect(m.content.entities.mentions).toEqual([{ pos: 3, len: b.username.length + 1, text: b.username, id: b.id }]);
    expect(m.content.entities.tags).toEqual([expect.objectContaining({ text: "News" })]);
    // {object_id} in a link URL becomes the new message's id (decisions §5).
    expect(m.content.entities.links[0].url).toBe(`http://example.com/m/${m.id}`);
    expect(m.content.html).toContain(`href="http://example.com/m/${m.id}"`);
    expect(m.content.html).toContain('itemtype="https://schema.example.io/Message"');

    const raw = await call("GET", `/channels/${ch.id}/messages/${m.id}?include_raw=1`);
    expect(raw.body.data.raw).toEqual({ "com.example.meta": [{ k: 1 }] });
    expect((await call("GET", `/channels/${ch.id}/messages/${m.id}?include_message_raw=1`)).body.data.raw).toEqual({ "com.example.meta": [{ k: 1 }] });
    expect((await call("GET", `/channels/${ch.id}`)).body.data).toMatchObject({ counts: { messages: 1 }, recent_message_id: m.id });
  });

  it("threads replies and counts them; reply_to must be a live message of the same channel", async () => {
    const a = await actor("messages");
    const ch = await newChannel(a.token);
    const other = await newChannel(a.token);
    const root = await sent(a.token, ch.id, "root");
    const reply = await sent(a.token, ch.id, "reply", { reply_to: root.id });
    expect(reply).toMatchObject({ reply_to: root.id, thread_id: root.id });
    const nested = await sent(a.token, ch.id, "nested", { reply_to: reply.id });
    expect(nested).toMatchObject({ reply_to: reply.id, thread_id: root.id });
    expect((await call("GET", `/channels/${ch.id}/messages/${root.id}`, { token: a.token })).body.data.counts.replies).toBe(1);

    const elsewhere = await sent(a.token, other.id, "elsewhere");
    const cross = await send(a.token, ch.id, { text: "x", reply_to: elsewhere.id });
    expect(cross.status).toBe(400);
    expect(cross.body.meta.error_message).toMatch(/'reply_to'/);
    expect((await send(a.token, ch.id, { text: "x", reply_to: "abc" })).status).toBe(400);
    await call("DELETE", `/channels/${other.id}/messages/${elsewhere.id}`, { token: a.token, now: tick() });
    expect((await send(a.token, other.id, { text: "x", reply_to: elsewhere.id })).status).toBe(400);
  });

  it("refuses bad input with a 400 naming the field and writes nothing", async () => {
    const a = await actor("messages");
    const ch = await newChannel(a.token);
    const bad = async (json: unknown, field: RegExp) => {
      const res = await call("POST", `/channels/${ch.id}/messages`, { token: a.token, json, now: tick() });
      expect(res.status).toBe(400);
      expect(res.body.meta.error_message).toMatch(field);
    };
    await bad({}, /'text'/);
    await bad({ text: "" }, /'text'/);
    await bad({ text: 5 }, /'text'/);
    await bad({ text: "x".repeat(2049) }, /'text' is longer than 2048/);
    await bad({ text: "ok", is_nsfw: "maybe" }, /'is_nsfw'/);
    await bad({ text: "ok", raw: { "bad type": [{}] } }, /'raw'/);
    expect((await send(a.token, ch.id, { text: "x".repeat(2048) })).status).toBe(201);
    const list = await call("GET", `/channels/${ch.id}/messages`, { token: a.token });
    expect(list.body.data).toHaveLength(1);
    const plain = await call("POST", `/channels/${ch.id}/messages`, {
      token: a.token,
      body: JSON.stringify({ text: "x" }),
      headers: { "Content-Type": "text/plain" },
      now: tick(),
    });
    expect(plain.status).toBe(415);
  });

  it("follows the ACL for writes and the scope rules", async () => {
    const a = await actor("messages");
    const reader = await actor("messages");
    const writer = await actor("messages");
    const outsider = await actor("messages");
    const ch = await newChannel(a.token, { read: { user_ids: [reader.user.id] }, write: { user_ids: [writer.user.id] } });
    expect((await send(writer.token, ch.id, { text: "w" })).status).toBe(201);
    const ro = await send(reader.token, ch.id, { text: "r" });
    expect(ro.status).toBe(403);
    expect((await send(outsider.token, ch.id, { text: "o" })).status).toBe(404);
    expect((await send(a.token, "99999999", { text: "o" })).status).toBe(404);

    const open = await newChannel(a.token, { read: { public: true }, write: { any_user: true } });
    expect((await send(outsider.token, open.id, { text: "anyone" })).status).toBe(201);
    const app = await makeApp();
    expect((await send(await appToken(app), open.id, { text: "app" })).status).toBe(403);
    expect((await call("POST", `/channels/${open.id}/messages`, { json: { text: "anon" }, now: tick() })).status).toBe(401);
    const basic = await userToken(app, outsider.user, "basic");
    expect((await send(basic, open.id, { text: "basic" })).status).toBe(403);
    // public_messages is enough for a public channel, not for a private one.
    const pub = await userToken(app, writer.user, "public_messages");
    expect((await send(pub, open.id, { text: "pub" })).status).toBe(201);
    expect((await send(pub, ch.id, { text: "pub" })).status).toBe(403);
    // messages:<type> narrows the scope to channels of that type.
    const narrow = await userToken(app, writer.user, "messages:com.example.chat");
    expect((await send(narrow, ch.id, { text: "narrow" })).status).toBe(201);
    const room = await newChannel(a.token, { write: { user_ids: [writer.user.id] } }, "com.example.room");
    expect((await send(narrow, room.id, { text: "narrow" })).status).toBe(403);
  });
});

describe("GET /channels/{id}/messages and /messages/{id}", () => {
  it("pages newest first by message id; public channels need no token", async () => {
    const a = await actor("messages");
    const ch = await newChannel(a.token, { read: { public: true } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await sent(a.token, ch.id, `message ${i}`)).id);
    const all = await call("GET", `/channels/${ch.id}/messages`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((m: any) => m.id)).toEqual([...ids].reverse());
    expect(all.body.data.map((m: any) => m.pagination_id)).toEqual([...ids].reverse());
    expect(all.body.meta).toMatchObject({ code: 200, more: false, max_id: ids[4], min_id: ids[0] });
    expect(all.headers.get("x-debug-db-calls")).toBe("1");

    const p1 = await call("GET", `/channels/${ch.id}/messages?count=2`);
    expect(p1.body.data.map((m: any) => m.id)).toEqual([ids[4], ids[3]]);
    expect(p1.body.meta).toMatchObject({ more: true, min_id: ids[3], max_id: ids[4] });
    const p2 = await call("GET", `/channels/${ch.id}/messages?count=2&before_id=${p1.body.meta.min_id}`);
    expect(p2.body.data.map((m: any) => m.id)).toEqual([ids[2], ids[1]]);
    const since = await call("GET", `/channels/${ch.id}/messages?since_id=${ids[2]}`);
    expect(since.body.data.map((m: any) => m.id)).toEqual([ids[4], ids[3]]);
    const oldest = await call("GET", `/channels/${ch.id}/messages?count=-2`);
    expect(oldest.body.data.map((m: any) => m.id)).toEqual([ids[1], ids[0]]);
    expect(oldest.body.meta.more).toBe(true);
    const between = await call("GET", `/channels/${ch.id}/messages?since_id=${ids[0]}&before_id=${ids[4]}`);
    expect(between.body.data.map((m: any) => m.id)).toEqual([ids[3], ids[2], ids[1]]);
    expect((await call("GET", `/channels/${ch.id}/messages?before_id=xyz`)).status).toBe(400);

    const one = await call("GET", `/channels/${ch.id}/messages/${ids[1]}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ id: ids[1], content: { text: "message 1" } });
    expect(one.body.data).not.toHaveProperty("pagination_id");
  });

  it("another user's channel is a 404 for lists and lookups; a message under the wrong channel too", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const priv = await newChannel(a.token);
    const pub = await newChannel(a.token, { read: { public: true } });
    const m = await sent(a.token, priv.id, "secret");
    expect((await call("GET", `/channels/${priv.id}/messages`, { token: b.token })).status).toBe(404);
    expect((await call("GET", `/channels/${priv.id}/messages`)).status).toBe(404);
    expect((await call("GET", `/channels/${priv.id}/messages/${m.id}`, { token: b.token })).status).toBe(404);
    expect((await call("GET", `/channels/${pub.id}/messages/${m.id}`, { token: b.token })).status).toBe(404);
    expect((await call("GET", `/channels/${priv.id}/messages/${m.id}`, { token: a.token })).status).toBe(200);
    expect((await call("GET", `/channels/99999999/messages`)).status).toBe(404);
  });

  it("shows a message's client, and [REMOVED] once the client is deleted", async () => {
    const a = await actor("messages");
    const ch = await newChannel(a.token, { read: { public: true } });
    const m = await sent(a.token, ch.id, "from an app that goes away");
    const source = async () => (await call("GET", `/channels/${ch.id}/messages`)).body.data.find((x: { id: string }) => x.id === m.id).source;
    // Read twice: the second render takes the client the isolate remembered from the first.
    for (let i = 0; i < 2; i++) expect(await source()).toMatchObject({ id: a.app.client_id, name: a.app.name });
    expect((await call("DELETE", `/admin/apps/${a.app.id}`, { token: "test-admin-token" })).status).toBe(200);
    expect(await source()).toEqual({ id: "0", name: "[REMOVED]", url: "" });
  });
});

describe("DELETE /channels/{id}/messages/{message_id}", () => {
  it("lets the author or the channel owner delete; the message stays as is_deleted without content", async () => {
    const owner = await actor("messages");
    const author = await actor("messages");
    const other = await actor("messages");
    const ch = await newChannel(owner.token, { read: { public: true }, write: { any_user: true } });
    const root = await sent(author.token, ch.id, "root");
    const byAuthor = await sent(author.token, ch.id, "mine", { reply_to: root.id });
    const byOther = await sent(other.token, ch.id, "theirs");
    expect((await call("GET", `/channels/${ch.id}`)).body.data).toMatchObject({ counts: { messages: 3 }, recent_message_id: byOther.id });

    const denied = await call("DELETE", `/channels/${ch.id}/messages/${byAuthor.id}`, { token: other.token, now: tick() });
    expect(denied.status).toBe(403);
    const del = await call("DELETE", `/channels/${ch.id}/messages/${byAuthor.id}`, { token: author.token, now: tick() });
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ id: byAuthor.id, is_deleted: true, user: { id: author.user.id }, reply_to: root.id });
    expect(del.body.data).not.toHaveProperty("content");
    expect((await call("GET", `/channels/${ch.id}/messages/${root.id}`)).body.data.counts.replies).toBe(0);

    const byOwner = await call("DELETE", `/channels/${ch.id}/messages/${byOther.id}`, { token: owner.token, now: tick() });
    expect(byOwner.status).toBe(200);
    expect((await call("GET", `/channels/${ch.id}`)).body.data).toMatchObject({ counts: { messages: 1 }, recent_message_id: root.id });
    // Deleting again changes nothing.
    const again = await call("DELETE", `/channels/${ch.id}/messages/${byOther.id}`, { token: owner.token, now: tick() });
    expect(again.body.data.is_deleted).toBe(true);
    expect((await call("GET", `/channels/${ch.id}`)).body.data.counts.messages).toBe(1);

    const lookup = await call("GET", `/channels/${ch.id}/messages/${byOther.id}`);
    expect(lookup.body.data).toMatchObject({ is_deleted: true });
    expect(lookup.body.data).not.toHaveProperty("content");
    const list = await call("GET", `/channels/${ch.id}/messages`);
    expect(list.body.data.map((m: any) => [m.id, m.is_deleted ?? false])).toEqual([
      [byOther.id, true],
      [byAuthor.id, true],
      [root.id, false],
    ]);
    const live = await call("GET", `/channels/${ch.id}/messages?include_deleted=0`);
    expect(live.body.data.map((m: any) => m.id)).toEqual([root.id]);
    expect((await call("DELETE", `/channels/${ch.id}/messages/99999999`, { token: owner.token, now: tick() })).status).toBe(404);
  });
});

describe("private messages", () => {
  it("creates the PM channel on the first message and reuses it for the same users, from either side", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const c = await makeUser();
    const first = await call("POST", "/channels/pm/messages", {
      token: a.token,
      json: { destinations: [`@${b.user.username}`, c.id], text: "hello both" },
      now: tick(),
    });
    expect(first.status).toBe(201);
    const pmId = first.body.data.channel_id;
    const ch = await call("GET", `/channels/${pmId}`, { token: a.token });
    expect(ch.body.data).toMatchObject({
      type: PM,
      user: { id: a.user.id },
      acl: {
        // As the reference's private-message how-to: every participant writes, the creator too; nobody has full access.
        full: { immutable: true, you: false, user_ids: [] },
        write: { any_user: false, immutable: true, you: true, user_ids: [a.user.id, b.user.id, c.id].sort((x, y) => Number(x) - Number(y)) },
        read: { any_user: false, public: false, immutable: true, user_ids: [] },
      },
      counts: { messages: 1, subscribers: 3 },
      you_subscribed: true,
    });

    const reply = await call("POST", "/channels/pm/messages", {
      token: b.token,
      json: { destinations: `${a.user.id},${c.id}`, text: "back", reply_to: first.body.data.id },
      now: tick(),
    });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toMatchObject({ channel_id: pmId, reply_to: first.body.data.id, thread_id: first.body.data.id });
    const viaId = await send(b.token, pmId, { text: "by id" });
    expect(viaId.status).toBe(201);
    expect((await call("GET", `/channels/${pmId}`, { token: b.token })).body.data).toMatchObject({ counts: { messages: 3 }, you_subscribed: true });

    // A different set of users is a different channel.
    const pair = await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "just us" }, now: tick() });
    expect(pair.body.data.channel_id).not.toBe(pmId);
    const subscribed = await call("GET", `/users/me/channels/subscribed?channel_types=${PM}`, { token: b.token });
    expect(subscribed.body.data.map((x: any) => x.id).sort()).toEqual([pmId, pair.body.data.channel_id].sort());
  });

  it("another user's private messages are 404 everywhere", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const eve = await actor("messages");
    const m = (await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "private" }, now: tick() })).body.data;
    expect((await call("GET", `/channels/${m.channel_id}`, { token: eve.token })).status).toBe(404);
    expect((await call("GET", `/channels/${m.channel_id}/messages`, { token: eve.token })).status).toBe(404);
    expect((await call("GET", `/channels/${m.channel_id}/messages/${m.id}`, { token: eve.token })).status).toBe(404);
    expect((await call("GET", `/channels/${m.channel_id}/messages/${m.id}`)).status).toBe(404);
    expect((await send(eve.token, m.channel_id, { text: "let me in" })).status).toBe(404);
    expect((await call("PUT", `/channels/${m.channel_id}/subscribe`, { token: eve.token, now: tick() })).status).toBe(404);
    expect((await call("DELETE", `/channels/${m.channel_id}/messages/${m.id}`, { token: eve.token, now: tick() })).status).toBe(404);
    const reply = await call("POST", "/channels/pm/messages", {
      token: eve.token,
      json: { destinations: [a.user.id, b.user.id], text: "x", reply_to: m.id },
      now: tick(),
    });
    expect(reply.status).toBe(400);
  });

  it("validates destinations, blocks and scope", async () => {
    const a = await actor("messages");
    const b = await makeUser();
    const bad = async (json: unknown, status: number, msg: RegExp) => {
      const res = await call("POST", "/channels/pm/messages", { token: a.token, json, now: tick() });
      expect(res.status).toBe(status);
      expect(res.body.meta.error_message).toMatch(msg);
    };
    await bad({ text: "x" }, 400, /'destinations'/);
    await bad({ text: "x", destinations: [] }, 400, /'destinations'/);
    await bad({ text: "x", destinations: ["@no_such_user_qq"] }, 400, /'destinations' has unknown user '@no_such_user_qq'/);
    await bad({ text: "x", destinations: [a.user.id] }, 400, /at least one other user/);
    await bad({ destinations: [b.id] }, 400, /'text'/);

    const narrow = await userToken(a.app, a.user, "messages:com.example.chat");
    expect((await call("POST", "/channels/pm/messages", { token: narrow, json: { text: "x", destinations: [b.id] }, now: tick() })).status).toBe(403);
    const pmOnly = await userToken(a.app, a.user, `messages:${PM}`);
    expect((await call("POST", "/channels/pm/messages", { token: pmOnly, json: { text: "x", destinations: [b.id] }, now: tick() })).status).toBe(201);

    const blocker = await actor("messages");
    await DB.prepare("INSERT INTO user_blocks (user_id, blocked_id, created_at) VALUES (?, ?, 0)").bind(Number(blocker.user.id), Number(a.user.id)).run();
    await bad({ text: "x", destinations: [blocker.user.id] }, 403, /does not accept/);
  });
});

describe("POST /channels/{id}/messages/{message_id}/report", () => {
  it("stores a report for moderation (form or JSON body) → 201", async () => {
    const a = await actor("messages");
    const r = await actor("");
    const ch = await newChannel(a.token, { read: { public: true } });
    const m = await sent(a.token, ch.id, "spam spam");
    const form = await call("POST", `/channels/${ch.id}/messages/${m.id}/report`, { token: r.token, form: { reason: "soliciting" }, now: tick() });
    expect(form.status).toBe(201);
    expect(form.body.meta.code).toBe(201);
    expect(form.body.data.id).toBe(m.id);
    const json = await call("POST", `/channels/${ch.id}/messages/${m.id}/report`, { token: r.token, json: { reason: "nsfw" }, now: tick() });
    expect(json.status).toBe(201);
    const rows = await DB.prepare("SELECT channel_id, reporter_id, reason FROM reports WHERE message_id = ? ORDER BY id").bind(Number(m.id)).all();
    expect(rows.results).toEqual([
      { channel_id: Number(ch.id), reporter_id: Number(r.user.id), reason: "soliciting" },
      { channel_id: Number(ch.id), reporter_id: Number(r.user.id), reason: "nsfw" },
    ]);
  });

  it("refuses other reasons (400), unreadable or deleted messages (404), and app tokens", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const eve = await actor("messages");
    const pm = (await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "private" }, now: tick() })).body.data;
    const report = (token: string | undefined, body: Record<string, string>, path = `/channels/${pm.channel_id}/messages/${pm.id}/report`) =>
      call("POST", path, { token, form: body, now: tick() });
    for (const reason of ["", "spam", "NSFW"]) {
      const res = await report(b.token, { reason });
      expect(res.status).toBe(400);
      expect(res.body.meta.error_message).toMatch(/'reason' must be one of account_type, nsfw, soliciting, user_abuse/);
    }
    expect((await report(b.token, {})).status).toBe(400);
    expect((await report(eve.token, { reason: "user_abuse" })).status).toBe(404);
    expect((await report(undefined, { reason: "user_abuse" })).status).toBe(401);
    expect((await report(await appToken(await makeApp()), { reason: "user_abuse" })).status).toBe(403);
    expect((await report(b.token, { reason: "user_abuse" }, `/channels/${pm.channel_id}/messages/99999999/report`)).status).toBe(404);
    expect((await report(b.token, { reason: "account_type" })).status).toBe(201);
    await call("DELETE", `/channels/${pm.channel_id}/messages/${pm.id}`, { token: a.token, now: tick() });
    expect((await report(b.token, { reason: "nsfw" })).status).toBe(404);
    const rows = await DB.prepare("SELECT reporter_id, reason FROM reports WHERE message_id = ?").bind(Number(pm.id)).all();
    expect(rows.results).toEqual([{ reporter_id: Number(b.user.id), reason: "account_type" }]);
  });
});
