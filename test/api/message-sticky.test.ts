import { describe, expect, it } from "vitest";
import { actor, call } from "../support/client";
import { createChannel, testClock } from "../support/fixtures";

// Sticky messages (the reference's resources/messages/sticky.md): PUT/DELETE
// /channels/{cid}/messages/{mid}/sticky by full-access users (any participant in private
// messages), GET /channels/{id}/sticky_messages, and the search filter is_sticky=1.

const tick = testClock(200_000);

const newChannel = (token: string, acl: Record<string, unknown> = {}) => createChannel(token, { acl }, { now: tick() });

async function sent(token: string, channelId: string, text: string) {
  const res = await call("POST", `/channels/${channelId}/messages`, { token, json: { text }, now: tick() });
  if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
  return res.body.data;
}

const stick = (token: string, cid: string, mid: string, method = "PUT") => call(method, `/channels/${cid}/messages/${mid}/sticky`, { token, now: tick() });
const ids = (res: { body: any }) => res.body.data.map((m: any) => m.id);

describe("sticky messages", () => {
  it("full-access users stick and unstick; the list, the message and search show it", async () => {
    const owner = await actor("messages");
    const mod = await actor("messages");
    const writer = await actor("messages");
    const ch = await newChannel(owner.token, { full: { user_ids: [mod.user.id] }, read: { public: true }, write: { any_user: true } });
    const m1 = await sent(writer.token, ch.id, "first pinned words");
    const m2 = await sent(writer.token, ch.id, "second pinned words");
    await sent(writer.token, ch.id, "not pinned words");

    const denied = await stick(writer.token, ch.id, m1.id);
    expect(denied.status).toBe(403);
    const byOwner = await stick(owner.token, ch.id, m1.id);
    expect(byOwner.status).toBe(200);
    expect(byOwner.body.data).toMatchObject({ id: m1.id, is_sticky: true });
    expect((await stick(mod.token, ch.id, m2.id)).body.data.is_sticky).toBe(true);
    // Sticking twice is harmless.
    expect((await stick(mod.token, ch.id, m2.id)).status).toBe(200);

    expect((await call("GET", `/channels/${ch.id}/messages/${m1.id}`)).body.data.is_sticky).toBe(true);
    const list = await call("GET", `/channels/${ch.id}/sticky_messages`);
    expect(list.status).toBe(200);
    expect(ids(list)).toEqual([m2.id, m1.id]);
    expect(list.body.data.every((m: any) => m.is_sticky)).toBe(true);
    expect(list.body.meta).toMatchObject({ more: false, max_id: m2.id, min_id: m1.id });
    const page = await call("GET", `/channels/${ch.id}/sticky_messages?count=1`, { token: writer.token });
    expect(ids(page)).toEqual([m2.id]);
    expect(page.body.meta.more).toBe(true);

    const search = await call("GET", `/channels/messages/search?channel_ids=${ch.id}&is_sticky=1&order=id`);
    expect(ids(search)).toEqual([m2.id, m1.id]);
    const searchWords = await call("GET", `/channels/messages/search?channel_ids=${ch.id}&q=pinned&is_sticky=1`);
    expect(ids(searchWords).sort()).toEqual([m1.id, m2.id].sort());

    const un = await stick(mod.token, ch.id, m1.id, "DELETE");
    expect(un.status).toBe(200);
    expect(un.body.data.is_sticky).toBe(false);
    expect((await stick(writer.token, ch.id, m2.id, "DELETE")).status).toBe(403);
    expect(ids(await call("GET", `/channels/${ch.id}/sticky_messages`))).toEqual([m2.id]);
    expect(ids(await call("GET", `/channels/messages/search?channel_ids=${ch.id}&is_sticky=1&order=id`))).toEqual([m2.id]);

    // A deleted message is no longer sticky and cannot be stuck again.
    await call("DELETE", `/channels/${ch.id}/messages/${m2.id}`, { token: owner.token, now: tick() });
    expect(ids(await call("GET", `/channels/${ch.id}/sticky_messages`))).toEqual([]);
    const deleted = await stick(owner.token, ch.id, m2.id);
    expect(deleted.status).toBe(400);
    expect(deleted.body.meta.error_message).toContain("message_id");
  });

  it("any participant sticks in private-message channels", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const m = (await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "remember this" }, now: tick() })).body
      .data;
    const res = await stick(b.token, m.channel_id, m.id);
    expect(res.status).toBe(200);
    expect(res.body.data.is_sticky).toBe(true);
    expect(ids(await call("GET", `/channels/${m.channel_id}/sticky_messages`, { token: a.token }))).toEqual([m.id]);
    expect((await stick(a.token, m.channel_id, m.id, "DELETE")).body.data.is_sticky).toBe(false);
  });

  it("404 for unreadable channels and unknown messages, 401 without a token, 403 without the messages scope", async () => {
    const owner = await actor("messages");
    const outsider = await actor("messages");
    const ch = await newChannel(owner.token);
    const m = await sent(owner.token, ch.id, "hidden");
    expect((await stick(outsider.token, ch.id, m.id)).status).toBe(404);
    expect((await call("GET", `/channels/${ch.id}/sticky_messages`, { token: outsider.token })).status).toBe(404);
    expect((await call("GET", `/channels/${ch.id}/sticky_messages`)).status).toBe(404);
    expect((await stick(owner.token, ch.id, "99999999")).status).toBe(404);
    expect((await call("PUT", `/channels/${ch.id}/messages/${m.id}/sticky`)).status).toBe(401);
    const basic = await actor("basic");
    const pub = await newChannel(owner.token, { read: { public: true }, full: { user_ids: [basic.user.id] } });
    const pm = await sent(owner.token, pub.id, "public");
    expect((await stick(basic.token, pub.id, pm.id)).status).toBe(403);
  });
});
