import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { streamRelay } from "../../src/events/publish";
import { call, makeApp, makeUser, userToken } from "../support/client";
import { DB } from "../support/db";
import { ALL_SCOPES, appStream, eventsOf, socket, waitForEvents } from "../support/streams";

/**
 * What a crash leaves the relay (README "Streams: outbox and relay", Guarantees; the whole-runtime
 * version is test/fault/kill-runtime.mjs): rows whose writers died before their hand-off.
 */
const SKIP = { "X-Test-Skip-Relay-Poke": "1" };
const lastSeq = async () => Number((await DB.prepare("SELECT MAX(id) AS id FROM stream_outbox").first<{ id: number }>())!.id);
const relayCursor = () =>
  streamRelay(env)
    .status()
    .then((s) => s.cursor);

/** Runs the relay's alarm until everything in the outbox so far is delivered (a test starts from a drained relay). */
async function drainRelay() {
  const last = await lastSeq();
  for (let i = 0; i < 20 && (await relayCursor()) < last; i++) await runDurableObjectAlarm(streamRelay(env)), await new Promise((r) => setTimeout(r, 300));
  expect(await relayCursor()).toBe(last);
}

async function deadWriter() {
  const token = await userToken(await makeApp(), await makeUser(), ALL_SCOPES);
  return async (text: string) => {
    const res = await call("POST", "/posts", { token, json: { text }, headers: SKIP });
    expect(res.status, res.text).toBe(201);
  };
}

describe("stream relay after a crash", () => {
  it("a socket resuming with its cursor wakes the relay: a dead writer's event arrives without waiting for the heartbeat", async () => {
    const { token, s, key } = await appStream(["post"]);
    const cursor = s.frames[0].meta.cursor as string;
    s.ws.close(1000);
    await s.closed;
    const post = await deadWriter();
    await drainRelay();
    await post("written while the socket was away, never handed over");
    // No write pokes the relay now, and its heartbeat is 30 s away: only the resume can wake it.
    const back = await socket(`/app?key=${key}&since=${cursor}`, token);
    expect((await back.next()).meta.replay_gap).toBeUndefined();
    await waitForEvents(back, 1, 8_000);
    expect(eventsOf(back).map((f) => f.data[0].content.text)).toEqual(["written while the socket was away, never handed over"]);
    back.ws.close(1000);
  });

  it("renders all the rows that lost their hand-off after one wait, not one row per wait", async () => {
    const post = await deadWriter();
    await drainRelay(); // whatever came before (the token's event) is delivered first
    for (let i = 0; i < 5; i++) await post(`lost hand-off ${i}`);
    const last = await lastSeq();
    const seen = Date.now();
    await runDurableObjectAlarm(streamRelay(env)); // sees the five rows: each starts its wait for a hand-off
    // All five are delivered once their common wait is over (its alarm fires by itself, or here). One
    // wait after the other would need at least 5 s: the fifth row's wait would start after the fourth's delivery.
    while ((await relayCursor()) < last && Date.now() - seen < 4_000) {
      await new Promise((r) => setTimeout(r, 300));
      await runDurableObjectAlarm(streamRelay(env));
    }
    expect(await relayCursor()).toBe(last);
  });
});
