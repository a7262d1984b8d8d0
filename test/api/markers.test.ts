import { beforeAll, describe, expect, it } from "vitest";
import { actor, appToken, call, makeApp, makeUser, userToken } from "../support/client";
import { DB } from "../support/db";
import { ALL_SCOPES, socket, subscribe, userStream } from "../support/streams";
import { createChannel, createMessage, createPost, dbCallsOf } from "../support/fixtures";

// Stream markers (issue 7): POST /markers, the marker values of since_id/before_id and
// meta.marker on every markable stream, update_marker on create, has_unread on channels.

// Writes carry an advancing test clock: each token may write 20 times a minute (decisions §9).
let clock = Math.floor(Date.now() / 1000);
const tick = () => (clock += 4);

type Actor = Awaited<ReturnType<typeof actor>>;
const SCOPES = "write_post stream messages";
const ids = (res: { body: any }) => (res.body.data as any[]).map((x) => x.id);

async function setMarkers(token: string, markers: unknown, query = "") {
  return call("POST", `/markers${query}`, { token, json: markers, now: tick() });
}

async function ok(token: string, markers: unknown, query = "") {
  const res = await setMarkers(token, markers, query);
  if (res.status !== 200) throw new Error(`markers: ${res.status} ${res.text}`);
  return res.body.data as any[];
}

const post = (a: Actor, text: string, query = "") => createPost(a, text, {}, { now: tick(), query });

const newChannel = (token: string, body: Record<string, unknown> = {}) => createChannel(token, body, { now: tick() });

const message = (token: string, channelId: string, text: string, query = "") => createMessage(token, channelId, text, { now: tick(), query });

describe("POST /markers", () => {
  let a: Actor;
  beforeAll(async () => {
    a = await actor("basic");
  });

  it("sets a marker and returns the Marker object", async () => {
    await call("GET", "/token", { token: a.token }); // the token's first use of the day records activity
    // That write runs after the response (waitUntil): wait for it, or the POST below may make it again.
    for (let i = 0; i < 50 && !(await DB.prepare("SELECT last_seen_day AS d FROM tokens WHERE user_id = ?").bind(Number(a.user.id)).first("d")); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const t = clock + 100;
    clock = t;
    const res = await call("POST", "/markers", { token: a.token, json: [{ id: "123", name: "global", percentage: 40 }], now: t });
    expect(res.status).toBe(200);
    expect(res.body.meta.code).toBe(200);
    expect(res.body.data).toEqual([
      {
        name: "global",
        id: "123",
        last_read_id: "123",
        percentage: 40,
        updated_at: new Date(t * 1000).toISOString().slice(0, 19) + "Z",
        version: expect.any(String),
      },
    ]);
    // One round trip for the writes and the read back (plus the token lookup).
    expect(dbCallsOf(res)).toBeLessThanOrEqual(2);
  });

  it("needs a user token (any scope): none → 401, app token → 403", async () => {
    expect((await call("POST", "/markers", { json: [{ id: "1", name: "global" }] })).status).toBe(401);
    const app = await makeApp();
    const res = await call("POST", "/markers", { token: await appToken(app), json: [{ id: "1", name: "global" }], now: tick() });
    expect(res.status).toBe(403);
  });

  it("takes JSON only (415) and refuses malformed bodies naming the field (400)", async () => {
    const form = await call("POST", "/markers", { token: a.token, form: { id: "1", name: "global" }, now: tick() });
    expect(form.status).toBe(415);
    const bad = async (json: unknown, pattern: RegExp) => {
      const res = await setMarkers(a.token, json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.meta.error_message).toMatch(pattern);
      expect(res.body).not.toHaveProperty("data");
    };
    await bad({ id: "1", name: "global" }, /array/);
    await bad([], /at least one/);
    await bad([{ name: "global" }], /'id'.*required/);
    await bad([{ id: "abc", name: "global" }], /'id'.*integer/);
    await bad([{ id: "-1", name: "global" }], /'id'.*integer/);
    await bad([{ id: 1.5, name: "global" }], /'id'.*integer/);
    await bad([{ id: "1" }], /'name'.*required/);
    await bad([{ id: "1", name: 5 }], /'name'.*string/);
    await bad([{ id: "1", name: "unknown_stream" }], /'name'.*not a marker/);
    await bad([{ id: "1", name: "channel:abc" }], /'name'/);
    await bad([{ id: "1", name: "Global" }], /'name'/);
    await bad([{ id: "1", name: "global", percentage: 0 }], /'percentage'.*1 to 100/);
    await bad([{ id: "1", name: "global", percentage: 101 }], /'percentage'.*1 to 100/);
    await bad([{ id: "1", name: "global", percentage: 2.5 }], /'percentage'/);
    await bad([{ id: "1", name: "global", percentage: "lots" }], /'percentage'/);
    await bad([{ id: "1", name: "global" }, "oops"], /marker 2/);
    const res = await setMarkers(a.token, [{ id: "1", name: "global" }], "?reset_read_id=maybe");
    expect(res.status).toBe(400);
    expect(res.body.meta.error_message).toMatch(/'reset_read_id'/);
  });

  it("takes up to 10 markers per request; 11 is a 400 and writes nothing", async () => {
    const b = await actor("basic");
    const ten = Array.from({ length: 10 }, (_, i) => ({ id: String(100 + i), name: i % 2 ? "global" : "personal" }));
    const res = await setMarkers(b.token, ten);
    expect(res.status).toBe(200);
    // A name given twice is applied in order and returned once.
    expect(res.body.data.map((m: any) => [m.name, m.id])).toEqual([
      ["personal", "108"],
      ["global", "109"],
    ]);
    const eleven = [...ten.map((m) => ({ ...m, id: "5000" })), { id: "5000", name: "mentions" }];
    const over = await setMarkers(b.token, eleven);
    expect(over.status).toBe(400);
    expect(over.body.meta.error_message).toMatch(/at most 10/);
    // Nothing was written: the markers are where the last good request left them.
    const again = await ok(b.token, [{ id: "109", name: "global" }]);
    expect(again[0].last_read_id).toBe("109");
    const stream = await call("GET", "/users/me/mentions", { token: await userToken(b.app, b.user, "stream") });
    expect(stream.body.meta.marker).toEqual({ name: "mentions" });
  });

  it("percentage is optional (0 when not given) and accepted as 1..100", async () => {
    const [m1] = await ok(a.token, [{ id: "10", name: "mentions", percentage: 100 }]);
    expect(m1.percentage).toBe(100);
    const [m2] = await ok(a.token, [{ id: "11", name: "mentions", percentage: 1 }]);
    expect(m2.percentage).toBe(1);
    const [m3] = await ok(a.token, [{ id: "12", name: "mentions" }]);
    expect(m3.percentage).toBe(0);
  });

  it("last_read_id only moves forward; reset_read_id=1 or true moves it back; id always follows", async () => {
    const b = await actor("basic");
    const [first] = await ok(b.token, [{ id: "500", name: "personal" }]);
    expect(first).toMatchObject({ id: "500", last_read_id: "500" });
    const [back] = await ok(b.token, [{ id: "300", name: "personal" }]);
    expect(back).toMatchObject({ id: "300", last_read_id: "500" });
    const [forward] = await ok(b.token, [{ id: "700", name: "personal" }]);
    expect(forward).toMatchObject({ id: "700", last_read_id: "700" });
    const [reset] = await ok(b.token, [{ id: "200", name: "personal" }], "?reset_read_id=1");
    expect(reset).toMatchObject({ id: "200", last_read_id: "200" });
    const [resetTrue] = await ok(b.token, [{ id: "100", name: "personal" }], "?reset_read_id=true");
    expect(resetTrue).toMatchObject({ id: "100", last_read_id: "100" });
    const [noReset] = await ok(b.token, [{ id: "50", name: "personal" }], "?reset_read_id=0");
    expect(noReset).toMatchObject({ id: "50", last_read_id: "100" });
    // Numbers are taken as ids too; "0" is a valid position.
    const [zero] = await ok(b.token, [{ id: 0, name: "personal" }]);
    expect(zero).toMatchObject({ id: "0", last_read_id: "100" });
  });

  it("gives a new opaque version on every update, and updated_at follows the clock", async () => {
    const b = await actor("basic");
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const t = tick();
      const res = await call("POST", "/markers", { token: b.token, json: [{ id: "42", name: "global" }], now: t });
      expect(res.body.data[0].updated_at).toBe(new Date(t * 1000).toISOString().slice(0, 19) + "Z");
      seen.add(res.body.data[0].version);
    }
    expect(seen.size).toBe(4);
  });

  it("keeps markers per user", async () => {
    const b = await actor("basic");
    const c = await actor("basic");
    await ok(b.token, [{ id: "900", name: "global" }]);
    const [mine] = await ok(c.token, [{ id: "5", name: "global" }]);
    expect(mine).toMatchObject({ id: "5", last_read_id: "5" });
  });

  it("channel markers: a readable channel is fine; an unreadable or unknown one is a 403 and nothing is written", async () => {
    const owner = await actor("messages");
    const b = await actor("basic");
    const open = await newChannel(owner.token, { acl: { read: { any_user: true } } });
    const closed = await newChannel(owner.token);
    const [m] = await ok(b.token, [{ id: "7", name: `channel:${open.id}` }]);
    expect(m).toMatchObject({ name: `channel:${open.id}`, id: "7" });
    // The owner may set a marker on their own private channel.
    await ok(owner.token, [{ id: "1", name: `channel:${closed.id}` }]);

    const res = await setMarkers(b.token, [
      { id: "99", name: "global" },
      { id: "99", name: `channel:${open.id}` },
      { id: "99", name: `channel:${closed.id}` },
    ]);
    expect(res.status).toBe(403);
    expect(res.body.meta.error_message).toMatch(/channel/);
    const unknown = await setMarkers(b.token, [{ id: "1", name: "channel:999999999999" }]);
    expect(unknown.status).toBe(403);
    // All or none: the global and open-channel markers were not moved by the refused request.
    const [after] = await ok(b.token, [{ id: "8", name: `channel:${open.id}` }]);
    expect(after.last_read_id).toBe("8");
    const [g] = await ok(b.token, [{ id: "1", name: "global" }]);
    expect(g.last_read_id).toBe("1");
  });

  it("loses no forward move under concurrent updates", async () => {
    const b = await actor("basic");
    // Several tokens of the same user, so the write limit per token is not what is tested.
    const tokens = [b.token, ...(await Promise.all([1, 2, 3].map(() => userToken(b.app, b.user, "basic"))))];
    const values = Array.from({ length: 24 }, (_, i) => ((i * 37) % 24) + 1);
    const t = tick();
    const results = await Promise.all(
      values.map((v, i) => call("POST", "/markers", { token: tokens[i % tokens.length], json: [{ id: String(v), name: "global" }], now: t })),
    );
    for (const r of results) expect(r.status).toBe(200);
    const [final] = await ok(b.token, [{ id: "1", name: "global" }]);
    expect(final.last_read_id).toBe("24");
    expect(new Set(results.map((r) => r.body.data[0].version)).size).toBe(values.length);
  });
});

describe("markable streams: marker values of since_id/before_id and meta.marker", () => {
  let me: Actor;
  let other: Actor;
  let mine: number[]; // five posts of `me`, oldest first
  let mentions: number[]; // five posts of `other` mentioning `me`
  let channel: any;
  let msgs: number[];

  beforeAll(async () => {
    [me, other] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    mine = [];
    for (let i = 0; i < 5; i++) mine.push(Number((await post(me, `marker stream post ${i}`)).id));
    mentions = [];
    for (let i = 0; i < 5; i++) mentions.push(Number((await post(other, `hey @${me.user.username} number ${i}`)).id));
    channel = await newChannel(me.token);
    msgs = [];
    for (let i = 0; i < 5; i++) msgs.push(Number((await message(me.token, channel.id, `message ${i}`)).id));
  }, 60_000);

  /**
   * With the marker at the 3rd item (id) and last_read_id at the 4th, each special value bounds the
   * page as its plain-id counterpart would; results are filtered to the items of this test.
   */
  async function checkValues(path: string, name: string, items: number[], token: string) {
    const [p1, p2, p3, p4, p5] = items;
    const within = (res: any) =>
      ids(res)
        .map(Number)
        .filter((id: number) => items.includes(id));
    const get = async (query: string) => {
      const res = await call("GET", `${path}${path.includes("?") ? "&" : "?"}${query}`, { token });
      expect(res.status, `${path} ${query}: ${res.text}`).toBe(200);
      return res;
    };

    // No marker yet: meta.marker is {name} alone and marker values set no bound.
    const unset = await get("count=200");
    expect(unset.body.meta.marker).toEqual({ name });
    expect(within(await get(`since_id=marker&before_id=${p5 + 1}`))).toEqual([p5, p4, p3, p2, p1]);
    expect(within(await get(`before_id=last_read&since_id=${p1 - 1}`))).toEqual([p5, p4, p3, p2, p1]);

    await ok(token, [{ id: String(p4), name }]);
    const [m] = await ok(token, [{ id: String(p3), name, percentage: 50 }]);
    expect(m).toMatchObject({ id: String(p3), last_read_id: String(p4) });

    const plain = await get(`since_id=${p1 - 1}`);
    expect(plain.body.meta.marker).toEqual(m);
    const cases: [string, number[]][] = [
      [`since_id=marker&before_id=${p5 + 1}`, [p5, p4]],
      [`since_id=marker_inclusive&before_id=${p5 + 1}`, [p5, p4, p3]],
      [`since_id=last_read&before_id=${p5 + 1}`, [p5]],
      [`since_id=last_read_inclusive&before_id=${p5 + 1}`, [p5, p4]],
      [`before_id=marker&since_id=${p1 - 1}`, [p2, p1]],
      [`before_id=marker_inclusive&since_id=${p1 - 1}`, [p3, p2, p1]],
      [`before_id=last_read&since_id=${p1 - 1}`, [p3, p2, p1]],
      [`before_id=last_read_inclusive&since_id=${p1 - 1}`, [p4, p3, p2, p1]],
      [`since_id=marker&before_id=last_read_inclusive`, [p4]],
      [`since_id=marker_inclusive&count=-1`, [p3]],
    ];
    for (const [query, expected] of cases) {
      const res = await get(query);
      expect(within(res), `${path} ${query}`).toEqual(expected);
      expect(res.body.meta.marker).toEqual(m);
    }
    const bad = await call("GET", `${path}${path.includes("?") ? "&" : "?"}since_id=bogus`, { token });
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toMatch(/'since_id'/);
    return m;
  }

  it("GET /posts/streams/global (marker `global`)", async () => {
    await checkValues("/posts/streams/global", "global", mine, me.token);
  });

  it("GET /posts/streams/me (marker `personal`)", async () => {
    await checkValues("/posts/streams/me", "personal", mine, me.token);
  });

  it("GET /posts/streams/unified shares the `personal` marker with /posts/streams/me", async () => {
    const res = await call("GET", `/posts/streams/unified?since_id=marker&before_id=${mentions[4] + 1}`, { token: me.token });
    expect(res.status).toBe(200);
    expect(res.body.meta.marker).toMatchObject({ name: "personal", id: String(mine[2]), last_read_id: String(mine[3]) });
    // Everything after the marker: the newer posts of `me` and the mentions (newer still).
    expect(ids(res).map(Number)).toEqual([...mentions].reverse().concat([mine[4], mine[3]]));
    // Reset the personal marker through the unified stream's values on a fresh user.
    const fresh = await actor(SCOPES);
    const own: number[] = [];
    for (let i = 0; i < 5; i++) own.push(Number((await post(fresh, `unified ${i}`)).id));
    await checkValues("/posts/streams/unified", "personal", own, fresh.token);
  });

  it("GET /users/me/mentions (marker `mentions`); another user's mentions have no marker", async () => {
    await checkValues("/users/me/mentions", "mentions", mentions, me.token);
    const byId = await call("GET", `/users/${me.user.id}/mentions`, { token: me.token });
    expect(byId.body.meta.marker).toMatchObject({ name: "mentions", id: String(mentions[2]) });
    const others = await call("GET", `/users/${other.user.id}/mentions?since_id=${mentions[0]}`, { token: me.token });
    expect(others.status).toBe(200);
    expect(others.body.meta).not.toHaveProperty("marker");
    const noMarkerValues = await call("GET", `/users/${other.user.id}/mentions?since_id=marker`, { token: me.token });
    expect(noMarkerValues.status).toBe(400);
  });

  it("GET /channels/{id}/messages (marker `channel:{id}`)", async () => {
    await checkValues(`/channels/${channel.id}/messages`, `channel:${channel.id}`, msgs, me.token);
  });

  it("a stream read with its marker costs one round trip (the known token's check rides with it); a marker value one more", async () => {
    const plain = await call("GET", "/posts/streams/me", { token: me.token });
    expect(dbCallsOf(plain)).toBe(1);
    const withValue = await call("GET", "/posts/streams/me?since_id=marker", { token: me.token });
    expect(dbCallsOf(withValue)).toBe(2);
    const channelPage = await call("GET", `/channels/${channel.id}/messages`, { token: me.token });
    expect(channelPage.body.meta.marker.name).toBe(`channel:${channel.id}`);
    expect(dbCallsOf(channelPage)).toBe(1);
  });

  it("without a user there is no marker: meta.marker is {name} and marker values set no bound", async () => {
    const anon = await call("GET", `/posts/streams/global?since_id=marker&before_id=${mine[4] + 1}&count=200`);
    expect(anon.status).toBe(200);
    expect(anon.body.meta.marker).toEqual({ name: "global" });
    expect(ids(anon).map(Number)).toEqual(expect.arrayContaining(mine));
    expect(dbCallsOf(anon)).toBe(1);
    const app = await appToken(await makeApp());
    const withApp = await call("GET", "/posts/streams/global?before_id=last_read", { token: app });
    expect(withApp.status).toBe(200);
    expect(withApp.body.meta.marker).toEqual({ name: "global" });
  });

  it("a stream that is not markable refuses marker values and has no meta.marker", async () => {
    const res = await call("GET", `/users/${me.user.id}/posts?since_id=marker`);
    expect(res.status).toBe(400);
    const thread = await call("GET", `/posts/${mine[0]}/thread`);
    expect(thread.body.meta).not.toHaveProperty("marker");
  });

  it("an unreadable channel is a 404 even with marker values (and no meta.marker)", async () => {
    const stranger = await actor(SCOPES);
    const res = await call("GET", `/channels/${channel.id}/messages?since_id=marker`, { token: stranger.token });
    expect(res.status).toBe(404);
    expect(res.body.meta).not.toHaveProperty("marker");
  });
});

describe("update_marker=1 on creation", () => {
  it("POST /posts?update_marker=1 sets `personal` to the new post; last_read_id never moves back", async () => {
    const a = await actor(SCOPES);
    const p = await post(a, "with marker", "?update_marker=1");
    const res = await call("GET", "/posts/streams/me", { token: a.token });
    expect(res.body.meta.marker).toMatchObject({ name: "personal", id: p.id, last_read_id: p.id, percentage: 0 });
    const without = await post(a, "without marker");
    const still = await call("GET", "/posts/streams/me", { token: a.token });
    expect(still.body.meta.marker.id).toBe(p.id);
    expect(Number(without.id)).toBeGreaterThan(Number(p.id));
    // A last_read_id ahead of the new post stays.
    await ok(a.token, [{ id: "999999999999", name: "personal" }]);
    const q = await post(a, "again with marker", "?update_marker=1");
    const after = await call("GET", "/posts/streams/me", { token: a.token });
    expect(after.body.meta.marker).toMatchObject({ id: q.id, last_read_id: "999999999999" });
    expect(after.body.meta.marker.version).not.toBe(res.body.meta.marker.version);
  });

  it("POST /channels/{id}/messages?update_marker=1 sets `channel:{id}` to the new message", async () => {
    const a = await actor(SCOPES);
    const ch = await newChannel(a.token);
    const m = await message(a.token, ch.id, "hello", "?update_marker=1");
    const res = await call("GET", `/channels/${ch.id}/messages`, { token: a.token });
    expect(res.body.meta.marker).toMatchObject({ name: `channel:${ch.id}`, id: m.id, last_read_id: m.id });
    const plain = await message(a.token, ch.id, "no marker");
    const after = await call("GET", `/channels/${ch.id}/messages`, { token: a.token });
    expect(after.body.meta.marker.id).toBe(m.id);
    expect(Number(plain.id)).toBeGreaterThan(Number(m.id));
  });

  it("POST /channels/pm/messages?update_marker=1 sets the marker of the (new) private-message channel", async () => {
    const a = await actor(SCOPES);
    const b = await makeUser();
    const res = await call("POST", "/channels/pm/messages?update_marker=1", {
      token: a.token,
      json: { destinations: [b.id], text: "hi there" },
      now: tick(),
    });
    expect(res.status).toBe(201);
    const m = res.body.data;
    const page = await call("GET", `/channels/${m.channel_id}/messages`, { token: a.token });
    expect(page.body.meta.marker).toMatchObject({ name: `channel:${m.channel_id}`, id: m.id });
    const ch = await call("GET", `/channels/${m.channel_id}`, { token: a.token });
    expect(ch.body.data.has_unread).toBe(false);
  });
});

describe("has_unread on channels", () => {
  it("follows the user's channel marker against the newest message", async () => {
    const owner = await actor(SCOPES);
    const reader = await actor(SCOPES);
    const ch = await newChannel(owner.token, { acl: { read: { public: true }, write: { any_user: true } } });
    const get = async (token?: string) => (await call("GET", `/channels/${ch.id}`, { token })).body.data;

    // No messages: nothing to read.
    expect((await get(reader.token)).has_unread).toBe(false);
    // Public channel read without a user: no has_unread at all.
    expect(await get()).not.toHaveProperty("has_unread");

    const m1 = await message(owner.token, ch.id, "first");
    expect((await get(reader.token)).has_unread).toBe(true);
    // The author's own message counts too, until their marker moves (update_marker does that).
    expect((await get(owner.token)).has_unread).toBe(true);

    await ok(reader.token, [{ id: String(Number(m1.id) - 1), name: `channel:${ch.id}` }]);
    expect((await get(reader.token)).has_unread).toBe(true);
    await ok(reader.token, [{ id: m1.id, name: `channel:${ch.id}` }]);
    expect((await get(reader.token)).has_unread).toBe(false);

    const m2 = await message(owner.token, ch.id, "second", "?update_marker=1");
    expect((await get(reader.token)).has_unread).toBe(true);
    expect((await get(owner.token)).has_unread).toBe(false);

    // At or above the newest message: read.
    await ok(reader.token, [{ id: String(Number(m2.id) + 1000), name: `channel:${ch.id}` }]);
    expect((await get(reader.token)).has_unread).toBe(false);
    // Moving the marker back (id follows even without reset) makes it unread again.
    await ok(reader.token, [{ id: m1.id, name: `channel:${ch.id}` }]);
    expect((await get(reader.token)).has_unread).toBe(true);

    // In lists too (GET /users/me/channels/subscribed: the inbox), computed in the same query.
    await call("PUT", `/channels/${ch.id}/subscribe`, { token: reader.token, now: tick() });
    // On the test clock's second of the reader's last request: a new UTC day would add the daily activity write.
    const list = await call("GET", "/users/me/channels/subscribed", { token: reader.token, now: clock });
    const listed = list.body.data.find((c: any) => c.id === ch.id);
    expect(listed.has_unread).toBe(true);
    expect(dbCallsOf(list)).toBe(1);
  });
});

describe("GET /markers", () => {
  it("lists the user's markers by name, or those named; never-set ones are left out", async () => {
    const a = await actor(SCOPES);
    const b = await actor(SCOPES);
    const ch = await newChannel(a.token);
    expect((await call("GET", "/markers", { token: a.token })).body).toEqual({ meta: { code: 200 }, data: [] });
    const set = await ok(a.token, [
      { name: "personal", id: "12" },
      { name: `channel:${ch.id}`, id: "3", percentage: 40 },
      { name: "global", id: "7" },
    ]);
    await ok(b.token, [{ name: "global", id: "99" }]);
    const all = await call("GET", "/markers", { token: a.token });
    expect(all.status).toBe(200);
    const byName = (list: any[]) => Object.fromEntries(list.map((m) => [m.name, m]));
    expect(all.body.data.map((m: any) => m.name)).toEqual([`channel:${ch.id}`, "global", "personal"]);
    expect(byName(all.body.data)).toEqual(byName(set));
    const some = await call("GET", `/markers?name=personal,mentions,global`, { token: a.token });
    expect(some.body.data.map((m: any) => [m.name, m.id])).toEqual([
      ["global", "7"],
      ["personal", "12"],
    ]);
    expect((await call("GET", "/markers?name=mentions", { token: a.token })).body.data).toEqual([]);
  });

  it("validates name, and needs a user token", async () => {
    const a = await actor(SCOPES);
    const bad = await call("GET", "/markers?name=personal,timeline", { token: a.token });
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toMatch(/^Bad Request: 'name' 'timeline' is not a marker/);
    expect((await call("GET", "/markers")).status).toBe(401);
    expect((await call("GET", "/markers", { token: await appToken(await makeApp()) })).status).toBe(403);
  });
});

describe("marker events on user streams", () => {
  it("moves the read position of the user's other connections live, not the one that set it", async () => {
    const reader = await userStream(ALL_SCOPES);
    const ch = await newChannel(reader.token);
    const chSub = await subscribe(`/channels/${ch.id}/messages`, reader.token, reader.cid);
    const meSub = await subscribe("/posts/streams/me", reader.token, reader.cid);
    // The "first device" sets the markers through its own connection.
    const device = await socket("/user", reader.token);
    const deviceCid = (await device.next()).meta.connection_id;
    const stranger = await userStream(ALL_SCOPES);

    const [chMarker, personal, global] = await ok(
      reader.token,
      [
        { name: `channel:${ch.id}`, id: "5" },
        { name: "personal", id: "9", percentage: 50 },
        { name: "global", id: "3" },
      ],
      `?connection_id=${deviceCid}`,
    );
    const got = (name: string) => reader.s.next((f) => f.meta?.type === "marker" && f.data.name === name);
    expect(await got(`channel:${ch.id}`)).toEqual({
      meta: { type: "marker", id: expect.stringMatching(/^\d+$/), timestamp: expect.any(Number), subscription_ids: [chSub] },
      data: chMarker,
    });
    expect((await got("personal")).meta.subscription_ids).toEqual([meSub]);
    const g = await got("global");
    expect(g.meta.subscription_ids).toEqual([]);
    expect(g.data).toEqual(global);
    expect(personal.percentage).toBe(50);

    // Without connection_id every connection hears of it; the setter's own connection did not before.
    await ok(reader.token, [{ name: "mentions", id: "1" }]);
    await device.next((f) => f.meta?.type === "marker" && f.data.name === "mentions");
    expect(device.frames.filter((f) => f.meta?.type === "marker").map((f) => f.data.name)).toEqual(["mentions"]);
    expect(stranger.s.frames.some((f) => f.meta?.type === "marker")).toBe(false);
    const bad = await setMarkers(reader.token, [{ name: "global", id: "4" }], "?connection_id=nope");
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toMatch(/'connection_id'/);
    for (const s of [reader.s, device, stranger.s]) s.ws.close(1000);
  });
});
