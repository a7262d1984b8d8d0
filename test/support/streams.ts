import { expect } from "vitest";
import { appToken, call, makeApp, makeUser, openStream, userToken, type StreamSocket } from "./client";
import { env } from "cloudflare:test";
import { DB } from "./db";
import { openDb } from "../../src/db";
import { appendEvents } from "../../src/events/outbox";
import { streamRelay, type StampedEvent } from "../../src/events/publish";

/** Helpers shared by the stream test files (streams.test.ts, stream-replay.test.ts, stream-resume.test.ts, markers.test.ts). */

export const ALL_SCOPES = "write_post follow messages files polls presence stream";

/** An app with an app token. */
export async function appWithToken() {
  const app = await makeApp();
  return { app, token: await appToken(app) };
}

export async function createStream(token: string, body: Record<string, unknown>) {
  const res = await call("POST", "/streams", { token, json: { type: "long_poll", ...body } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** An open stream socket (the upgrade must succeed). */
export async function socket(path: string, token: string): Promise<StreamSocket> {
  const s = await openStream(path, token);
  if (!("ws" in s)) throw new Error(`upgrade refused: ${s.status} ${JSON.stringify(s.body)}`);
  return s;
}

/** An app with a connected stream listening for `types` (first frame taken). */
export async function appStream(types: readonly string[], key = "main") {
  const { app, token } = await appWithToken();
  await createStream(token, { object_types: types, key });
  const s = await socket(`/app?key=${key}`, token);
  await s.next((f) => f.meta?.connection_id !== undefined);
  return { app, token, s, key };
}

export const ofType = (type: string, match: (f: any) => boolean) => (f: any) => f.meta?.type === type && match(f);

/** A user with a token (of `scopes`) and an open user stream; returns its connection id. */
export async function userStream(scopes = ALL_SCOPES, app?: Awaited<ReturnType<typeof makeApp>>) {
  const theApp = app ?? (await makeApp());
  const user = await makeUser();
  const token = await userToken(theApp, user, scopes);
  const s = await socket("/user", token);
  const first = await s.next();
  expect(first).toEqual({ meta: { connection_id: expect.stringMatching(/^[0-9a-f]{32}$/), cursor: expect.stringMatching(/^\d+$/) } });
  return { app: theApp, user, token, s, cid: first.meta.connection_id as string };
}

/** Subscribes a user stream connection by calling `path` with `connection_id`; returns the subscription id. */
export async function subscribe(path: string, token: string, cid: string): Promise<string> {
  const res = await call("GET", `${path}${path.includes("?") ? "&" : "?"}connection_id=${cid}`, { token });
  expect(res.status, res.text).toBe(200);
  expect(res.body.meta.subscription_id).toMatch(/^[0-9a-f]{32}$/);
  return res.body.meta.subscription_id;
}

/** The D1/Postgres mirror of a connection's subscriptions. */
export const rowsOf = async (cid: string) =>
  (await DB.prepare("SELECT id, endpoint, channel_id FROM stream_subscriptions WHERE connection_id = ? ORDER BY id").bind(cid).all()).results;

/** The event frames received so far (first frames and pongs left out). */
export const eventsOf = (s: StreamSocket) => s.frames.filter((f) => f?.meta?.type !== undefined);

/** Waits until `s` has received `n` event frames. */
export async function waitForEvents(s: StreamSocket, n: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (eventsOf(s).length < n) {
    if (Date.now() > deadline) throw new Error(`${eventsOf(s).length} of ${n} events arrived within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Events handed to the stream hubs as a write's would be: recorded in the outbox, then delivered by the relay. */
export async function viaRelay(events: StampedEvent[]): Promise<void> {
  const recorded = await appendEvents(openDb(env), events);
  await streamRelay(env).poke(recorded);
}

/** The outbox sequence of each post event about these posts, in order (an app stream's `meta.id`). */
export async function postSeqs(postIds: string[]): Promise<string[]> {
  const rows = (await DB.prepare("SELECT id, ref FROM stream_outbox WHERE type = 'post' ORDER BY id").all<any>()).results;
  const seqOf = new Map<string, string>();
  for (const r of rows) if (r.ref && !seqOf.has(String(JSON.parse(r.ref).id))) seqOf.set(String(JSON.parse(r.ref).id), String(r.id));
  return postIds.map((id) => seqOf.get(id) ?? "missing");
}

/** Asserts positions that only grow (no repeat, no step back). */
export function expectIncreasing(ids: (string | number)[]) {
  const n = ids.map(Number);
  expect(
    n.slice(1).every((x, i) => x > n[i]),
    `not increasing: ${n.join(",")}`,
  ).toBe(true);
}
