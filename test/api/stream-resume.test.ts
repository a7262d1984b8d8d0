import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { userHubFor } from "../../src/events/hubs";
import { actor, call, makeApp, openStream, userToken, type StreamSocket } from "../support/client";
import { ALL_SCOPES, eventsOf, rowsOf, socket, subscribe, userStream, waitForEvents } from "../support/streams";

/** Takes up a user stream connection again; returns the socket and its first frame. */
async function resume(token: string, cid: string, since?: string) {
  const s = await socket(`/user?connection_id=${cid}${since === undefined ? "" : `&since=${encodeURIComponent(since)}`}`, token);
  return { s, first: await s.next() };
}

const postIds = (s: StreamSocket) => eventsOf(s).map((f) => f.data[0].id);

/** Moves a dropped connection's resume window into the past and runs the hub's alarm. */
async function expireWindow(userId: string, cid: string) {
  const hub = userHubFor(env, Number(userId));
  await runInDurableObject(hub, (_instance, state) => {
    state.storage.sql.exec("UPDATE replay_streams SET retire_at = ? WHERE name = ?", Date.now() - 1, `c:${cid}`);
  });
  expect(await runDurableObjectAlarm(hub)).toBe(true);
}

describe("user stream resume", () => {
  it("after a disconnect during 100 writes, restores the connection and its subscriptions and replays exactly what it missed", async () => {
    const { token, s, cid } = await userStream();
    const sub = await subscribe("/posts/streams/me", token, cid);
    // A second connection of the same user, subscribed the same way, stays connected as the reference.
    const control = await socket("/user", token);
    const controlCid = (await control.next()).meta.connection_id;
    await subscribe("/posts/streams/me", token, controlCid);

    const post = async (text: string) => {
      const res = await call("POST", "/posts", { token, json: { text } });
      expect(res.status, res.text).toBe(201);
    };
    const writes = (async () => {
      for (let i = 0; i < 100; i++) await post(`user write ${i}`);
    })();
    await waitForEvents(s, 10);
    s.ws.close(1000);
    const processed = eventsOf(s);
    const last = processed[processed.length - 1].meta.id;
    await waitForEvents(control, 60);
    const back = await resume(token, cid, last);
    expect(back.first.meta).toEqual({ connection_id: cid, cursor: last });
    await writes;
    await post("live after the resume");
    await waitForEvents(control, 101);
    await waitForEvents(back.s, 101 - processed.length);

    const resumed = eventsOf(back.s);
    expect([...processed.map((f) => f.data[0].id), ...postIds(back.s)]).toEqual(postIds(control));
    const cursors = [...processed, ...resumed].map((f) => Number(f.meta.id));
    expect(cursors.slice(1).map((c, i) => c - cursors[i])).toEqual(cursors.slice(1).map(() => 1));
    for (const f of resumed) expect(f.meta.subscription_ids).toEqual([sub]);
    expect(resumed.at(-1).data[0].content.text).toBe("live after the resume");
    // Same subscription: subscribing again gives the same id.
    expect(await subscribe("/posts/streams/me", token, cid)).toBe(sub);
    expect(await rowsOf(cid)).toEqual([{ id: sub, endpoint: "posts_me", channel_id: null }]);
    for (const x of [back.s, control]) x.ws.close(1000);
  });

  it("keeps routing to a dropped connection's subscriptions and replays them on resume", async () => {
    const { app, user, token, s, cid } = await userStream();
    const sub = await subscribe("/token", token, cid);
    s.ws.close(1000);
    await s.closed;
    expect(await rowsOf(cid)).toHaveLength(1);
    await userToken(app, user, "files");
    const back = await resume(token, cid, s.frames[0].meta.cursor);
    const granted = await back.s.next((f) => f.meta?.type === "token");
    expect(granted.meta).toEqual({ type: "token", id: String(Number(s.frames[0].meta.cursor) + 1), timestamp: expect.any(Number), subscription_ids: [sub] });
    expect(granted.data.scopes).toContain("files");
    back.s.ws.close(1000);
  });

  it("refuses a connection id later, or from another token, with a clear error", async () => {
    const { user, token, s, cid } = await userStream();
    await subscribe("/presence", token, cid);
    s.ws.close(1000);
    await s.closed;

    const other = await userToken(await makeApp(), user, ALL_SCOPES);
    const foreign = await openStream(`/user?connection_id=${cid}`, other);
    expect(foreign).toMatchObject({ status: 400, body: { meta: { code: 400, error_message: expect.stringMatching(/another access token/) } } });
    const stranger = await actor("stream");
    expect(await openStream(`/user?connection_id=${cid}`, stranger.token)).toMatchObject({
      status: 400,
      body: { meta: { error_message: "Bad Request: 'connection_id' names no user stream of this user" } },
    });
    expect(await openStream(`/user?since=5`, token)).toMatchObject({
      status: 400,
      body: { meta: { error_message: expect.stringMatching(/'since'.*'connection_id'/) } },
    });

    await expireWindow(user.id, cid);
    const late = await openStream(`/user?connection_id=${cid}&since=1`, token);
    expect(late).toMatchObject({
      status: 400,
      body: {
        meta: { error_message: expect.stringMatching(/^Bad Request: 'connection_id' can no longer be resumed: it was dropped more than 10 minutes ago/) },
      },
    });
    expect(await rowsOf(cid)).toEqual([]);
  });

  it("refuses a deleted connection, and a resumed socket takes over from one still open", async () => {
    const { token, s, cid } = await userStream();
    const sub = await subscribe("/presence", token, cid);
    // The client thinks the socket dropped; the server has not noticed yet.
    const back = await resume(token, cid);
    expect(await s.closed).toEqual({ code: 4002, reason: "connection resumed by another socket" });
    expect(back.first.meta.connection_id).toBe(cid);
    expect(await subscribe("/presence", token, cid)).toBe(sub);

    expect((await call("DELETE", `/users/me/streams/${cid}`, { token })).status).toBe(204);
    expect((await back.s.closed).code).toBe(4001);
    expect(await openStream(`/user?connection_id=${cid}`, token)).toMatchObject({
      status: 400,
      body: { meta: { error_message: expect.stringMatching(/names a user stream that was deleted/) } },
    });
  });

  it("reports a cursor outside the window on resume and continues live", async () => {
    const { token, s, cid } = await userStream();
    s.ws.close(1000);
    await s.closed;
    const back = await resume(token, cid, "123456789012");
    expect(back.first.meta).toMatchObject({ connection_id: cid, replay_gap: "unknown" });
    back.s.ws.close(1000);
  });
});

describe("refused subscriptions", () => {
  it("an error does not carry a subscription id", async () => {
    const owner = await actor(ALL_SCOPES);
    const ch = await call("POST", "/channels", { token: owner.token, json: { type: "com.example.private" } });
    expect(ch.status).toBe(201);
    const { token, cid, s } = await userStream();
    const res = await call("GET", `/channels/${ch.body.data.id}/messages?connection_id=${cid}`, { token });
    expect(res.status).toBe(404);
    expect(res.body.meta.subscription_id).toBeUndefined();
    expect(await rowsOf(cid)).toEqual([]);
    s.ws.close(1000);
  });
});
