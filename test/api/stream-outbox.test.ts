import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { streamRelay } from "../../src/events/publish";
import { call, makeUser, userToken, type StreamSocket } from "../support/client";
import { DB } from "../support/db";
import { ALL_SCOPES, appStream, eventsOf, expectIncreasing, socket, userStream, waitForEvents } from "../support/streams";

/** A user who posts; `skipPoke` plays a writer that dies right after its commit (no hand-off to the relay). */
async function poster(app: Parameters<typeof userToken>[0]) {
  const user = await makeUser();
  const token = await userToken(app, user, ALL_SCOPES);
  const post = async (text: string, opts: { skipPoke?: boolean; status?: number } = {}) => {
    const headers: Record<string, string> = opts.skipPoke ? { "X-Test-Skip-Relay-Poke": "1" } : {};
    const res = await call("POST", "/posts", { token, json: { text }, headers });
    expect(res.status, res.text).toBe(opts.status ?? 201);
    return res.body.data?.id as string;
  };
  return { user, token, post };
}

/** The outbox rows of post events about one post (the reference names the post). */
const outboxRowsOf = async (postId: string) =>
  (await DB.prepare("SELECT id, type, ref, payload FROM stream_outbox WHERE type = 'post' ORDER BY id").all<any>()).results.filter(
    (r) => r.ref && JSON.parse(r.ref).id === Number(postId),
  );

const relayCursor = () =>
  streamRelay(env)
    .status()
    .then((s) => s.cursor);

/** Runs the relay's alarm until it has delivered up to `seq` (a reserved row first waits a second for its writer). */
async function relayUntil(seq: number) {
  const deadline = Date.now() + 10_000;
  const ran: boolean[] = [];
  while ((await relayCursor()) < seq) {
    if (Date.now() > deadline) {
      const alarm = await runInDurableObject(streamRelay(env), (_i, state) => state.storage.getAlarm());
      const rows = (
        await DB.prepare("SELECT id, type, ref, payload IS NULL AS bare FROM stream_outbox WHERE id >= ?")
          .bind(seq - 1)
          .all()
      ).results;
      throw new Error(`relay did not reach ${seq}: ${JSON.stringify({ status: await streamRelay(env).status(), alarm, now: Date.now(), rows, ran })}`);
    }
    ran.push(await runDurableObjectAlarm(streamRelay(env)));
    await new Promise((r) => setTimeout(r, 250));
  }
}

const texts = (s: StreamSocket) => eventsOf(s).map((f) => f.data[0].content?.text);

describe("stream outbox and relay", () => {
  it("writes a post's event row in the post's own batch; the relay delivers it and passes its sequence", async () => {
    const { app, s } = await appStream(["post"], "outbox_basic");
    const { post } = await poster(app);
    const id = await post("through the outbox");
    const frame = await s.next((f) => f.meta?.type === "post");
    expect(frame.data[0].id).toBe(id);
    const rows = await outboxRowsOf(id);
    expect(rows).toHaveLength(1);
    expect(rows[0].payload).toBeNull(); // a reference: rendered by the writer, handed to the relay
    // The relay stores its cursor after the hubs took the event, so the frame can arrive first.
    const until = Date.now() + 5_000;
    while ((await relayCursor()) < Number(rows[0].id) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(await relayCursor()).toBeGreaterThanOrEqual(Number(rows[0].id));
    s.ws.close(1000);
  });

  it("a write that fails leaves no outbox row and publishes nothing", async () => {
    const { app, s } = await appStream(["post"], "outbox_failed");
    const { user, post } = await poster(app);
    // The post rows of this user (other events, e.g. the token's, are recorded after their commit and may land any time).
    const postRows = async () =>
      (await DB.prepare("SELECT ref FROM stream_outbox WHERE type = 'post'").all<any>()).results.filter(
        (r) => r.ref && JSON.parse(r.ref).route?.actorId === Number(user.id),
      ).length;
    expect(await postRows()).toBe(0);
    const first = await post("said once");
    await post("said once", { status: 400 }); // a duplicate: its batch is rolled back
    const after = await post("said twice");
    await waitForEvents(s, 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(eventsOf(s).map((f) => f.data[0].id)).toEqual([first, after]);
    expect(await postRows()).toBe(2);
    s.ws.close(1000);
  });

  it("delivers the event of a writer that died after its commit (alarm), once and in order, to a socket resuming by cursor", async () => {
    const { app, token, s } = await appStream(["post"], "outbox_crash");
    const { post } = await poster(app);
    await post("before the crash");
    await waitForEvents(s, 1);
    const cursor = eventsOf(s)[0].meta.id;
    s.ws.close(1000);
    await s.closed;

    const lostId = await post("acknowledged, never handed over", { skipPoke: true });
    const [row] = await outboxRowsOf(lostId);
    expect(await relayCursor()).toBeLessThan(Number(row.id));
    await relayUntil(Number(row.id));

    const back = await socket(`/app?key=outbox_crash&since=${cursor}`, token);
    expect((await back.next()).meta).toMatchObject({ connection_id: expect.any(String), cursor });
    await post("after the restart");
    await waitForEvents(back, 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(texts(back)).toEqual(["acknowledged, never handed over", "after the restart"]);
    // meta.id is each event's outbox sequence: the lost write's own row, then the next post's.
    expect(eventsOf(back)[0].meta.id).toBe(String(row.id));
    expectIncreasing([cursor, ...eventsOf(back).map((f) => f.meta.id)]);
    expect(eventsOf(back)[0].data[0]).toMatchObject({ id: lostId, user: { id: expect.any(String) }, you_bookmarked: false });
    back.ws.close(1000);
  });

  it("skips a sequence the hubs applied when the relay delivers it again (a crash before its cursor moved)", async () => {
    const { app, s } = await appStream(["post"], "outbox_again");
    const { post } = await poster(app);
    await post("once only 1");
    await post("once only 2");
    await waitForEvents(s, 2);
    const [row] = await outboxRowsOf(eventsOf(s)[0].data[0].id);
    // The relay forgets that it delivered both: they go to the hubs again.
    await runInDurableObject(streamRelay(env), (_i, state) => state.storage.kv.put("cursor", Number(row.id) - 1));
    await post("once only 3");
    await waitForEvents(s, 3);
    await relayUntil(Number(row.id) + 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(texts(s)).toEqual(["once only 1", "once only 2", "once only 3"]);
    s.ws.close(1000);
  });

  it("renders a message whose writer died after its commit from its reference, with the meta a live one has", async () => {
    const { app, token, s } = await appStream(["message"], "outbox_message");
    const user = await makeUser();
    const t = await userToken(app, user, ALL_SCOPES);
    const channel = await call("POST", "/channels", { token: t, json: { type: "com.example.chat" } });
    expect(channel.status, channel.text).toBe(201);
    const send = async (text: string, headers: Record<string, string> = {}) => {
      const res = await call("POST", `/channels/${channel.body.data.id}/messages`, { token: t, json: { text }, headers });
      expect(res.status, res.text).toBe(201);
      return res.body.data.id as string;
    };
    await send("handed over");
    await waitForEvents(s, 1);
    const live = eventsOf(s)[0];
    s.ws.close(1000);
    await s.closed;
    const lostId = await send("never handed over", { "X-Test-Skip-Relay-Poke": "1" });
    const row = (await DB.prepare("SELECT id, ref FROM stream_outbox WHERE type = 'message' ORDER BY id").all<any>()).results.find(
      (r) => JSON.parse(r.ref).id === Number(lostId),
    );
    await relayUntil(Number(row.id));
    const back = await socket(`/app?key=outbox_message&since=${live.meta.id}`, token);
    await back.next();
    await waitForEvents(back, 1);
    const [frame] = eventsOf(back);
    expect(frame.meta).toEqual({ ...live.meta, id: String(row.id), timestamp: frame.meta.timestamp });
    expect(frame.data[0]).toMatchObject({ id: lostId, channel_id: channel.body.data.id, content: { text: "never handed over" } });
    back.ws.close(1000);
  });

  it("delivers a repost, a post delete, a follow and a bookmark whose writer died from their references, once each, in order", async () => {
    const { app, token, s } = await appStream(["post", "bookmark", "follow"], "outbox_social");
    const author = await poster(app);
    const actor = await poster(app);
    const original = await author.post("to be reposted");
    const doomed = await author.post("to be deleted");
    await waitForEvents(s, 2);
    const cursor = Number(eventsOf(s)[1].meta.id);
    s.ws.close(1000);
    await s.closed;

    const before = (await DB.prepare("SELECT MAX(id) AS id FROM stream_outbox").first<any>()).id as number;
    const dies = { "X-Test-Skip-Relay-Poke": "1" };
    expect((await call("PUT", `/posts/${original}/repost`, { token: actor.token, headers: dies })).status).toBe(201);
    expect((await call("DELETE", `/posts/${doomed}`, { token: author.token, headers: dies })).status).toBe(200);
    expect((await call("PUT", `/users/${author.user.id}/follow`, { token: actor.token, headers: dies })).status).toBe(200);
    expect((await call("PUT", `/posts/${original}/bookmark`, { token: actor.token, headers: dies })).status).toBe(200);

    // Reserved in the writes' batches: references, not rendered payloads recorded after commit.
    const ours = [Number(actor.user.id), Number(author.user.id)];
    const rows = (await DB.prepare("SELECT id, type, ref, payload FROM stream_outbox WHERE id > ? ORDER BY id").bind(before).all<any>()).results.filter(
      (r) => ["post", "bookmark", "follow"].includes(r.type) && r.ref && ours.includes(JSON.parse(r.ref).route?.actorId),
    );
    expect(rows.map((r) => [r.type, r.payload])).toEqual([
      ["post", null],
      ["post", null],
      ["follow", null],
      ["bookmark", null],
    ]);
    await relayUntil(Number(rows[3].id));

    const back = await socket(`/app?key=outbox_social&since=${cursor}`, token);
    await back.next();
    await waitForEvents(back, 4);
    await new Promise((r) => setTimeout(r, 300));
    const got = eventsOf(back);
    expect(got.map((f) => [f.meta.type, f.meta.is_deleted ?? false, f.meta.id])).toEqual([
      ["post", false, String(rows[0].id)],
      ["post", true, String(rows[1].id)],
      ["follow", false, String(rows[2].id)],
      ["bookmark", false, String(rows[3].id)],
    ]);
    expect(Number(rows[0].id)).toBeGreaterThan(cursor);
    expect(got[0].data[0]).toMatchObject({ user: { id: actor.user.id }, repost_of: { id: original, content: { text: "to be reposted" } } });
    expect(got[1].data[0]).toMatchObject({ id: doomed, is_deleted: true });
    expect(got[2].data).toMatchObject({ user: { id: actor.user.id }, followed_user: { id: author.user.id } });
    expect(got[3].data).toMatchObject({ user: { id: actor.user.id }, post: { id: original } });
    back.ws.close(1000);
  });

  it("renders undos, mutes, blocks and profile changes from their references as their writers do", async () => {
    const { app, s } = await appStream(["post", "bookmark", "follow", "mute", "block", "user"], "outbox_undo");
    const author = await poster(app);
    const actor = await poster(app);
    const original = await author.post("acted on twice");
    await waitForEvents(s, 1);
    const actorToken = await userToken(app, actor.user, `${ALL_SCOPES} update_profile`);
    const as = (headers: Record<string, string>) => async (method: string, path: string, json?: unknown) => {
      const res = await call(method, path, { token: actorToken, headers, ...(json ? { json } : {}) });
      expect(res.status, res.text).toBeLessThan(300);
    };
    // The same changes twice from the same state: first handed over by the writer, then with the
    // undo (and the profile change, mute, block) left to the relay.
    const round = async (dies: Record<string, string>) => {
      const live = as({});
      const dying = as(dies);
      await dying("PATCH", "/users/me", { name: "Renamed" });
      await live("PUT", `/posts/${original}/repost`);
      await dying("DELETE", `/posts/${original}/repost`);
      await live("PUT", `/posts/${original}/bookmark`);
      await dying("DELETE", `/posts/${original}/bookmark`);
      await live("PUT", `/users/${author.user.id}/follow`);
      await dying("DELETE", `/users/${author.user.id}/follow`);
      await dying("PUT", `/users/${author.user.id}/mute`);
      await live("DELETE", `/users/${author.user.id}/mute`);
      await dying("PUT", `/users/${author.user.id}/block`);
      await live("DELETE", `/users/${author.user.id}/block`);
    };
    await round({});
    await waitForEvents(s, 12);
    await round({ "X-Test-Skip-Relay-Poke": "1" });
    await relayUntil((await DB.prepare("SELECT MAX(id) AS id FROM stream_outbox").first<any>()).id);
    await waitForEvents(s, 23);
    await new Promise((r) => setTimeout(r, 300));
    const frames = eventsOf(s).slice(1);
    expect(frames).toHaveLength(22);
    // A repost's own id and dates differ between the rounds; the rest must not, but for the counts
    // of a removed repost: its writer read it back before its delete, the relay reads them after.
    const removed = (p: any) => ({ ...p, counts: undefined, repost_of: { ...p.repost_of, counts: undefined }, user: { ...p.user, counts: undefined } });
    const same = (f: any) => {
      const post = ({ id: _i, created_at: _c, thread_id: _t, ...rest }: any) => (f.meta.is_deleted ? removed(rest) : rest);
      const data = f.meta.type === "post" ? f.data.map(post) : f.data;
      return { type: f.meta.type, is_deleted: f.meta.is_deleted ?? false, data };
    };
    expect(frames.slice(11).map(same)).toEqual(frames.slice(0, 11).map(same));
    expect(frames.slice(0, 11).map((f) => f.meta.type)).toEqual([
      "user",
      "post",
      "post",
      "bookmark",
      "bookmark",
      "follow",
      "follow",
      "mute",
      "mute",
      "block",
      "block",
    ]);
    s.ws.close(1000);
  });
});

// ---- Writes converted after posts and messages: message delete, channels, subscriptions, files ----

const SKIP = { "X-Test-Skip-Relay-Poke": "1" };

/** The outbox row of a `type` event whose reference names object `id` (and `isDeleted`, when asked). */
async function refRow(type: string, id: string | number, isDeleted?: boolean) {
  const rows = (await DB.prepare("SELECT id, ref, payload FROM stream_outbox WHERE type = ? ORDER BY id").bind(type).all<any>()).results;
  const found = rows.filter((r) => {
    const ref = r.ref ? JSON.parse(r.ref) : null;
    return ref?.id === Number(id) && (isDeleted === undefined || (ref.isDeleted ?? false) === isDeleted);
  });
  expect(found, `${type} ${id} rows`).toHaveLength(1);
  expect(found[0].payload).toBeNull(); // reserved by the write's batch, not recorded after it
  return found[0];
}

/** The shape of a value (keys and value types), to compare an event rendered by the relay with a live one. */
const shapeOf = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(shapeOf) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shapeOf(x)])) : typeof v;

/**
 * Asserts the frames of `type` on `s` (after `waitForEvents`): the live one then the one the relay rendered from
 * its reference, each once; both with the same meta apart from id and timestamp, and data of the same shape.
 */
async function expectLiveThenRendered(s: StreamSocket, pick: (f: any) => boolean, ids: [string, string], idOf: (f: any) => string) {
  const deadline = Date.now() + 10_000;
  while (eventsOf(s).filter(pick).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 300));
  const frames = eventsOf(s).filter(pick);
  expect(frames.map(idOf)).toEqual(ids);
  const [live, rendered] = frames;
  expect({ ...rendered.meta, id: live.meta.id, timestamp: live.meta.timestamp }).toEqual(live.meta);
  expect(Number(rendered.meta.id)).toBeGreaterThan(Number(live.meta.id));
  expect(shapeOf(rendered.data)).toEqual(shapeOf(live.data));
  return { live, rendered };
}

describe("stream outbox: message delete, channel, subscription and file events reserved in their batch", () => {
  it("delivers a message deletion whose writer died after its commit, rendered from its reference, once", async () => {
    const { app, s } = await appStream(["message"], "outbox_msg_delete");
    const user = await makeUser();
    const t = await userToken(app, user, ALL_SCOPES);
    const ch = (await call("POST", "/channels", { token: t, json: { type: "com.example.chat" } })).body.data;
    const send = async (text: string) => (await call("POST", `/channels/${ch.id}/messages`, { token: t, json: { text } })).body.data.id as string;
    const [a, b] = [await send("to go 1"), await send("to go 2")];
    expect((await call("DELETE", `/channels/${ch.id}/messages/${a}`, { token: t })).status).toBe(200);
    expect((await call("DELETE", `/channels/${ch.id}/messages/${b}`, { token: t, headers: SKIP })).status).toBe(200);
    const row = await refRow("message", b, true);
    expect(await relayCursor()).toBeLessThan(Number(row.id));
    await relayUntil(Number(row.id));
    const { rendered } = await expectLiveThenRendered(
      s,
      (f) => f.meta.is_deleted === true,
      [a, b],
      (f) => f.data[0].id,
    );
    expect(rendered.data[0]).toMatchObject({ id: b, channel_id: ch.id, is_deleted: true });
    expect(rendered.data[0].content).toBeUndefined();
    // Deleting it again changes nothing and reserves nothing.
    expect((await call("DELETE", `/channels/${ch.id}/messages/${b}`, { token: t })).status).toBe(200);
    await refRow("message", b, true);
    s.ws.close(1000);
  });

  it("delivers a channel update whose writer died after its commit, rendered from its reference, once", async () => {
    const { app, s } = await appStream(["channel"], "outbox_channel");
    const owner = await makeUser();
    const t = await userToken(app, owner, ALL_SCOPES);
    const ch = (await call("POST", "/channels", { token: t, json: { type: "com.example.chat" } })).body.data;
    const live = await call("PUT", `/channels/${ch.id}`, { token: t, json: { acl: { read: { public: true } } } });
    expect(live.status, live.text).toBe(200);
    const lost = await call("PUT", `/channels/${ch.id}`, { token: t, json: { acl: { read: { any_user: true } } }, headers: SKIP });
    expect(lost.status, lost.text).toBe(200);
    const rows = (await DB.prepare("SELECT id, ref FROM stream_outbox WHERE type = 'channel' ORDER BY id").all<any>()).results.filter(
      (r) => JSON.parse(r.ref).id === Number(ch.id),
    );
    expect(rows).toHaveLength(3); // create, update, update: each written by its batch
    await relayUntil(Number(rows[2].id));
    const deadline = Date.now() + 10_000;
    while (eventsOf(s).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    const frames = eventsOf(s);
    expect(frames.map((f) => f.data.id)).toEqual([ch.id, ch.id, ch.id]);
    expect(frames[1].data.acl.read.public).toBe(true);
    expect(frames[2].data.acl.read).toMatchObject({ public: true, any_user: true });
    expect({ ...frames[2], meta: { ...frames[2].meta, id: frames[1].meta.id, timestamp: frames[1].meta.timestamp } }).toEqual({
      ...frames[1],
      data: { ...frames[1].data, acl: frames[2].data.acl },
    });
    s.ws.close(1000);
  });

  it("delivers a channel subscription whose writer died after its commit, rendered from its reference, once", async () => {
    const { app, s } = await appStream(["channel_subscription"], "outbox_subscription");
    const owner = await makeUser();
    const ch = (
      await call("POST", "/channels", { token: await userToken(app, owner, ALL_SCOPES), json: { type: "com.example.chat", acl: { read: { public: true } } } })
    ).body.data;
    const [u1, u2] = [await makeUser(), await makeUser()];
    const [t1, t2] = [await userToken(app, u1, ALL_SCOPES), await userToken(app, u2, ALL_SCOPES)];
    expect((await call("PUT", `/channels/${ch.id}/subscribe`, { token: t1 })).status).toBe(200);
    expect((await call("PUT", `/channels/${ch.id}/subscribe`, { token: t2, headers: SKIP })).status).toBe(200);
    const subRows = async () =>
      (await DB.prepare("SELECT id, ref FROM stream_outbox WHERE type = 'channel_subscription' ORDER BY id").all<any>()).results.filter(
        (r) => JSON.parse(r.ref).route?.actorId === Number(u2.id),
      );
    const [row] = await subRows();
    await relayUntil(Number(row.id));
    // A repeated subscribe changes nothing and reserves nothing.
    expect((await call("PUT", `/channels/${ch.id}/subscribe`, { token: t2 })).status).toBe(200);
    expect(await subRows()).toHaveLength(1);
    const forChannel = (f: any) => f.data.channel.id === ch.id && f.data.user.id !== owner.id;
    const { live, rendered } = await expectLiveThenRendered(s, forChannel, [u1.id, u2.id], (f) => f.data.user.id);
    expect({
      ...rendered.data.user,
      id: live.data.user.id,
      username: live.data.user.username,
      name: live.data.user.name,
      created_at: live.data.user.created_at,
    }).toEqual(live.data.user);
    expect(rendered.data.channel).toEqual({ ...live.data.channel, counts: rendered.data.channel.counts });
    // The unsubscription too.
    expect((await call("DELETE", `/channels/${ch.id}/subscribe`, { token: t2, headers: SKIP })).status).toBe(200);
    const [, gone] = await subRows();
    expect(JSON.parse(gone.ref).isDeleted).toBe(true);
    await relayUntil(Number(gone.id));
    await s.next((f) => f.meta?.type === "channel_subscription" && f.meta.is_deleted === true && f.data.user.id === u2.id);
    s.ws.close(1000);
  });

  it("delivers a file created by a writer that died after its commit, rendered from its reference, once", async () => {
    const { app, s } = await appStream(["file"], "outbox_file");
    const user = await makeUser();
    const t = await userToken(app, user, ALL_SCOPES);
    const upload = async (name: string, headers: Record<string, string> = {}) => {
      const form = new FormData();
      form.set("content", new Blob([new TextEncoder().encode(`content of ${name}`)]), name);
      form.set("type", "com.example.test");
      const res = await call("POST", "/files", { token: t, body: form, headers });
      expect(res.status, res.text).toBe(201);
      return res.body.data.id as string;
    };
    const a = await upload("live.txt");
    const b = await upload("lost.txt", SKIP);
    const row = await refRow("file", b);
    expect(await relayCursor()).toBeLessThan(Number(row.id));
    await relayUntil(Number(row.id));
    const { live, rendered } = await expectLiveThenRendered(
      s,
      () => true,
      [a, b],
      (f) => f.data.id,
    );
    expect(rendered.data).toMatchObject({ id: b, name: "lost.txt", url: expect.stringContaining("/v1/files/content/") });
    expect({
      ...rendered.data,
      id: live.data.id,
      name: live.data.name,
      url: live.data.url,
      url_expires_at: live.data.url_expires_at,
      sha256: live.data.sha256,
      created_at: live.data.created_at,
    }).toEqual(live.data);
    s.ws.close(1000);
  });

  it("delivers a marker moved by a writer that died after its commit to the user's own stream, rendered from its reference, once", async () => {
    const { user, token, s } = await userStream();
    const move = async (id: string, headers: Record<string, string> = {}) =>
      expect((await call("POST", "/markers", { token, json: [{ id, name: "personal" }], headers })).status).toBe(200);
    await move("10");
    await move("20", SKIP);
    const rows = (await DB.prepare("SELECT id, ref, payload FROM stream_outbox WHERE type = 'marker' ORDER BY id").all<any>()).results.filter(
      (r) => r.ref && JSON.parse(r.ref).route?.actorId === Number(user.id),
    );
    expect(rows.map((r) => [JSON.parse(r.ref).key, r.payload])).toEqual([
      ["personal", null],
      ["personal", null],
    ]);
    await relayUntil(Number(rows[1].id));
    const { live, rendered } = await expectLiveThenRendered(
      s,
      (f) => f.meta.type === "marker",
      ["10", "20"],
      (f) => f.data.id,
    );
    expect({ ...rendered.data, id: live.data.id, version: live.data.version, last_read_id: live.data.last_read_id, updated_at: live.data.updated_at }).toEqual(
      live.data,
    );
    s.ws.close(1000);
  });
});
