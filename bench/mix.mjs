// The mixed load: every hot read type and the common writes, each request as one of the seeded
// users (its own token), users and posts drawn Zipf-like. Run as its own process by bench/run.mjs
// (argv[2] names a JSON job file) so it does not share an event loop with the runtime host; kept
// cheap (node:http with kept-alive sockets, no JSON parsing but a regex for page 2's before_id).
// Prints one JSON line: per type count, p50/p99, non-2xx, X-Cache hits and misses, and totals.
import http from "node:http";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { zipf } from "./mix-seed.mjs";

/** Weights, in percent of requests: reads 85, writes 15. */
export const READS = {
  "home (streams/me)": 14,
  "home (streams/unified)": 8,
  "global stream": 8,
  post: 12,
  "posts by ids": 5,
  "user posts": 8,
  mentions: 5,
  "tag stream": 5,
  thread: 5,
  "post search": 4,
  interactions: 4,
  "channel messages": 5,
  "message search": 2,
};
export const WRITES = { "create post": 5, reply: 2, repost: 2, bookmark: 2, follow: 1.5, "create message": 2.5 };
/** Share of list reads that ask for page 2 (`before_id` = the page 1 `meta.min_id` seen for that list). */
const PAGE_TWO = 0.25;
const LISTS = new Set([
  "home (streams/me)",
  "home (streams/unified)",
  "global stream",
  "user posts",
  "mentions",
  "tag stream",
  "interactions",
  "channel messages",
]);
const SEARCH_WORDS = ["music", "coffee morning", "release", "river", "chess", "rust compiler", "rain", "garden", "night train", "review"];
const pickWeighted = (weights) => {
  const entries = Object.entries(weights);
  const total = entries.reduce((s, [, w]) => s + w, 0);
  return () => {
    let x = Math.random() * total;
    for (const [k, w] of entries) if ((x -= w) < 0) return k;
    return entries.at(-1)[0];
  };
};

/**
 * The request generator over the seeded data (bench/mix-seed.mjs's result). `next(type)` answers
 * `{ type, user, method, path, body?, listKey? }`; `saw(req, body)` records page 1's min_id.
 * `bust`: every GET gets a distinct harmless `_b` parameter, so no kept response is ever served.
 */
export function generator(data, { bust = false } = {}) {
  const user = zipf(data.users.length, 0.8); // who is asking: active users more often
  const post = zipf(data.originalIds.length, 1.0); // what is read: recent posts more often
  const popular = zipf(data.users.length, 1.0); // whom: popular users more often
  const channel = zipf(data.channelIds.length, 1.0);
  const tag = zipf(data.tags.length, 1.0);
  const thread = zipf(data.threadPostIds.length, 1.0);
  const minIds = new Map();
  const mine = data.users.map(() => ({ bookmarks: [], follows: [], reposts: [] }));
  let n = 0;
  const text = () => Array.from({ length: 8 + Math.floor(Math.random() * 12) }, () => SEARCH_WORDS[Math.floor(Math.random() * SEARCH_WORDS.length)]).join(" ");
  const postId = () => data.originalIds[post()];
  const channelIds = () => [...new Set(Array.from({ length: 5 }, () => data.channelIds[channel()]))].join(",");
  const list = (type, u, key, path) => {
    const listKey = `${type} ${key}`;
    const before = Math.random() < PAGE_TWO ? minIds.get(listKey) : undefined;
    return { path: before ? `${path}${path.includes("?") ? "&" : "?"}before_id=${before}` : path, listKey: before ? undefined : listKey };
  };
  const reads = {
    "home (streams/me)": (u) => list("me", u, u, "/v1/posts/streams/me"),
    "home (streams/unified)": (u) => list("unified", u, u, "/v1/posts/streams/unified"),
    "global stream": (u) => list("global", u, "", "/v1/posts/streams/global"),
    post: () => ({ path: `/v1/posts/${postId()}` }),
    "posts by ids": () => ({ path: `/v1/posts?ids=${[...new Set(Array.from({ length: 20 }, postId))].join(",")}` }),
    "user posts": () => {
      const id = data.users[popular()].id;
      return list("user", null, id, `/v1/users/${id}/posts`);
    },
    mentions: (u) => list("mentions", u, u, "/v1/users/me/mentions"),
    "tag stream": () => {
      const t = data.tags[tag()];
      return list("tag", null, t, `/v1/posts/tags/${t}`);
    },
    thread: () => ({ path: `/v1/posts/${data.threadPostIds[thread()]}/thread` }),
    "post search": () => ({ path: `/v1/posts/search?q=${encodeURIComponent(SEARCH_WORDS[Math.floor(Math.random() * SEARCH_WORDS.length)])}` }),
    interactions: (u) => list("interactions", u, u, "/v1/users/me/interactions"),
    "channel messages": () => {
      const id = data.channelIds[channel()];
      return list("channel", null, id, `/v1/channels/${id}/messages`);
    },
    "message search": () => ({
      path: `/v1/channels/messages/search?q=${encodeURIComponent(SEARCH_WORDS[Math.floor(Math.random() * SEARCH_WORDS.length)])}&channel_ids=${channelIds()}`,
    }),
  };
  // Toggles undo only what this run did (a seeded follow or bookmark may already be there: PUT is idempotent).
  const toggle = (u, set, make) => (set.length > 3 || (set.length && Math.random() < 0.4) ? make(set.shift(), true) : make(undefined, false));
  const writes = {
    "create post": () => ({ method: "POST", path: "/v1/posts", body: { text: text() } }),
    reply: () => ({ method: "POST", path: "/v1/posts", body: { text: text(), reply_to: postId() } }),
    repost: (u) =>
      toggle(u, mine[u].reposts, (id, undo) => {
        if (undo) return { method: "DELETE", path: `/v1/posts/${id}/repost` };
        const p = postId();
        mine[u].reposts.push(p);
        return { method: "PUT", path: `/v1/posts/${p}/repost` };
      }),
    bookmark: (u) =>
      toggle(u, mine[u].bookmarks, (id, undo) => {
        if (undo) return { method: "DELETE", path: `/v1/posts/${id}/bookmark` };
        const p = postId();
        mine[u].bookmarks.push(p);
        return { method: "PUT", path: `/v1/posts/${p}/bookmark` };
      }),
    follow: (u) =>
      toggle(u, mine[u].follows, (id, undo) => {
        if (undo) return { method: "DELETE", path: `/v1/users/${id}/follow` };
        let target = data.users[popular()].id;
        if (target === data.users[u].id) target = data.users[(u + 1) % data.users.length].id;
        mine[u].follows.push(target);
        return { method: "PUT", path: `/v1/users/${target}/follow` };
      }),
    "create message": () => ({ method: "POST", path: `/v1/channels/${data.channelIds[channel()]}/messages`, body: { text: text() } }),
  };
  return {
    types: { reads: Object.keys(reads), writes: Object.keys(writes) },
    next(type) {
      const u = user();
      const isRead = type in reads;
      const r = isRead ? reads[type](u) : writes[type](u);
      let path = r.path;
      if (isRead && bust) path += `${path.includes("?") ? "&" : "?"}_b=${++n}`;
      return { type, read: isRead, token: data.users[u].token, method: r.method ?? "GET", path, body: r.body, listKey: r.listKey };
    },
    saw(req, body) {
      if (!req.listKey) return;
      const m = /"min_id":"(\d+)"/.exec(body);
      if (m) minIds.set(req.listKey, m[1]);
    },
  };
}

/** One request over `agent`; resolves to { status, ms, headers, body } (body as text). */
export function send(url, agent, req, headers = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const h = { ...headers, authorization: `Bearer ${req.token}` };
    if (body) (h["content-type"] = "application/json"), (h["content-length"] = Buffer.byteLength(body));
    const r = http.request(url + req.path, { method: req.method, agent, headers: h }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - t0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on("error", (e) => resolve({ status: 0, error: e.code ?? e.message, ms: performance.now() - t0, headers: {}, body: "" }));
    });
    r.on("error", (e) => resolve({ status: 0, error: e.code ?? e.message, ms: performance.now() - t0, headers: {}, body: "" }));
    r.end(body);
  });
}

const pct = (sorted, p) => (sorted.length ? +sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(1) : null);

/**
 * Closed-loop load: `connections` loops, each sending its next request when the last answered,
 * for `duration` seconds. `weights` picks the type of each request.
 */
export async function runMix({ url, duration, connections, data, weights, bust, headers }) {
  const gen = generator(data, { bust });
  const pick = pickWeighted(weights);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const stats = new Map();
  const end = performance.now() + duration * 1000;
  let total = 0;
  async function loop() {
    while (performance.now() < end) {
      const req = gen.next(pick());
      const res = await send(url, agent, req, headers);
      let s = stats.get(req.type);
      if (!s) stats.set(req.type, (s = { read: req.read, ms: [], non2xx: 0, statuses: {}, hit: 0, miss: 0 }));
      s.ms.push(res.ms);
      total++;
      // A failed connection counts as status 0, by its error code.
      const status = res.status || `0 ${res.error}`;
      if (res.status < 200 || res.status > 299) s.non2xx++, (s.statuses[status] = (s.statuses[status] ?? 0) + 1);
      else gen.saw(req, res.body);
      const cache = res.headers["x-cache"];
      if (cache === "hit") s.hit++;
      else if (cache === "miss") s.miss++;
    }
  }
  const t0 = performance.now();
  await Promise.all(Array.from({ length: connections }, loop));
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  const types = {};
  const all = { read: [], write: [] };
  let hits = 0,
    misses = 0;
  for (const [type, s] of stats) {
    s.ms.sort((a, b) => a - b);
    all[s.read ? "read" : "write"].push(...s.ms);
    (hits += s.hit), (misses += s.miss);
    types[type] = {
      read: s.read,
      count: s.ms.length,
      p50_ms: pct(s.ms, 50),
      p99_ms: pct(s.ms, 99),
      non2xx: s.non2xx,
      ...(s.non2xx ? { statuses: s.statuses } : {}),
      cache_hits: s.hit,
      cache_misses: s.miss,
    };
  }
  for (const k of ["read", "write"]) all[k].sort((a, b) => a - b);
  return {
    seconds: +seconds.toFixed(1),
    requests: total,
    reads_per_s: +(all.read.length / seconds).toFixed(1),
    writes_per_s: +(all.write.length / seconds).toFixed(1),
    read_p50_ms: pct(all.read, 50),
    read_p99_ms: pct(all.read, 99),
    write_p50_ms: pct(all.write, 50),
    write_p99_ms: pct(all.write, 99),
    cache_hits: hits,
    cache_misses: misses,
    types,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
  process.stdout.write(JSON.stringify(await runMix(job)) + "\n");
}
