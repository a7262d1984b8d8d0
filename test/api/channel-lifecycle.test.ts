import { describe, expect, it } from "vitest";
import { actor, call, makeUser } from "../support/client";
import { createChannel, testClock } from "../support/fixtures";

// Channel lifecycle as the reference's "Channel Lifecycle" and "Channel Subscribing" say:
// deactivation, owner change, PATCH, who edits the full-access list, raw merging, and the marker
// an unsubscribe deletes (issue 18).

const tick = testClock(400_000);

const newChannel = (token: string, body: Record<string, unknown> = {}) => createChannel(token, body, { now: tick() });

describe("DELETE /channels/{id} (deactivate)", () => {
  it("lets only the owner deactivate; subscriptions go, lists leave it out unless include_inactive=1", async () => {
    const owner = await actor("messages");
    const full = await actor("messages");
    const u = await actor("messages");
    const ch = await newChannel(owner.token, { acl: { read: { any_user: true }, full: { user_ids: [full.user.id] } } });
    await call("PUT", `/channels/${ch.id}/subscribe`, { token: u.token, now: tick() });

    expect((await call("DELETE", `/channels/${ch.id}`, { token: full.token, now: tick() })).status).toBe(403);
    const gone = await call("DELETE", `/channels/${ch.id}`, { token: owner.token, now: tick() });
    expect(gone.status).toBe(200);
    expect(gone.body.data).toMatchObject({ id: ch.id, is_active: false, you_subscribed: false, counts: { subscribers: 0 } });
    const again = await call("DELETE", `/channels/${ch.id}`, { token: owner.token, now: tick() });
    expect(again.body.data.is_active).toBe(false);

    expect((await call("GET", "/users/me/channels/subscribed", { token: u.token })).body.data).toEqual([]);
    expect((await call("GET", "/users/me/channels", { token: owner.token })).body.data).toEqual([]);
    const inactive = await call("GET", "/users/me/channels?include_inactive=1", { token: owner.token });
    expect(inactive.body.data.map((c: any) => c.id)).toEqual([ch.id]);
    // A lookup by id still finds it; subscribing again is refused.
    expect((await call("GET", `/channels?ids=${ch.id}`, { token: u.token })).body.data[0].is_active).toBe(false);
    expect((await call("PUT", `/channels/${ch.id}/subscribe`, { token: u.token, now: tick() })).status).toBe(400);
    // It takes no new messages, not even from its owner.
    const post = await call("POST", `/channels/${ch.id}/messages`, { token: owner.token, json: { text: "still here?" }, now: tick() });
    expect(post.status).toBe(400);
    expect(post.body.meta.error_message).toMatch(/deactivated/);
  });

  it("refuses private-message channels (400) and unreadable ones (404)", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const sent = await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "hi" }, now: tick() });
    expect((await call("DELETE", `/channels/${sent.body.data.channel_id}`, { token: a.token, now: tick() })).status).toBe(400);
    const priv = await newChannel(a.token);
    expect((await call("DELETE", `/channels/${priv.id}`, { token: b.token, now: tick() })).status).toBe(404);
    expect((await call("DELETE", `/channels/${priv.id}`, { now: tick() })).status).toBe(401);
  });
});

describe("PUT /channels/{id}/owner", () => {
  it("gives the channel away: the old owner becomes full, the new one leaves the lists; only the owner may", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const c = await makeUser();
    const ch = await newChannel(a.token, { acl: { write: { user_ids: [b.user.id, c.id] } } });

    const notOwner = await call("PUT", `/channels/${ch.id}/owner`, { token: b.token, json: { owner_id: b.user.id }, now: tick() });
    expect(notOwner.status).toBe(403);
    const unknown = await call("PUT", `/channels/${ch.id}/owner`, { token: a.token, json: { owner_id: "@no_such_user_zz" }, now: tick() });
    expect(unknown.status).toBe(400);
    expect(unknown.body.meta.error_message).toMatch(/'owner_id'/);

    const moved = await call("PUT", `/channels/${ch.id}/owner`, { token: a.token, json: { owner_id: `@${b.user.username}` }, now: tick() });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({
      user: { id: b.user.id },
      acl: { full: { user_ids: [a.user.id], you: true }, write: { user_ids: [c.id] } },
    });
    // The new owner may now deactivate; the old one no longer may.
    expect((await call("DELETE", `/channels/${ch.id}`, { token: a.token, now: tick() })).status).toBe(403);
    expect((await call("GET", "/users/me/channels", { token: b.token })).body.data.map((x: any) => x.id)).toEqual([ch.id]);

    const sent = await call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id], text: "hi" }, now: tick() });
    expect((await call("PUT", `/channels/${sent.body.data.channel_id}/owner`, { token: a.token, json: { owner_id: b.user.id }, now: tick() })).status).toBe(
      400,
    );
  });
});

describe("PUT and PATCH /channels/{id}", () => {
  it("PATCH updates like PUT; only the owner changes acl.full; raw merges by type", async () => {
    const owner = await actor("messages");
    const full = await actor("messages");
    const other = await makeUser();
    const ch = await newChannel(owner.token, {
      acl: { full: { user_ids: [full.user.id] } },
      raw: { "com.example.a": [{ v: 1 }], "com.example.b": [{ v: 2 }] },
    });

    const patched = await call("PATCH", `/channels/${ch.id}?include_raw=1`, {
      token: full.token,
      json: { acl: { read: { any_user: true } }, raw: { "com.example.b": [], "com.example.c": [{ v: 3 }] } },
      now: tick(),
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.acl.read.any_user).toBe(true);
    expect(patched.body.data.raw).toEqual({ "com.example.a": [{ v: 1 }], "com.example.c": [{ v: 3 }] });

    const byFull = await call("PATCH", `/channels/${ch.id}`, {
      token: full.token,
      json: { acl: { full: { user_ids: [full.user.id, other.id] } } },
      now: tick(),
    });
    expect(byFull.status).toBe(403);
    expect(byFull.body.meta.error_message).toMatch(/acl\.full/);
    // Restating the list unchanged is not a change.
    expect((await call("PUT", `/channels/${ch.id}`, { token: full.token, json: { acl: { full: { user_ids: [full.user.id] } } }, now: tick() })).status).toBe(
      200,
    );
    const byOwner = await call("PUT", `/channels/${ch.id}`, {
      token: owner.token,
      json: { acl: { full: { user_ids: [full.user.id, other.id] } } },
      now: tick(),
    });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body.data.acl.full.user_ids).toEqual([full.user.id, other.id].sort((x, y) => Number(x) - Number(y)));
    const cleared = await call("PATCH", `/channels/${ch.id}?include_raw=1`, { token: owner.token, json: { raw: null }, now: tick() });
    expect(cleared.body.data).not.toHaveProperty("raw");
  });
});

describe("DELETE /channels/{id}/subscribe", () => {
  it("deletes the caller's channel marker", async () => {
    const owner = await actor("messages");
    const u = await actor("messages");
    const ch = await newChannel(owner.token, { acl: { read: { any_user: true } } });
    const m = await call("POST", `/channels/${ch.id}/messages`, { token: owner.token, json: { text: "hello" }, now: tick() });
    await call("PUT", `/channels/${ch.id}/subscribe`, { token: u.token, now: tick() });
    await call("POST", "/markers", { token: u.token, json: [{ id: m.body.data.id, name: `channel:${ch.id}` }], now: tick() });
    expect((await call("GET", `/channels/${ch.id}?include_marker=1`, { token: u.token })).body.data.marker.id).toBe(m.body.data.id);

    await call("DELETE", `/channels/${ch.id}/subscribe`, { token: u.token, now: tick() });
    const after = await call("GET", `/channels/${ch.id}?include_marker=1`, { token: u.token });
    expect(after.body.data.marker).toEqual({ name: `channel:${ch.id}` });
    expect(after.body.data.has_unread).toBe(true);
  });
});
