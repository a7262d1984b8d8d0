import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { actor, call, type ApiResponse } from "../support/client";

// Reads that scale out with read-your-writes (docs/postgres.md, "Read replicas"): every response carries the
// request's bookmark (X-Db-Bookmark); a client that sends it back reads at least its own writes.
// D1 (Miniflare has no replicas): the bookmark's round trip and the session each request starts.
// Postgres: DATABASE_READ_URL points at a second database that nothing updates (scripts/test.mjs),
// a replica lagging forever until PG_REPLICA_COPY copies the primary into it.

const postgres = env.DB_BACKEND === "postgres";
const replica = postgres && !!env.DATABASE_READ_URL;
const BOOKMARK = "X-Db-Bookmark";
const bookmarkOf = (res: ApiResponse) => res.headers.get(BOOKMARK);
const withBookmark = (bookmark: string | null | undefined): Record<string, string> => (bookmark ? { [BOOKMARK]: bookmark } : {});

/**
 * The replica becomes a copy of the primary as it is now; from then on it lags. Each token has been
 * used once before, so that its requests today have no daily activity left to write (a write would
 * send the rest of the request to the primary).
 */
async function copyPrimaryToReplica(...tokens: string[]) {
  // With a bookmark: the replica (not a standby) cannot vouch for any position, so these read the primary.
  for (const token of tokens) expect((await call("GET", "/users/me", { token, headers: { [BOOKMARK]: "0/1" } })).status).toBe(200);
  const res = await env.PG_REPLICA_COPY!.fetch("http://replica/copy", { method: "POST" });
  expect(await res.text()).toBe("copied");
}

describe("bookmarks on both backends", () => {
  it("CORS lets a browser send the bookmark and read it", async () => {
    const pre = await call("OPTIONS", "/posts", {
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-db-bookmark" },
    });
    expect(pre.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("x-db-bookmark");
    const res = await call("GET", "/posts/streams/global", { headers: { Origin: "https://app.example" } });
    expect(res.headers.get("Access-Control-Expose-Headers")?.toLowerCase()).toContain("x-db-bookmark");
  });

  it("a malformed bookmark is no error: the request reads from the primary", async () => {
    const a = await actor("write_post");
    const post = await call("POST", "/posts", { token: a.token, json: { text: "bookmarked" } });
    expect(post.status, post.text).toBe(201);
    for (const bad of ["not a bookmark", "x".repeat(300), "0/0/0", "'; drop table posts; --"]) {
      const res = await call("GET", `/posts/${post.body.data.id}`, { token: a.token, headers: { [BOOKMARK]: bad } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.content.text).toBe("bookmarked");
      if (!postgres) expect(res.headers.get("X-Debug-Db-Session")).toBe("first-primary");
    }
  });
});

describe.skipIf(postgres)("D1 sessions", () => {
  it("a write returns a bookmark; sent back, it starts the next request's session and comes back no older", async () => {
    const a = await actor("write_post");
    const post = await call("POST", "/posts", { token: a.token, json: { text: "mine" } });
    expect(post.status, post.text).toBe(201);
    const b1 = bookmarkOf(post);
    expect(b1).toMatch(/^[0-9a-f]+(-[0-9a-f]+)+$/);
    expect(post.headers.get("X-Debug-Db-Session")).toBe("first-primary");
    const read = await call("GET", `/posts/${post.body.data.id}`, { token: a.token, headers: withBookmark(b1) });
    expect(read.status, read.text).toBe(200);
    expect(read.body.data.content.text).toBe("mine");
    expect(read.headers.get("X-Debug-Db-Session")).toBe("bookmark");
    // Bookmarks order as strings; the session never goes back before the one it started from.
    expect(bookmarkOf(read)! >= b1!).toBe(true);
    const later = await call("POST", "/posts", { token: a.token, json: { text: "later" }, headers: withBookmark(bookmarkOf(read)) });
    expect(later.status).toBe(201);
    expect(bookmarkOf(later)! > b1!).toBe(true);
  });

  it("a read without a bookmark may start on any replica; a write without one starts on the primary", async () => {
    const a = await actor("write_post");
    const read = await call("GET", "/posts/streams/global", { token: a.token });
    expect(read.status).toBe(200);
    expect(read.headers.get("X-Debug-Db-Session")).toBe("first-unconstrained");
    expect(bookmarkOf(read)).toMatch(/^[0-9a-f]+(-[0-9a-f]+)+$/);
    const write = await call("POST", "/posts", { token: a.token, json: { text: "w" } });
    expect(write.headers.get("X-Debug-Db-Session")).toBe("first-primary");
  });
});

describe.skipIf(!replica)("Postgres read replica (a stale copy stands in for a lagging replica)", () => {
  it("a client reads its own write with its bookmark, from the primary; without it, the replica's stale copy", async () => {
    const writer = await actor("write_post");
    const other = await actor();
    await copyPrimaryToReplica(writer.token, other.token);

    const post = await call("POST", "/posts", { token: writer.token, json: { text: "read your writes" } });
    expect(post.status, post.text).toBe(201);
    const bookmark = bookmarkOf(post);
    expect(bookmark).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const path = `/posts/${post.body.data.id}`;

    const own = await call("GET", path, { token: writer.token, headers: withBookmark(bookmark) });
    expect(own.status, own.text).toBe(200);
    expect(own.body.data.content.text).toBe("read your writes");
    expect(bookmarkOf(own)).toBe(bookmark); // kept for the client's next request

    // The replica is used: without the bookmark the post is not there yet.
    const stale = await call("GET", path, { token: other.token });
    expect(stale.headers.get("X-Debug-Db-Reads")).toBe("replica");
    expect(stale.status, stale.text).toBe(404);
    const staleOwn = await call("GET", path, { token: writer.token });
    expect(staleOwn.status).toBe(404);
    expect(own.headers.get("X-Debug-Db-Reads")).toBe("primary");

    // A write needs no bookmark to see the latest state: it runs on the primary (a reply to the new post).
    const reply = await call("POST", "/posts", { token: writer.token, json: { text: "reply", reply_to: post.body.data.id } });
    expect(reply.status, reply.text).toBe(201);

    // Once the replica has the post, readers without a bookmark see it too.
    await copyPrimaryToReplica(other.token);
    const caughtUp = await call("GET", path, { token: other.token });
    expect(caughtUp.status, caughtUp.text).toBe(200);
  });

  it("lists read with a bookmark show the client's new post; without one they show the replica's", async () => {
    const writer = await actor("write_post");
    await copyPrimaryToReplica(writer.token);
    const post = await call("POST", "/posts", { token: writer.token, json: { text: "in my list" } });
    expect(post.status).toBe(201);
    const stale = await call("GET", `/users/me/posts`, { token: writer.token });
    expect(stale.status, stale.text).toBe(200);
    expect(stale.body.data.map((p: { id: string }) => p.id)).not.toContain(post.body.data.id);
    const mine = await call("GET", `/users/me/posts`, { token: writer.token, headers: withBookmark(bookmarkOf(post)) });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data.map((p: { id: string }) => p.id)).toContain(post.body.data.id);
  });

  it("a token issued after the replica's copy is found on the primary, not refused: no bookmark travels with an OAuth redirect", async () => {
    const early = await actor();
    await copyPrimaryToReplica(early.token);
    const fresh = await actor(); // its token exists only on the primary
    const res = await call("GET", "/users/me", { token: fresh.token });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("X-Debug-Db-Reads")).toBe("primary"); // the replica missed it (the request then stays on the primary)
    // An unknown token is still a 401 (after both looked).
    expect((await call("GET", "/users/me", { token: "no-such-token" })).status).toBe(401);
  });
});
