import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { streamRelay } from "../../src/events/publish";
import { call, makeUser, userToken, type StreamSocket } from "../helpers";
import { DB } from "../db";
import { ALL_SCOPES, appStream, eventsOf, socket, waitForEvents } from "./stream-fixtures";

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

const relayCursor = () => streamRelay(env).status().then((s) => s.cursor);

/** Runs the relay's alarm until it has delivered up to `seq` (a reserved row first waits a second for its writer). */
async function relayUntil(seq: number) {
  const deadline = Date.now() + 10_000;
  const ran: boolean[] = [];
  while ((await relayCursor()) < seq) {
    if (Date.now() > deadline) {
      const alarm = await runInDurableObject(streamRelay(env), (_i, state) => state.storage.getAlarm());
      const rows = (await DB.prepare("SELECT id, type, ref, payload IS NULL AS bare FROM stream_outbox WHERE id >= ?").bind(seq - 1).all()).results;
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
    expect(await relayCursor()).toBeGreaterThanOrEqual(Number(rows[0].id));
    s.ws.close(1000);
  });

  it("a write that fails leaves no outbox row and publishes nothing", async () => {
    const { app, s } = await appStream(["post"], "outbox_failed");
    const { user, post } = await poster(app);
    // The post rows of this user (other events, e.g. the token's, are recorded after their commit and may land any time).
    const postRows = async () =>
      (await DB.prepare("SELECT ref FROM stream_outbox WHERE type = 'post'").all<any>()).results.filter((r) => r.ref && JSON.parse(r.ref).route?.actorId === Number(user.id)).length;
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
    expect(eventsOf(back).map((f) => Number(f.meta.id))).toEqual([Number(cursor) + 1, Number(cursor) + 2]);
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
    expect(frame.meta).toEqual({ ...live.meta, id: String(Number(live.meta.id) + 1), timestamp: frame.meta.timestamp });
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
    expect(got.map((f) => [f.meta.type, f.meta.is_deleted ?? false, Number(f.meta.id)])).toEqual([
      ["post", false, cursor + 1],
      ["post", true, cursor + 2],
      ["follow", false, cursor + 3],
      ["bookmark", false, cursor + 4],
    ]);
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
    expect(frames.slice(0, 11).map((f) => f.meta.type)).toEqual(["user", "post", "post", "bookmark", "bookmark", "follow", "follow", "mute", "mute", "block", "block"]);
    s.ws.close(1000);
  });
});
