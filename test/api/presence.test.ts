import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { setEventSink, streamRelay, type StampedEvent } from "../../src/events/publish";
import type { PresenceTimer } from "../../src/objects/presence-timer";
import { openDb } from "../../src/db";
import { runBatch } from "../../src/db/batch";
import { presenceListReads } from "../../src/stores/presence-list";
import { actor, appToken, call, makeApp, makeUser, userToken } from "../support/client";
import { DB } from "../support/db";

const LIFETIME = 15 * 60;
const realNow = () => Math.floor(Date.now() / 1000);
const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 19) + "Z";

// Events the writes publish (the streams issue delivers them; here they are captured). The
// Worker entry installs its own sink when it loads: load it first, then take over the sink.
let events: StampedEvent[] = [];
beforeAll(async () => {
  await call("GET", "/sys/config");
  setEventSink(async (_env, batch) => void events.push(...batch));
});
/**
 * Waits until the stream relay has handed every outbox row to the sink (events leave through the
 * outbox, after the response): the last row is delivered and no newer row appeared meanwhile.
 */
async function relaySettled() {
  const newest = async () => Number((await DB.prepare("SELECT coalesce(max(id), 0) AS n FROM stream_outbox").first<{ n: number }>())?.n ?? 0);
  const deadline = Date.now() + 15_000;
  let seen = -1;
  for (;;) {
    const last = await newest();
    if ((await streamRelay(env).status()).cursor >= last) {
      if (last === seen) return;
      seen = last;
    } else await runDurableObjectAlarm(streamRelay(env));
    if (Date.now() > deadline) throw new Error("the stream relay did not deliver the outbox");
    await new Promise((r) => setTimeout(r, 100));
  }
}
beforeEach(async () => {
  await relaySettled();
  events = [];
});
const presenceEvents = async (userId: string) => {
  await relaySettled();
  return events.filter((e) => e.type === "user_presence" && (e.data as { id: string }[]).some((p) => p.id === userId));
};

const timer = (userId: string) => env.PRESENCE.get(env.PRESENCE.idFromName(userId)) as DurableObjectStub<PresenceTimer>;
const row = (userId: string) =>
  DB.prepare("select presence, last_seen_at, expires_at from presence where user_id = ?")
    .bind(Number(userId))
    .first<{ presence: string; last_seen_at: number; expires_at: number }>();

async function present(token: string, now?: number) {
  const res = await call("GET", "/presence", { token, now });
  expect(res.status).toBe(200);
  return res.body.data as { id: string; presence: string; last_seen_at: string }[];
}

async function presenceOf(userId: string, token: string, now?: number) {
  const res = await call("GET", `/users/${userId}/presence`, { token, now });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe("PUT /users/me/presence: the transitions of api.md §3", () => {
  it("none → online when `presence` is unset; last_seen_at set; listed in GET /presence", async () => {
    const { user, token } = await actor("presence");
    const t = realNow();
    expect(await presenceOf(user.id, token, t)).toEqual({
      id: user.id,
      username: user.username,
      avatar_image: expect.stringMatching(/\/v1\/static\/default-avatar\.png$/),
      presence: "offline",
    });
    const res = await call("PUT", "/users/me/presence", { token, now: t });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      meta: { code: 200 },
      data: { id: user.id, username: user.username, avatar_image: expect.any(String), presence: "online", last_seen_at: iso(t) },
    });
    expect(await presenceOf(user.id, token, t + 1)).toEqual(res.body.data);
    expect((await present(token, t + 1)).find((p) => p.id === user.id)).toEqual(res.body.data);
    const [ev] = await presenceEvents(user.id);
    expect(ev).toMatchObject({ type: "user_presence", data: [res.body.data] });
    expect(ev.isDeleted).toBeUndefined();
  });

  it("none → online when `presence` is `1` (form or JSON) or empty", async () => {
    for (const body of [{ form: { presence: "1" } }, { json: { presence: 1 } }, { json: { presence: "1" } }, { form: { presence: "" } }, { json: {} }]) {
      const { token } = await actor("presence");
      const res = await call("PUT", "/users/me/presence", { token, ...body });
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.body.data.presence).toBe("online");
    }
  });

  it("none / offline → the text given (up to 100 characters, counted in code points)", async () => {
    const { user, token } = await actor("presence", { name: "Ada L" });
    const t = realNow();
    const form = await call("PUT", "/users/me/presence", { token, form: { presence: "in a meeting" }, now: t });
    expect(form.status).toBe(200);
    expect(form.body.data).toMatchObject({ id: user.id, name: "Ada L", presence: "in a meeting", last_seen_at: iso(t) });
    // 100 astral-plane characters are 200 UTF-16 units: still within the limit.
    const hundred = "🙂".repeat(100);
    const json = await call("PUT", "/users/me/presence", { token, json: { presence: hundred }, now: t + 5 });
    expect(json.status).toBe(200);
    expect(json.body.data).toMatchObject({ presence: hundred, last_seen_at: iso(t + 5) });
    expect((await present(token, t + 6)).find((p) => p.id === user.id)?.presence).toBe(hundred);
    // Back to offline, then text again.
    expect((await call("PUT", "/users/me/presence", { token, form: { presence: "0" }, now: t + 7 })).body.data.presence).toBe("offline");
    const again = await call("PUT", "/users/me/presence", { token, form: { presence: "back" }, now: t + 8 });
    expect(again.body.data).toMatchObject({ presence: "back", last_seen_at: iso(t + 8) });
    expect((await presenceEvents(user.id)).map((e) => (e.data as { presence: string }[])[0].presence)).toEqual(["in a meeting", hundred, "offline", "back"]);
  });

  it("refuses text over 100 characters with 400 naming 'presence' and changes nothing", async () => {
    const { user, token } = await actor("presence");
    const t = realNow();
    await call("PUT", "/users/me/presence", { token, form: { presence: "before" }, now: t });
    await relaySettled();
    events = [];
    const res = await call("PUT", "/users/me/presence", { token, form: { presence: "x".repeat(101) }, now: t + 10 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ meta: { code: 400, error_message: expect.stringContaining("'presence'") } });
    const json = await call("PUT", "/users/me/presence", { token, json: { presence: "é".repeat(101) }, now: t + 10 });
    expect(json.status).toBe(400);
    const wrongType = await call("PUT", "/users/me/presence", { token, json: { presence: ["a"] }, now: t + 10 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.meta.error_message).toContain("'presence'");
    expect(await presenceOf(user.id, token, t + 11)).toMatchObject({ presence: "before", last_seen_at: iso(t) });
    expect(await presenceEvents(user.id)).toEqual([]);
  });

  it("any status → offline with `offline` or `0`: removed from the list, last_seen_at kept, deletion event", async () => {
    for (const value of ["offline", "0"]) {
      const { user, token } = await actor("presence");
      const t = realNow();
      await call("PUT", "/users/me/presence", { token, form: { presence: "busy" }, now: t });
      expect((await present(token, t + 1)).some((p) => p.id === user.id)).toBe(true);
      const res = await call("PUT", "/users/me/presence", { token, form: { presence: value }, now: t + 60 });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: user.id, presence: "offline", last_seen_at: iso(t + 60) });
      expect((await present(token, t + 61)).some((p) => p.id === user.id)).toBe(false);
      expect(await presenceOf(user.id, token, t + 61)).toMatchObject({ presence: "offline", last_seen_at: iso(t + 60) });
      const evs = await presenceEvents(user.id);
      expect(evs).toHaveLength(2);
      expect(evs[1]).toMatchObject({ isDeleted: true, data: [{ id: user.id, presence: "offline" }] });
    }
  });

  it("does not show a disabled user's status", async () => {
    const { user, token } = await actor("presence");
    const t = realNow();
    await call("PUT", "/users/me/presence", { token, form: { presence: "gone soon" }, now: t });
    const setDisabled = (v: number) => DB.prepare("update users set is_disabled = ? where id = ?").bind(v, Number(user.id)).run();
    await setDisabled(1);
    try {
      const { token: viewer } = await actor();
      expect((await present(viewer, t + 1)).some((p) => p.id === user.id)).toBe(false);
      expect(await presenceOf(user.id, viewer, t + 1)).toMatchObject({ presence: "offline", last_seen_at: iso(t) });
    } finally {
      await setDisabled(0);
    }
  });

  it("publishes only when the status changes, not on a plain renewal", async () => {
    const { user, token } = await actor("presence");
    const t = realNow();
    await call("PUT", "/users/me/presence", { token, now: t });
    const renewed = await call("PUT", "/users/me/presence", { token, form: { presence: "1" }, now: t + 30 });
    expect(renewed.body.data.last_seen_at).toBe(iso(t + 30));
    expect(await presenceEvents(user.id)).toHaveLength(1);
  });
});

describe("presence access (decisions §3)", () => {
  it("GET /presence and GET /users/{id}/presence take any token; not none", async () => {
    const app = await makeApp();
    const other = await makeUser();
    const at = await appToken(app);
    expect((await call("GET", "/presence", { token: at })).status).toBe(200);
    expect(await presenceOf(other.id, at)).toMatchObject({ id: other.id, presence: "offline" });
    expect((await call("GET", `/users/@${other.username}/presence`, { token: at })).body.data.id).toBe(other.id);
    expect((await call("GET", "/presence")).status).toBe(401);
    expect((await call("GET", `/users/${other.id}/presence`)).status).toBe(401);
    expect((await call("GET", "/users/99999999999/presence", { token: at })).status).toBe(404);
    expect((await call("GET", "/users/abc/presence", { token: at })).status).toBe(400);
    // A user token without the presence scope may read.
    const plain = await userToken(app, other);
    expect((await call("GET", "/users/me/presence", { token: plain })).body.data.id).toBe(other.id);
  });

  it("PUT needs a user token with the presence scope", async () => {
    const app = await makeApp();
    const user = await makeUser();
    const noScope = await userToken(app, user, "basic");
    const denied = await call("PUT", "/users/me/presence", { token: noScope, form: { presence: "x" } });
    expect(denied.status).toBe(403);
    expect(denied.body.meta.error_message).toContain("presence");
    expect((await call("PUT", "/users/me/presence", { token: await appToken(app) })).status).toBe(403);
    expect((await call("PUT", "/users/me/presence")).status).toBe(401);
    expect(await presenceOf(user.id, noScope)).not.toHaveProperty("last_seen_at");
    expect((await call("PUT", "/users/5/presence", { token: noScope })).status).toBe(405);
  });
});

describe("update_presence on any authenticated call (convention 6)", () => {
  it("sets the presence before the call and reports meta.updated_presence true", async () => {
    const { user, token } = await actor("presence");
    const t = realNow();
    const res = await call("GET", "/token?update_presence=1", { token, now: t });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ code: 200, updated_presence: true });
    expect(await presenceOf(user.id, token, t)).toMatchObject({ presence: "online", last_seen_at: iso(t) });
    // The endpoint already sees the new presence.
    const list = await call("GET", "/presence?update_presence=coding", { token, now: t + 1 });
    expect(list.body.meta.updated_presence).toBe(true);
    expect(list.body.data.find((p: { id: string }) => p.id === user.id)).toMatchObject({ presence: "coding", last_seen_at: iso(t + 1) });
    for (const [value, expected] of [
      ["", "online"],
      ["offline", "offline"],
      ["caf%C3%A9", "café"],
      ["0", "offline"],
    ]) {
      const r = await call("GET", `/sys/config?update_presence=${value}`, { token, now: t + 2 });
      expect(r.body.meta.updated_presence, value).toBe(true);
      expect((await presenceOf(user.id, token, t + 2)).presence, value).toBe(expected);
    }
  });

  it("reports false and changes nothing without a user token with the presence scope, or with text too long", async () => {
    const app = await makeApp();
    const user = await makeUser();
    const noScope = await userToken(app, user, "basic");
    const t = realNow();
    const a = await call("GET", "/token?update_presence=1", { token: noScope, now: t });
    expect(a.status).toBe(200);
    expect(a.body.meta).toEqual({ code: 200, updated_presence: false });
    const b = await call("GET", "/presence?update_presence=1", { token: await appToken(app), now: t });
    expect(b.status).toBe(200);
    expect(b.body.meta.updated_presence).toBe(false);
    const c = await call("GET", "/sys/config?update_presence=1", { now: t });
    expect(c.status).toBe(200);
    expect(c.body.meta.updated_presence).toBe(false);
    const scoped = await userToken(app, user, "presence");
    const long = await call("GET", `/token?update_presence=${"y".repeat(101)}`, { token: scoped, now: t });
    expect(long.status).toBe(200);
    expect(long.body.meta.updated_presence).toBe(false);
    expect(await presenceOf(user.id, scoped, t)).not.toHaveProperty("last_seen_at");
  });

  it("is reported in error envelopes too", async () => {
    const { token } = await actor("presence");
    const res = await call("GET", "/users/99999999999/presence?update_presence=1", { token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ meta: { code: 404, error_message: expect.any(String), updated_presence: true } });
  });

  it("on the PUT it overrides the body and the update happens once", async () => {
    const { user, token } = await actor("presence");
    const t = realNow();
    const res = await call("PUT", "/users/me/presence?update_presence=from%20query", { token, form: { presence: "from body" }, now: t });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ code: 200, updated_presence: true });
    expect(res.body.data).toMatchObject({ presence: "from query", last_seen_at: iso(t) });
    expect(await presenceOf(user.id, token, t)).toMatchObject({ presence: "from query" });
    expect(await presenceEvents(user.id)).toHaveLength(1);
    // The body is not even read: an over-long body value does not matter.
    const off = await call("PUT", "/users/me/presence?update_presence=0", { token, form: { presence: "z".repeat(101) }, now: t + 1 });
    expect(off.status).toBe(200);
    expect(off.body.data.presence).toBe("offline");
    // An over-long update_presence fails the PUT, naming it.
    const long = await call("PUT", `/users/me/presence?update_presence=${"q".repeat(101)}`, { token, now: t + 2 });
    expect(long.status).toBe(400);
    expect(long.body.meta).toEqual({ code: 400, error_message: expect.stringContaining("'update_presence'"), updated_presence: false });
    expect(await presenceOf(user.id, token, t + 2)).toMatchObject({ presence: "offline", last_seen_at: iso(t + 1) });
  });
});

describe("expiry: 15 minutes without a newer status", () => {
  it("reads treat a lapsed status as offline even before the alarm has run", async () => {
    const { user, token } = await actor("presence");
    const t = realNow();
    await call("PUT", "/users/me/presence", { token, form: { presence: "here" }, now: t });
    expect((await presenceOf(user.id, token, t + LIFETIME - 1)).presence).toBe("here");
    expect((await present(token, t + LIFETIME - 1)).some((p) => p.id === user.id)).toBe(true);
    expect(await presenceOf(user.id, token, t + LIFETIME)).toMatchObject({ presence: "offline", last_seen_at: iso(t) });
    expect((await present(token, t + LIFETIME)).some((p) => p.id === user.id)).toBe(false);
  });

  it("the alarm takes a lapsed status offline and emits user_presence; running it again is harmless", async () => {
    const { user, token } = await actor("presence");
    // Set 1000 s ago on the request clock: the status lapsed 100 s ago in real time. The timer
    // measures the delay on its own clock, so its alarm is due in 900 s: it runs only when we run it.
    const set = realNow() - 1000;
    await call("PUT", "/users/me/presence", { token, form: { presence: "away" }, now: set });
    expect((await row(user.id))?.expires_at).toBe(set + LIFETIME);
    await relaySettled();
    events = [];
    expect(await runDurableObjectAlarm(timer(user.id))).toBe(true);
    expect(await row(user.id)).toEqual({ presence: "offline", last_seen_at: set, expires_at: 0 });
    const evs = await presenceEvents(user.id);
    expect(evs).toHaveLength(1);
    expect(evs[0]).toMatchObject({
      type: "user_presence",
      isDeleted: true,
      data: [{ id: user.id, username: user.username, presence: "offline", last_seen_at: iso(set) }],
    });
    expect(await presenceOf(user.id, token)).toMatchObject({ presence: "offline", last_seen_at: iso(set) });
    // At least once: a second run changes nothing and emits nothing.
    await runInDurableObject(timer(user.id), (instance) => instance.alarm());
    expect(await runDurableObjectAlarm(timer(user.id))).toBe(false);
    expect(await row(user.id)).toEqual({ presence: "offline", last_seen_at: set, expires_at: 0 });
    expect(await presenceEvents(user.id)).toHaveLength(1);
  });

  it("a status renewed after the alarm was set is not taken offline; the alarm moves to the new expiry", async () => {
    const { user, token } = await actor("presence");
    const first = realNow() - 800; // lapses 100 s from now
    await call("PUT", "/users/me/presence", { token, form: { presence: "one" }, now: first });
    const renewedAt = realNow();
    await call("PUT", "/users/me/presence", { token, form: { presence: "two" }, now: renewedAt });
    await relaySettled();
    events = [];
    expect(await runDurableObjectAlarm(timer(user.id))).toBe(true);
    expect(await row(user.id)).toEqual({ presence: "two", last_seen_at: renewedAt, expires_at: renewedAt + LIFETIME });
    expect(await presenceEvents(user.id)).toEqual([]);
    const alarmAt = await runInDurableObject(timer(user.id), (_i, state) => state.storage.getAlarm());
    expect(alarmAt).toBe((renewedAt + LIFETIME) * 1000);
    expect((await presenceOf(user.id, token)).presence).toBe("two");
  });

  it("an alarm after the user went offline, or came back online, does nothing", async () => {
    const { user, token } = await actor("presence");
    const set = realNow() - 1000;
    await call("PUT", "/users/me/presence", { token, now: set });
    await call("PUT", "/users/me/presence", { token, form: { presence: "offline" }, now: set + 10 });
    await relaySettled();
    events = [];
    expect(await runDurableObjectAlarm(timer(user.id))).toBe(true);
    expect(await row(user.id)).toEqual({ presence: "offline", last_seen_at: set + 10, expires_at: 0 });
    expect(await presenceEvents(user.id)).toEqual([]);
    // Back online from offline arms the timer again.
    const back = realNow();
    await call("GET", "/token?update_presence=1", { token, now: back });
    const alarmAt = await runInDurableObject(timer(user.id), (_i, state) => state.storage.getAlarm());
    expect(alarmAt).toBeGreaterThanOrEqual((back + LIFETIME) * 1000 - 2000);
    await relaySettled();
    events = [];
    expect(await runDurableObjectAlarm(timer(user.id))).toBe(true);
    expect((await row(user.id))?.presence).toBe("online");
    expect(await presenceEvents(user.id)).toEqual([]);
  });

  it("a user who was never armed has no alarm", async () => {
    const user = await makeUser();
    expect(await runDurableObjectAlarm(timer(user.id))).toBe(false);
  });
});

describe("GET /presence at scale", () => {
  const N = 10_000;
  const prefix = `pz${Math.random().toString(36).slice(2, 8)}_`;
  const at = realNow() + 10 * 365 * 86400; // a moment only this test looks at

  afterAll(async () => {
    await DB.batch([
      DB.prepare("delete from presence where user_id in (select id from users where username like ?)").bind(`${prefix}%`),
      DB.prepare("delete from users where username like ?").bind(`${prefix}%`),
    ]);
  });

  it("lists 10,000 online users from one query", async () => {
    await DB.batch([
      DB.prepare(
        `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
         insert into users (username, password_hash, created_at) select CAST(?2 AS TEXT) || i, 'x', ?3 from n`,
      ).bind(N, prefix, at),
      DB.prepare(
        `insert into presence (user_id, presence, last_seen_at, expires_at)
         select id, 'online', ?2, CAST(?2 AS BIGINT) + CAST(?3 AS BIGINT) from users where username like ?1`,
      ).bind(`${prefix}%`, at, LIFETIME),
    ]);
    // One statement, counted by the data layer.
    let statements = 0;
    const [, list] = await runBatch(openDb(env, { call: () => statements++ }), [...presenceListReads(at + 1)]);
    expect(statements).toBe(1);
    expect(list.results.filter((r) => String(r.username).startsWith(prefix))).toHaveLength(N);

    const { token } = await actor();
    const res = await call("GET", "/presence", { token, now: at + 1 });
    expect(res.status).toBe(200);
    const ours = (res.body.data as { username: string; presence: string }[]).filter((p) => p.username.startsWith(prefix));
    expect(ours).toHaveLength(N);
    expect(ours.every((p) => p.presence === "online")).toBe(true);
    // Lapsed for everybody once the lifetime has passed.
    const later = await call("GET", "/presence", { token, now: at + LIFETIME });
    expect((later.body.data as { username: string }[]).some((p) => p.username.startsWith(prefix))).toBe(false);
  });
});
