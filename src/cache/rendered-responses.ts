import type { Context } from "hono";
import { readAlongsideToken } from "../auth/authenticate";
import type { Db, RawResult } from "../db";
import { BoundQuery, runBatch } from "../db/batch";
import type { Executor } from "../db/types";
import type { AppEnv } from "../http/types";
import { now } from "../http/time";
import { flagValue } from "../http/params";
import { epochQuery, List, listShards, shardOf, versionOf, versionSumQuery, type Kind } from "../stores/render-versions";
import type { PostSet } from "../stores/posts";

// Whole 200 responses of hot reads, kept per isolate and served again while nothing they show was
// written. Each kept response carries the counters (render_versions) of every object it rendered
// and every list it walked; the sum of those counters is read in the request's one round trip
// (with the token lookup for a token, alone otherwise) and the bytes are served when it is the
// same. Counters are bumped by triggers in the writing transaction, so a writer's next read never
// gets a response from before its write.
//
// A response is kept only when its counters were read with nothing written since its data was
// read: the epoch (one row per write) is read in the data's own batch and again with the
// counters, and the two must match. Responses that show something no counter covers (live
// presence) are not kept; polls are kept until they close.

type Ctx = Context<AppEnv>;

interface Entry {
  /** The read of its counters' sum, built once when it was kept. */
  check: BoundQuery;
  sum: number;
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
  /** Request time it was read at, and until when it may be served (a poll closing). */
  readAt: number;
  validUntil: number;
}

/** The cache state of one request, found before the route ran. */
export interface CacheProbe {
  key: string;
  entry?: Entry;
}

const MAX_BYTES = 24 * 1024 * 1024; // of an isolate's 128 MB
const entries = new Map<string, Entry>();
let heldBytes = 0;

function put(key: string, entry: Entry) {
  const old = entries.get(key);
  if (old) heldBytes -= old.body.length;
  entries.delete(key);
  entries.set(key, entry);
  heldBytes += entry.body.length;
  for (const [k, e] of entries) {
    if (heldBytes <= MAX_BYTES) break;
    entries.delete(k); // Maps iterate in insertion order: the least recently served go first
    heldBytes -= e.body.length;
  }
}

/** What a response showed: the counters it depends on, and until when it may be served. */
export class RenderDeps {
  readonly shards = new Set<number>();
  validUntil = Number.POSITIVE_INFINITY;

  add(kind: Kind, id: number | null | undefined): this {
    if (id != null) this.shards.add(shardOf(kind, id));
    return this;
  }

  list(id: (typeof List)[keyof typeof List]): this {
    for (const shard of listShards(id)) this.shards.add(shard);
    return this;
  }

  /** Every post of a read (page, embedded originals), its author and client, and the actors listed. */
  posts(set: PostSet): this {
    for (const v of set.byId.values()) {
      this.add("post", v.post.id).add("user", v.post.userId).add("app", v.post.appId);
    }
    for (const users of [...(set.actors?.bookmarkedBy.values() ?? []), ...(set.actors?.repostedBy.values() ?? [])]) {
      for (const u of users) this.add("user", u.id);
    }
    return this;
  }

  until(at: number): this {
    this.validUntil = Math.min(this.validUntil, at);
    return this;
  }
}

/**
 * Whether a request's response may be kept: a GET whose query asks for nothing live (presence)
 * and no write or subscription on the side (`update_presence`, `connection_id`).
 */
function cacheable(c: Ctx): boolean {
  if (c.req.method !== "GET") return false;
  // Test mode can defeat the cache, to measure what a read itself costs (the rows-read guard).
  if (c.env.ALLOW_TEST_CLOCK === "1" && c.req.header("x-debug-no-cache") === "1") return false;
  const q = c.req.query();
  if (q.update_presence !== undefined || q.connection_id !== undefined) return false;
  if (flagValue(q.include_presence, false)) return false;
  // Whether a post is "directed" depends on whether its leading mention names a user who exists.
  if (!flagValue(q.include_directed_posts, true)) return false;
  const extra = c.get("extraMeta");
  return !extra || Object.keys(extra).length === 0;
}

const keyOf = (c: Ctx, tokenHash: string | undefined) => `${tokenHash ?? "-"} ${c.req.url}`;

function probe(c: Ctx, tokenHash: string | undefined): CacheProbe {
  const key = keyOf(c, tokenHash);
  return { key, entry: entries.get(key) };
}

/**
 * The cache's one read, to run before or with the data: the kept entry's sum, or without an entry
 * the epoch (then the data rides in the same snapshot). When the sum shows a change, the epoch
 * rides the data's first batch instead.
 */
const probeRead = (p: CacheProbe): BoundQuery => p.entry?.check ?? epochQuery();

/**
 * Declares a cached GET path whose reads ride with the token lookup: the cache's probe and,
 * unless a kept response may answer, the route's own `reads` (see `readAlongsideToken`; the route
 * finds its results on `c.var.alongside` as before).
 */
export function cachedAlongsideToken(path: string, reads?: Parameters<typeof readAlongsideToken>[1]): void {
  readAlongsideToken(path, (c, viewer) => {
    if (!cacheable(c)) return reads?.(c, viewer);
    const p = probe(c, viewer.tokenHash);
    c.set("renderCache", p);
    return [probeRead(p), ...((p.entry ? undefined : reads?.(c, viewer)) ?? [])];
  });
}

/**
 * `db` whose next batch also runs `lead` first (same round trip and snapshot), giving its result
 * to `got`. Batches started while that one runs wait for it, so none reads before `lead`.
 */
function withLeadingRead(db: Db, lead: BoundQuery, got: (r: RawResult) => void): Db {
  let leading: Promise<unknown> | undefined;
  const exec: Executor = {
    kind: db.exec.kind,
    rows: (native) => db.exec.rows(native),
    batch: async (queries) => {
      if (leading) {
        await leading.catch(() => {});
        return db.exec.batch(queries);
      }
      const run = db.exec.batch([lead.query, ...queries]);
      leading = run;
      const [first, ...rest] = await run;
      got(db.exec.rows(first));
      return rest;
    },
  };
  return Object.assign(Object.create(db) as Db, { exec });
}

/**
 * Answers a GET from a kept response while the counters it depends on are unchanged, or runs
 * `produce` (which names what it rendered on `deps`) and keeps its 200 response. `produce` must
 * read the database through `c.var.db` batches only (stores do), so that the epoch rides its
 * first batch. Returns `any`, as `ok()` does, for handlers typed against their OpenAPI responses.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function cachedRead(c: Ctx, produce: (deps: RenderDeps) => Promise<Response> | Response): Promise<any> {
  if (!cacheable(c)) return produce(new RenderDeps());
  const tokenHash = c.var.auth?.token.tokenHash;
  let state = c.get("renderCache");
  let read: RawResult | undefined;
  if (state) {
    // The probe's result comes first, the route's own reads after it.
    const [first, ...rest] = c.get("alongside") ?? [];
    read = first;
    c.set("alongside", rest.length ? rest : undefined);
  } else {
    state = probe(c, tokenHash);
    if (state.entry) [read] = await runBatch(c.var.db, [probeRead(state)]);
  }
  const entry = state.entry;
  let epoch = entry ? undefined : versionOf(read);
  const at = now(c);
  if (entry && versionOf(read) === entry.sum && at >= entry.readAt && at < entry.validUntil) {
    put(state.key, entry);
    return c.body(entry.body, 200, { "content-type": entry.contentType, "x-cache": "hit" });
  }
  const db = c.var.db;
  if (epoch === undefined) c.set("db", withLeadingRead(db, epochQuery(), (r) => (epoch = versionOf(r))));
  const deps = new RenderDeps();
  let res: Response;
  try {
    res = await produce(deps);
  } finally {
    c.set("db", db);
  }
  res.headers.set("x-cache", "miss");
  if (res.status === 200 && epoch !== undefined) {
    deps.add("viewer", c.var.auth?.user?.id).list(List.userVisibility).list(List.badges);
    const key = state.key;
    const readEpoch = epoch;
    const copy = res.clone();
    c.executionCtx.waitUntil(keep(db, key, deps, readEpoch, copy, at).catch(() => {}));
  }
  return res;
}

/** Keeps a response if nothing was written between its data read and the read of its counters. */
async function keep(db: Db, key: string, deps: RenderDeps, epoch: number, res: Response, readAt: number) {
  const body = new Uint8Array(await res.arrayBuffer());
  const check = versionSumQuery([...deps.shards]);
  const [e, sum] = await runBatch(db, [epochQuery(), check]);
  if (versionOf(e) !== epoch || versionOf(sum) === undefined) return;
  put(key, { check, sum: versionOf(sum)!, body, contentType: res.headers.get("content-type") ?? "application/json", readAt, validUntil: deps.validUntil });
}
