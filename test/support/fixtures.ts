import { call, type ApiResponse } from "./client";

/**
 * Fixtures shared by the API tests: the writes most tests set up their data with, each failing
 * loudly (status and body) when the server refuses, so a broken setup never reads as the
 * behaviour under test.
 */

/** A test clock: Unix seconds from now + `offset`, `step` seconds further on each call (for `now`). */
export function testClock(offset = 0, step = 4): () => number {
  let clock = Math.floor(Date.now() / 1000) + offset;
  return () => (clock += step);
}

interface WriteOptions {
  /** Unix seconds for the injectable clock (X-Test-Now). */
  now?: number;
  /** A query string appended to the path, e.g. `?include_raw=1`. */
  query?: string;
}

async function created(res: Promise<ApiResponse>, what: string) {
  const r = await res;
  if (r.status !== 201) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.body.data;
}

/** POST /posts as `a`; the created Post. */
export const createPost = (a: { token: string }, text: string, extra: Record<string, unknown> = {}, opts: WriteOptions = {}) =>
  created(call("POST", `/posts${opts.query ?? ""}`, { token: a.token, json: { text, ...extra }, now: opts.now }), "post");

/** POST /channels (a `com.example.chat` unless `body.type` says otherwise); the created Channel. */
export const createChannel = (token: string, body: Record<string, unknown> = {}, opts: WriteOptions = {}) =>
  created(call("POST", `/channels${opts.query ?? ""}`, { token, json: { type: "com.example.chat", ...body }, now: opts.now }), "channel");

/** POST /channels/{id}/messages with `text`, or a whole message body; the created Message. */
export const createMessage = (token: string, channelId: string, message: string | Record<string, unknown>, opts: WriteOptions = {}) =>
  created(
    call("POST", `/channels/${channelId}/messages${opts.query ?? ""}`, {
      token,
      json: typeof message === "string" ? { text: message } : message,
      now: opts.now,
    }),
    "message",
  );

/** GET /files/{id} until the File object no longer says its derived images are pending. */
export async function fileSettled(token: string, id: string) {
  for (let i = 0; i < 200; i++) {
    const file = (await call("GET", `/files/${id}`, { token })).body.data;
    if (!file.derived_files_pending) return file;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("derived files still pending");
}

/** The ids of a list response's data, in order. */
export const idsOf = (res: { body: any }) => (res.body.data as { id: string }[]).map((o) => o.id);

/** The database round trips a response reports (test mode's X-Debug-Db-Calls). */
export const dbCallsOf = (res: { headers: Headers }) => Number(res.headers.get("x-debug-db-calls"));
