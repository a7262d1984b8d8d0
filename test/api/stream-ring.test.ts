import { env } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import { appHubIndex } from "../../src/events/hubs";
import { streamRelay } from "../../src/events/publish";
import { call, makeUser, userToken } from "../support/client";
import { ALL_SCOPES, appWithToken, createStream, eventsOf, expectIncreasing, postSeqs, socket } from "../support/streams";

/**
 * An app that follows one stream key as a client should: on close code 4004 (the key moved to
 * another hub) it reconnects at once with `since` = the last `meta.id` it processed.
 */
async function follower(token: string, key: string) {
  const events: any[] = [];
  const closes: number[] = [];
  let position: string | undefined;
  let stopped = false;
  const errors: string[] = [];
  const connect = async (): Promise<void> => {
    const s = await socket(`/app?key=${key}${position ? `&since=${position}` : ""}`, token);
    const first = await s.next();
    expect(first.meta.replay_gap).toBeUndefined();
    position ??= first.meta.cursor;
    let taken = 0;
    const take = () => {
      for (const f of eventsOf(s).slice(taken)) {
        events.push(f);
        position = f.meta.id;
      }
      taken = eventsOf(s).length;
    };
    const poll = setInterval(take, 10);
    done = () => s.ws.close(1000);
    void s.closed.then(async (c) => {
      clearInterval(poll);
      take();
      closes.push(c.code);
      if (c.code === 4004 && !stopped) await connect().catch((e) => errors.push(String(e)));
    });
  };
  let done = () => {};
  await connect();
  return {
    events,
    closes,
    errors,
    stop: () => {
      stopped = true;
      done();
    },
  };
}

async function waitFor(check: () => boolean, what: () => string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const postIdsOf = (frames: any[]) => frames.map((f) => f.data[0].id as string);

describe("app hub ring", () => {
  afterAll(async () => {
    await streamRelay(env).resize(null);
  });

  it("grows 4 -> 8 during continuous publishing: every key gets every event once, in order, across the 4004 move", async () => {
    // Two apps (at most 5 streams each), each with keys that move to the new hubs and one that stays.
    const apps = [await appWithToken(), await appWithToken()];
    const chosen: { token: string; key: string; moves: boolean }[] = [];
    for (const { app, token } of apps) {
      const keys = Array.from({ length: 40 }, (_, i) => `ring_${i}`);
      const moving = keys.filter((k) => appHubIndex(Number(app.id), k, 8) >= 4).slice(0, 2);
      const staying = keys.filter((k) => appHubIndex(Number(app.id), k, 8) < 4).slice(0, 1);
      expect(moving).toHaveLength(2);
      for (const key of [...moving, ...staying]) {
        await createStream(token, { object_types: ["post"], key });
        chosen.push({ token, key, moves: moving.includes(key) });
      }
    }
    const followers = await Promise.all(chosen.map((c) => follower(c.token, c.key)));
    expect((await streamRelay(env).ringInfo()).ring.count).toBe(4);
    const app = apps[0].app;
    // A key whose app is away across the move: it comes back to the new owner with an older cursor,
    // which only the log copied into the new hub can serve.
    const awayKey = Array.from({ length: 40 }, (_, i) => `away_${i}`).find((k) => appHubIndex(Number(app.id), k, 8) >= 4)!;
    await createStream(apps[0].token, { object_types: ["post"], key: awayKey });
    const away = await socket(`/app?key=${awayKey}`, apps[0].token);
    await away.next();

    const user = await makeUser();
    const userTok = await userToken(app, user, ALL_SCOPES);
    const written: string[] = [];
    let resizing: Promise<unknown> | null = null;
    for (let i = 0; i < 60; i++) {
      const res = await call("POST", "/posts", { token: userTok, json: { text: `ring ${i}` } });
      expect(res.status, res.text).toBe(201);
      written.push(res.body.data.id);
      if (i === 20) resizing = streamRelay(env).resize(8); // not awaited: publishing goes on
      if (i === 10) {
        await waitFor(
          () => eventsOf(away).length === 11,
          () => `away got ${eventsOf(away).length}`,
        );
        away.ws.close(1000);
      }
    }
    expect(await resizing).toMatchObject({ count: 8 });

    await waitFor(
      () => followers.every((f) => f.events.length >= written.length),
      () => JSON.stringify(followers.map((f, i) => ({ key: chosen[i].key, got: f.events.length, closes: f.closes, errors: f.errors }))),
    );
    await new Promise((r) => setTimeout(r, 300)); // nothing more (no duplicate) arrives
    const seqs = await postSeqs(written);
    followers.forEach((f, i) => {
      expect(postIdsOf(f.events), chosen[i].key).toEqual(written);
      expect(f.events.map((e) => e.meta.id)).toEqual(seqs);
      expectIncreasing(f.events.map((e) => e.meta.id));
    });
    const back = await socket(`/app?key=${awayKey}&since=${eventsOf(away).at(-1).meta.id}`, apps[0].token);
    expect((await back.next()).meta.replay_gap).toBeUndefined();
    await waitFor(
      () => eventsOf(back).length >= written.length - 11,
      () => `back got ${eventsOf(back).length}`,
    );
    expect(postIdsOf([...eventsOf(away), ...eventsOf(back)])).toEqual(written);
    back.ws.close(1000);
    // The keys that moved were closed with 4004 and resumed on their new owner; the others were left alone.
    for (const [i, f] of followers.entries()) expect(f.closes, chosen[i].key).toEqual(chosen[i].moves ? [4004] : []);
    expect((await streamRelay(env).ringInfo()).ring).toMatchObject({ count: 8 });

    // Back to the configured 4 (shrinking moves the keys of hubs 4-7 back the same way).
    expect(await streamRelay(env).resize(null)).toMatchObject({ count: 4 });
    const after = await call("POST", "/posts", { token: userTok, json: { text: "after the shrink" } });
    expect(after.status).toBe(201);
    written.push(after.body.data.id);
    await waitFor(
      () => followers.every((f) => f.events.length >= written.length),
      () => JSON.stringify(followers.map((f) => ({ got: f.events.length, closes: f.closes, errors: f.errors }))),
    );
    followers.forEach((f, i) => {
      expect(postIdsOf(f.events)).toEqual(written);
      expect(f.closes, chosen[i].key).toEqual(chosen[i].moves ? [4004, 4004] : []);
    });
    for (const f of followers) f.stop();
  });

  it("a hub refuses a connect routed under an older ring, naming the new one; the Worker re-routes at once", async () => {
    const { app, token } = await appWithToken();
    const key = Array.from({ length: 40 }, (_, i) => `stale_${i}`).find((k) => appHubIndex(Number(app.id), k, 8) >= 4)!;
    await createStream(token, { object_types: ["post"], key });
    await streamRelay(env).resize(8);
    // The hub that owned the key under 4 hubs, asked with a seat of the old ring.
    const oldIndex = appHubIndex(Number(app.id), key, 4);
    const connect = { appId: Number(app.id), key, objectTypes: ["post"], endpoint: "x", seat: { count: 4, version: 0, index: oldIndex } };
    const res = await env.APP_STREAM_HUB.getByName(`shard:${oldIndex}`).fetch(
      new Request("https://stream-hub/connect", { headers: { Upgrade: "websocket", "X-Stream": JSON.stringify(connect) } }),
    );
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ ring: { count: 8, version: expect.any(Number) } });
    const s = await socket(`/app?key=${key}`, token);
    expect((await s.next()).meta.connection_id).toBeDefined();
    s.ws.close(1000);
    await streamRelay(env).resize(null);
  });
});

describe("a since ahead of the hub", () => {
  it("is taken when the relay sent it (the socket skips up to it), refused as unknown beyond", async () => {
    const { app, token } = await appWithToken();
    await createStream(token, { object_types: ["post"], key: "ahead" });
    // A hub no delivery reached (as one a step behind its peers), seated by a ring of 64 that owns the key there.
    const index = appHubIndex(Number(app.id), "ahead", 64);
    const hub = env.APP_STREAM_HUB.getByName(`shard:${index}`);
    const seat = { count: 64, version: 1_000, index };
    const { sendingThrough } = await streamRelay(env).ringInfo();
    const event = (seq: number) => ({ seq, mask: 1, appIds: null, event: { type: "post", timestamp: 1, isDeleted: false, data: `[{"id":"${seq}"}]` } });
    await hub.publish([event(sendingThrough - 5)]); // its history starts here
    const open = async (since: string) => {
      const connect = { appId: Number(app.id), key: "ahead", objectTypes: ["post"], endpoint: "x", since, seat };
      const res = await hub.fetch(new Request("https://stream-hub/connect", { headers: { Upgrade: "websocket", "X-Stream": JSON.stringify(connect) } }));
      expect(res.status).toBe(101);
      const ws = res.webSocket!;
      const frames: any[] = [];
      ws.addEventListener("message", (e) => frames.push(JSON.parse(e.data as string)));
      ws.accept();
      await waitFor(
        () => frames.length > 0,
        () => "no first frame",
      );
      return { ws, frames };
    };
    const beyond = await open(String(sendingThrough + 1_000));
    expect(beyond.frames[0].meta).toMatchObject({ replay_gap: "unknown" });
    beyond.ws.close(1000);

    const since = sendingThrough;
    const s = await open(String(since));
    expect(s.frames[0].meta.replay_gap).toBeUndefined();
    expect(s.frames[0].meta.cursor).toBe(String(since));
    await hub.publish([event(since - 1), event(since), event(since + 1)]);
    await waitFor(
      () => s.frames.length > 1,
      () => "no event",
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(s.frames.slice(1).map((f) => f.meta.id)).toEqual([String(since + 1)]);
    s.ws.close(1000);
  });
});
