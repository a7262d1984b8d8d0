import { appHubAt, appHubIndex, CLOSE, type AppRing, type RingSeat } from "./hubs";
import { streamRelay } from "./publish";

/** How long an isolate trusts the ring it last read from the relay (a hub corrects a stale one with 4004). */
const RING_CACHE_MS = 2_000;

/** Per isolate: the active ring as last asked of the relay, for RING_CACHE_MS (a stale one is refused by the hub and retried). */
let cached: { ring: AppRing; at: number } | null = null;

/** The active app hub ring, as the relay holds it (cached briefly per isolate). */
export async function activeAppRing(env: Env, fresh = false): Promise<AppRing> {
  const now = Date.now();
  if (!fresh && cached && now - cached.at < RING_CACHE_MS) return cached.ring;
  const { ring } = await streamRelay(env).ringInfo();
  cached = { ring, at: now };
  return ring;
}

/** Adopts a ring a hub reported (newer than the cached one). */
function learnRing(ring: AppRing): void {
  if (!cached || ring.version > cached.ring.version) cached = { ring, at: Date.now() };
}

/**
 * Forwards an app stream connect to the key's owner. A hub that knows a newer ring answers 409
 * with it (the relay changed the ring since this isolate last asked): the connect is re-routed
 * once by that ring; if that fails too the client gets a socket closed with 4004 and reconnects.
 */
export async function connectAppStream(env: Env, appId: number, key: string, request: (seat: RingSeat) => Request): Promise<Response> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const { hub, seat } = await appHubFor(env, appId, key);
    const res = await hub.fetch(request(seat));
    if (res.status !== 409 || res.headers.get("X-Stream-Moved") !== "1") return res;
    learnRing(((await res.json()) as { ring: AppRing }).ring);
  }
  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  server.close(CLOSE.moved.code, CLOSE.moved.reason);
  return new Response(null, { status: 101, webSocket: client });
}

/** The hub that owns an app stream key under the active ring, and its seat. */
export async function appHubFor(
  env: Env,
  appId: number,
  key: string,
): Promise<{ hub: DurableObjectStub<import("../objects/app-stream-hub").AppStreamHub>; seat: RingSeat }> {
  const ring = await activeAppRing(env);
  const index = appHubIndex(appId, key, ring.count);
  return { hub: appHubAt(env, index), seat: { ...ring, index } };
}
