import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { appHubFor } from "../../src/events/app-ring";
import { REPLAY_DEFAULTS } from "../../src/events/replay";
import type { AppEventLog } from "../../src/objects/app-event-log";
import { armAlarm } from "../../src/objects/socket-idle";
import { call, makeUser, userToken, type StreamSocket } from "../support/client";
import {
  ALL_SCOPES,
  appStream,
  appWithToken,
  createStream,
  eventsOf,
  expectIncreasing,
  ofType,
  postSeqs,
  socket,
  viaRelay,
  waitForEvents,
} from "../support/streams";

/** A user who posts, and a function writing numbered posts (`n` distinct texts). */
async function poster(app: Parameters<typeof userToken>[0]) {
  const user = await makeUser();
  const token = await userToken(app, user, ALL_SCOPES);
  const post = async (text: string) => {
    const res = await call("POST", "/posts", { token, json: { text } });
    expect(res.status, res.text).toBe(201);
    return res.body.data.id as string;
  };
  return { user, token, post };
}

/** Reconnects to an app stream key with `since`; returns the socket and its first frame. */
async function resume(token: string, key: string, since: string) {
  const s = await socket(`/app?key=${key}&since=${encodeURIComponent(since)}`, token);
  return { s, first: await s.next() };
}

const cursorsOf = (s: StreamSocket) => eventsOf(s).map((f) => Number(f.meta.id));
const postIdsOf = (frames: any[]) => frames.map((f) => f.data[0].id);

describe("app stream replay", () => {
  it("numbers events by their outbox sequence: meta.id grows in order, the first frame carries the cursor", async () => {
    const { app, s } = await appStream(["post"], "numbered");
    const cursor = Number(s.frames[0].meta.cursor);
    const { post } = await poster(app);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await post(`numbered ${i}`));
    await waitForEvents(s, 3);
    expect(eventsOf(s).map((f) => f.meta.id)).toEqual(await postSeqs(ids));
    expect(cursorsOf(s)[0]).toBeGreaterThan(cursor);
    expectIncreasing(cursorsOf(s));
    s.ws.close(1000);
  });

  it("after a disconnect during 100 writes, replays exactly the missed events in order, then live ones", async () => {
    const { app, token, s: control } = await appStream(["post"], "resumed");
    // The second connection of the same key: it drops and comes back.
    const dropper = await socket("/app?key=resumed", token);
    await dropper.next();
    const { post } = await poster(app);

    const writes = (async () => {
      for (let i = 0; i < 100; i++) await post(`write ${i}`);
    })();
    await waitForEvents(dropper, 10);
    dropper.ws.close(1000);
    const processed = eventsOf(dropper);
    const last = processed[processed.length - 1].meta.id;
    await waitForEvents(control, 60);
    // Back while the writes go on: events published during the replay must come exactly once too.
    const { s: back, first } = await resume(token, "resumed", last);
    expect(first.meta.cursor).toBe(last);
    expect(Object.keys(first.meta).filter((k) => k.includes("replay"))).toEqual([]);
    await writes;
    await waitForEvents(control, 100);
    await post("live after the replay");
    await waitForEvents(control, 101);
    await waitForEvents(back, 101 - processed.length);

    const all = eventsOf(control);
    const missed = all.filter((f) => Number(f.meta.id) > Number(last));
    expect(eventsOf(back)).toEqual(missed);
    expect(postIdsOf([...processed, ...eventsOf(back)])).toEqual(postIdsOf(all));
    expectIncreasing(cursorsOf(control));
    expect(cursorsOf(control)).toHaveLength(101);
    expect(eventsOf(back).at(-1).data[0].content.text).toBe("live after the replay");
    for (const x of [control, back]) x.ws.close(1000);
  });

  it("replays the 100 events written while the app was away, then continues live", async () => {
    const { app, token, s } = await appStream(["post"], "away");
    const { post } = await poster(app);
    await post("seen");
    const seen = await s.next(ofType("post", () => true));
    s.ws.close(1000);
    await s.closed;
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await post(`while away ${i}`));
    const { s: back } = await resume(token, "away", seen.meta.id);
    await waitForEvents(back, 100);
    await post("live");
    await waitForEvents(back, 101);
    const frames = eventsOf(back);
    expect(postIdsOf(frames.slice(0, 100))).toEqual(ids);
    expect(frames[100].data[0].content.text).toBe("live");
    expectIncreasing([Number(seen.meta.id), ...frames.map((f) => Number(f.meta.id))]);
    expect(frames.slice(0, 100).map((f) => f.meta.id)).toEqual(await postSeqs(ids));
    back.ws.close(1000);
  });

  it("reports a cursor never issued, or of the per-key numbering of earlier versions, in the first frame, then goes on live", async () => {
    const { app, token, s } = await appStream(["post"], "unknown");
    const { post } = await poster(app);
    await post("before");
    // Delivery follows the response (through the outbox relay): the hub has it before the resumes.
    const before = await s.next(ofType("post", () => true));
    s.ws.close(1000);
    const cases = [
      ["999999999999999", "unknown"], // beyond anything the relay sent
      ["abc", "unknown"],
      ["-1", "unknown"],
      ["57", "expired"], // a per-key cursor of an earlier version: below the outbox numbering
    ];
    for (const [since, gap] of cases) {
      const { s: back, first } = await resume(token, "unknown", since);
      expect(first.meta).toMatchObject({ replay_gap: gap, cursor: expect.stringMatching(/^\d+$/) });
      expect(Number(first.meta.cursor)).toBeGreaterThanOrEqual(Number(before.meta.id));
      const id = await post(`live after ${since}`);
      const live = await back.next(ofType("post", (f) => f.data[0].id === id));
      expect([live.meta.id]).toEqual(await postSeqs([id]));
      expect(eventsOf(back)).toHaveLength(1);
      back.ws.close(1000);
      await back.closed;
    }
  });

  it("keeps at least 10 minutes and 10,000 events per hub, and reports a cursor older than the window", async () => {
    const { app, token, s } = await appStream(["post"], "window");
    const { post } = await poster(app);
    for (let i = 0; i < 30; i++) await post(`window ${i}`);
    await waitForEvents(s, 30);
    const cursors = cursorsOf(s);
    s.ws.close(1000);
    await s.closed;
    const { hub } = await appHubFor(env, Number(app.id), "window");
    // Nothing is published after the 30 posts: they are the hub's newest events.
    // The hub's own log (its alarm trims through it): the log keeps its state in memory as well.
    const trim = (now: number, limits = REPLAY_DEFAULTS) =>
      runInDurableObject(hub, (instance) => (instance as unknown as { log: AppEventLog }).log.trim(now, limits));

    // Eleven minutes later the 30 events are still within the newest 10,000: all kept.
    await trim(Date.now() + 11 * 60_000);
    // Now, with room for 10 events only: all 30 are younger than 10 minutes, all kept.
    await trim(Date.now(), { seconds: 600, events: 10 });
    let back = await resume(token, "window", String(cursors[0]));
    await waitForEvents(back.s, 29);
    back.s.ws.close(1000);
    await back.s.closed;

    // Eleven minutes later with room for 10: the first 20 go.
    await trim(Date.now() + 11 * 60_000, { seconds: 600, events: 10 });
    back = await resume(token, "window", String(cursors[5]));
    expect(back.first.meta.replay_gap).toBe("expired");
    expect(eventsOf(back.s)).toEqual([]);
    back.s.ws.close(1000);
    await back.s.closed;
    back = await resume(token, "window", String(cursors[19]));
    expect(back.first.meta.replay_gap).toBeUndefined();
    await waitForEvents(back.s, 10);
    expect(cursorsOf(back.s)).toEqual(cursors.slice(20));
    back.s.ws.close(1000);
  });

  it("still replays after its hub was evicted and restarted", async () => {
    const { app, token, s } = await appStream(["post"], "evicted");
    const { post } = await poster(app);
    await post("before the eviction");
    const seen = await s.next(ofType("post", () => true));
    s.ws.close(1000);
    await s.closed;
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await post(`missed ${i}`));
    // Delivery runs after each response; wait until the hub holds all 20 (a watcher replays them)
    // so the eviction below cannot race the last delivery.
    const watcher = await resume(token, "evicted", seen.meta.id);
    await waitForEvents(watcher.s, 20);
    watcher.s.ws.close(1000);
    await watcher.s.closed;

    const { seat } = await appHubFor(env, Number(app.id), "evicted");
    const hub = () => env.APP_STREAM_HUB.getByName(`shard:${seat.index}`);
    await runInDurableObject(hub(), (instance) => Object.assign(instance, { marked: true }));
    await runInDurableObject(hub(), (_instance, state) => state.abort("evicted by the test")).catch(() => {});
    // A new instance over the same storage (the mark is gone); the aborted stub is broken, so a new one.
    expect(await runInDurableObject(hub(), (instance) => "marked" in instance)).toBe(false);

    const { s: back, first } = await resume(token, "evicted", seen.meta.id);
    expect(first.meta.replay_gap).toBeUndefined();
    await waitForEvents(back, 20);
    expect(postIdsOf(eventsOf(back))).toEqual(ids);
    expect(eventsOf(back).map((f) => f.meta.id)).toEqual(await postSeqs(ids));
    back.ws.close(1000);
  });

  it("answers a cursor of a deleted stream with a gap on the re-created key, whose cursors are above it", async () => {
    const { app, token, s } = await appStream(["post"], "reborn");
    const { post } = await poster(app);
    await post("old stream");
    const old = await s.next(ofType("post", () => true));
    // A later event of the old stream: `old` is a position strictly before the deletion.
    await post("old stream, later");
    await s.next(ofType("post", (f) => f.data[0].content.text === "old stream, later"));
    expect((await call("DELETE", "/streams/reborn", { token })).status).toBe(200);
    await s.closed;
    await createStream(token, { object_types: ["post"], key: "reborn" });
    const { s: again, first } = await resume(token, "reborn", old.meta.id);
    expect(first.meta.replay_gap).toBe("expired");
    expect(Number(first.meta.cursor)).toBeGreaterThan(Number(old.meta.id));
    again.ws.close(1000);
  });

  it("replays only the types the reconnecting socket listens for", async () => {
    const { app, token, s } = await appStream(["post", "follow"], "typed");
    const { post, token: userTok } = await poster(app);
    const other = await makeUser();
    await post("first");
    const seen = await s.next(ofType("post", () => true));
    s.ws.close(1000);
    await s.closed;
    expect((await call("PUT", `/users/${other.id}/follow`, { token: userTok })).status).toBe(200);
    await post("second");
    expect((await call("PUT", "/streams/typed", { token, json: { object_types: ["post"] } })).status).toBe(200);
    const { s: back } = await resume(token, "typed", seen.meta.id);
    await back.next(ofType("post", (f) => f.data[0].content.text === "second"));
    expect(eventsOf(back).map((f) => f.meta.type)).toEqual(["post"]);
    back.ws.close(1000);
  });
});

describe("user and channel presence events on app streams", () => {
  it("sends `user` only to apps the user authorized, `user_channel_presence` only to those that may see the channel too", async () => {
    const types = ["user", "user_channel_presence"];
    const mine = await appStream(types, "u1");
    const members = await appStream(types, "u2");
    const stranger = await appStream(types, "u3");
    const [u, member] = [await makeUser(), await makeUser()];
    const token = await userToken(mine.app, u, ALL_SCOPES);
    await userToken(members.app, member, ALL_SCOPES);
    const ch = await call("POST", "/channels", {
      token,
      json: { type: "com.example.private", acl: { read: { user_ids: [member.id] } } },
    });
    expect(ch.status, ch.text).toBe(201);
    const channelId = Number(ch.body.data.id);

    const profile = { id: u.id, username: u.username };
    await viaRelay([
      { type: "user", data: profile, timestamp: 1, route: { actorId: Number(u.id) } },
      { type: "user_channel_presence", data: [{ ...profile, presence: "here" }], timestamp: 2, route: { channelId } },
    ]);
    expect(await mine.s.next(ofType("user", () => true))).toEqual({ meta: { type: "user", id: expect.any(String), timestamp: 1 }, data: profile });
    expect((await mine.s.next(ofType("user_channel_presence", () => true))).data).toEqual([{ ...profile, presence: "here" }]);
    // A later event that the members' app may hear proves it had its chance at the first two.
    await viaRelay([{ type: "user", data: { id: member.id }, timestamp: 3, route: { actorId: Number(member.id) } }]);
    await members.s.next(ofType("user", (f) => f.data.id === member.id));
    expect(eventsOf(members.s).map((f) => f.data.id)).toEqual([member.id]);
    expect(eventsOf(stranger.s)).toEqual([]);
    for (const x of [mine, members, stranger]) x.s.ws.close(1000);
  });
});

describe("hub alarms", () => {
  const fakeStorage = (stored: number | null) => {
    const set: number[] = [];
    return { set, ctx: { storage: { getAlarm: async () => stored, setAlarm: async (at: number | Date) => void set.push(Number(at)) } } };
  };

  it("re-arms an alarm kept from before a restart that is in the past, and leaves a due one alone", async () => {
    const now = 1_000_000;
    const past = fakeStorage(now - 5_000);
    await armAlarm(past.ctx, now + 60_000, now);
    expect(past.set).toEqual([now]);
    const none = fakeStorage(null);
    await armAlarm(none.ctx, now + 60_000, now);
    expect(none.set).toEqual([now + 60_000]);
    const later = fakeStorage(now + 90_000);
    await armAlarm(later.ctx, now + 60_000, now);
    expect(later.set).toEqual([now + 60_000]);
    const sooner = fakeStorage(now + 30_000);
    await armAlarm(sooner.ctx, now + 60_000, now);
    expect(sooner.set).toEqual([]);
  });

  it("keeps an alarm scheduled while a hub holds events, drops socket groups nobody is in, and still replays a key without sockets", async () => {
    const { app, token } = await appWithToken();
    await createStream(token, { object_types: ["post"], key: "retired" });
    const s = await socket("/app?key=retired", token);
    await s.next();
    const { post } = await poster(app);
    await post("buffered");
    const seen = await s.next(ofType("post", () => true));
    s.ws.close(1000);
    await s.closed;
    const later = await post("while nobody listens");
    const { hub } = await appHubFor(env, Number(app.id), "retired");
    const alarm = await runInDurableObject(hub, (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    const groups = () =>
      runInDurableObject(hub, (_instance, state) => state.storage.sql.exec("SELECT mask FROM app_groups WHERE app_id = ?", Number(app.id)).toArray().length);
    expect(await groups()).toBe(1);
    expect(await runDurableObjectAlarm(hub)).toBe(true);
    expect(await groups()).toBe(0);
    // Nothing is kept per key: the log, not the key, bounds what a resume gets.
    const { s: back, first } = await resume(token, "retired", seen.meta.id);
    expect(first.meta.replay_gap).toBeUndefined();
    const missed = await back.next(ofType("post", () => true));
    expect(missed.data[0].id).toBe(later);
    back.ws.close(1000);
  });
});
