import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { runBatch } from "../../src/db/batch";
import { openDb } from "../../src/db";
import { interactionWrites } from "../../src/stores/interactions";
import { actor, appToken, call, makeApp, uniqueName } from "../support/client";
import { DB } from "../support/db";
import { jsonRows } from "../../src/db/dialect";
import { dbCallsOf } from "../support/fixtures";

// GET /users/me/interactions (issue 7, decisions §11): items recorded at write time by bookmarks,
// reposts, replies, follows and poll responses, merged per (action, object) while each new event
// is within 24 hours of the item's latest.

type Actor = Awaited<ReturnType<typeof actor>>;
const SCOPES = "write_post follow polls stream";
const HOUR = 3600;
const DAY = 24 * HOUR;
const isoOf = (t: number) => new Date(t * 1000).toISOString().slice(0, 19) + "Z";

// Each test moves on a clock of its own, far apart, so windows never overlap between tests.
let base = Math.floor(Date.now() / 1000);
const newEra = () => (base += 100 * DAY);

async function must(res: Promise<{ status: number; text: string; body: any }>, status = [200, 201]) {
  const r = await res;
  if (!status.includes(r.status)) throw new Error(`${r.status} ${r.text}`);
  return r.body;
}

const post = (a: Actor, text: string, now: number, extra: Record<string, unknown> = {}) =>
  must(call("POST", "/posts", { token: a.token, json: { text, ...extra }, now })).then((b) => b.data);
const bookmark = (a: Actor, postId: string, now: number) => must(call("PUT", `/posts/${postId}/bookmark`, { token: a.token, now }));
const unbookmark = (a: Actor, postId: string, now: number) => must(call("DELETE", `/posts/${postId}/bookmark`, { token: a.token, now }));
const repost = (a: Actor, postId: string, now: number) => must(call("PUT", `/posts/${postId}/repost`, { token: a.token, now }));
const follow = (a: Actor, userId: string, now: number) => must(call("PUT", `/users/${userId}/follow`, { token: a.token, now }));

async function feed(a: Actor, query = "") {
  const res = await call("GET", `/users/me/interactions${query}`, { token: a.token });
  expect(res.status, res.text).toBe(200);
  return res;
}
const summary = (res: { body: any }) =>
  (res.body.data as any[]).map((i) => ({ action: i.action, object: i.objects[0]?.id, users: i.users.map((u: any) => u.id) }));

describe("GET /users/me/interactions", () => {
  it("needs a user token: none → 401, an app token → 403", async () => {
    expect((await call("GET", "/users/me/interactions")).status).toBe(401);
    const res = await call("GET", "/users/me/interactions", { token: await appToken(await makeApp()) });
    expect(res.status).toBe(403);
    expect(res.body.meta.error_message).toMatch(/user token/);
  });

  it("is empty for a user nobody interacted with", async () => {
    const a = await actor(SCOPES);
    const res = await feed(a);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.more).toBe(false);
  });

  it("merges events of several users on one object within 24 hours of the latest; further apart is a new item", async () => {
    const t0 = newEra();
    const me = await actor(SCOPES);
    const others = await Promise.all([1, 2, 3, 4, 5].map(() => actor(SCOPES)));
    const [u1, u2, u3, u4, u5] = others;
    const p = await post(me, "bookmark me", t0);

    await bookmark(u1, p.id, t0 + HOUR);
    await bookmark(u2, p.id, t0 + 5 * HOUR);
    await bookmark(u3, p.id, t0 + 24 * HOUR); // 19 h after the latest: same item
    let res = await feed(me);
    expect(summary(res)).toEqual([{ action: "bookmark", object: p.id, users: [u3.user.id, u2.user.id, u1.user.id] }]);
    const item = res.body.data[0];
    expect(item.event_date).toBe(isoOf(t0 + 24 * HOUR));
    expect(item.pagination_id).toMatch(/^\d+$/);
    expect(res.body.meta).toMatchObject({ more: false, max_id: item.pagination_id, min_id: item.pagination_id });

    // The window follows the latest event: 47 h after the first, but 23 h after the latest.
    await bookmark(u4, p.id, t0 + 47 * HOUR);
    res = await feed(me);
    expect(summary(res)).toEqual([{ action: "bookmark", object: p.id, users: [u4.user.id, u3.user.id, u2.user.id, u1.user.id] }]);
    expect(Number(res.body.data[0].pagination_id)).toBeGreaterThan(Number(item.pagination_id));
    expect(res.body.data[0].event_date).toBe(isoOf(t0 + 47 * HOUR));

    // More than 24 hours after the latest: a new item, newest first.
    await bookmark(u5, p.id, t0 + 47 * HOUR + DAY + 1);
    // A user acting again inside the window is listed once, at their latest event.
    await unbookmark(u4, p.id, t0 + 48 * HOUR + DAY);
    await bookmark(u4, p.id, t0 + 49 * HOUR + DAY);
    res = await feed(me);
    expect(summary(res)).toEqual([
      { action: "bookmark", object: p.id, users: [u4.user.id, u5.user.id] },
      { action: "bookmark", object: p.id, users: [u4.user.id, u3.user.id, u2.user.id, u1.user.id] },
    ]);
    expect(res.body.data[0].event_date).toBe(isoOf(t0 + 49 * HOUR + DAY));
  });

  it("exactly 24 hours after the latest event still merges; one second more does not", async () => {
    const t0 = newEra();
    const me = await actor(SCOPES);
    const [u1, u2, u3] = await Promise.all([1, 2, 3].map(() => actor(SCOPES)));
    await follow(u1, me.user.id, t0);
    await follow(u2, me.user.id, t0 + DAY);
    await follow(u3, me.user.id, t0 + 2 * DAY + 1);
    const res = await feed(me);
    expect(summary(res)).toEqual([
      { action: "follow", object: me.user.id, users: [u3.user.id] },
      { action: "follow", object: me.user.id, users: [u2.user.id, u1.user.id] },
    ]);
  });

  it("keeps actions and objects apart; each action shows its object (the replied-to post for a reply)", async () => {
    const t0 = newEra();
    const me = await actor(SCOPES);
    const [u1, u2] = await Promise.all([1, 2].map(() => actor(SCOPES)));
    const p1 = await post(me, "first post", t0);
    const p2 = await post(me, "second post", t0 + 1);
    await bookmark(u1, p1.id, t0 + 10);
    await repost(u1, p1.id, t0 + 20);
    await bookmark(u2, p2.id, t0 + 30);
    const reply = await post(u2, "a reply", t0 + 40, { reply_to: p1.id });
    await follow(u2, me.user.id, t0 + 50);
    // Reposting a repost acts on the original.
    const rp = (await call("GET", `/users/${u1.user.id}/posts?count=1`)).body.data[0];
    await repost(u2, rp.id, t0 + 60);

    await call("GET", "/token", { token: me.token }); // the token's first use today (real clock) records activity
    const res = await feed(me);
    expect(summary(res)).toEqual([
      { action: "repost", object: p1.id, users: [u2.user.id, u1.user.id] },
      { action: "follow", object: me.user.id, users: [u2.user.id] },
      { action: "reply", object: p1.id, users: [u2.user.id] },
      { action: "bookmark", object: p2.id, users: [u2.user.id] },
      { action: "bookmark", object: p1.id, users: [u1.user.id] },
    ]);
    const [rep, fol, rpl] = res.body.data;
    // Objects are full Post / User objects as the caller sees them.
    expect(rep.objects[0]).toMatchObject({
      id: p1.id,
      content: { text: "first post" },
      user: { id: me.user.id },
      counts: { reposts: 2, replies: 1, bookmarks: 1 },
    });
    expect(fol.objects[0]).toMatchObject({ id: me.user.id, username: me.user.username });
    expect(rpl.objects[0].id).toBe(p1.id);
    expect(rpl.objects[0].id).not.toBe(reply.id);
    expect(rep.users[0]).toMatchObject({ id: u2.user.id, username: u2.user.username, follows_you: true });
    expect(Object.keys(rep).sort()).toEqual(["action", "event_date", "objects", "pagination_id", "users"]);
    // The whole page, items and what they embed, in one round trip with the token lookup.
    expect(dbCallsOf(res)).toBe(1);
  });

  it("does not record actions on one's own objects", async () => {
    const t0 = newEra();
    const me = await actor(SCOPES);
    const p = await post(me, "my own", t0);
    await bookmark(me, p.id, t0 + 1);
    await post(me, "replying to myself", t0 + 2, { reply_to: p.id });
    expect((await feed(me)).body.data).toEqual([]);
  });

  it("filters and exclude select actions; exclude is ignored when filters is set; unknown actions are a 400", async () => {
    const t0 = newEra();
    const me = await actor(SCOPES);
    const [u1, u2] = await Promise.all([1, 2].map(() => actor(SCOPES)));
    const p = await post(me, "filter me", t0);
    await bookmark(u1, p.id, t0 + 10);
    await repost(u1, p.id, t0 + 20);
    await post(u2, "reply", t0 + 30, { reply_to: p.id });
    await follow(u2, me.user.id, t0 + 40);
    const actions = async (q: string) => ((await feed(me, q)).body.data as any[]).map((i) => i.action);

    expect(await actions("")).toEqual(["follow", "reply", "repost", "bookmark"]);
    expect(await actions("?filters=follow")).toEqual(["follow"]);
    expect(await actions("?filters=bookmark,reply")).toEqual(["reply", "bookmark"]);
    expect(await actions("?filters=bookmark,%20repost,")).toEqual(["repost", "bookmark"]);
    expect(await actions("?exclude=follow,reply")).toEqual(["repost", "bookmark"]);
    expect(await actions("?exclude=bookmark,repost,reply,follow,poll_response")).toEqual([]);
    expect(await actions("?filters=repost&exclude=repost")).toEqual(["repost"]);
    expect(await actions("?filters=poll_response")).toEqual([]);
    // exclude is not even read when filters is set.
    expect(await actions("?filters=follow&exclude=nonsense")).toEqual(["follow"]);
    for (const q of ["?filters=like", "?exclude=follow,star", "?filters=Follow"]) {
      const res = await call("GET", `/users/me/interactions${q}`, { token: me.token });
      expect(res.status, q).toBe(400);
      expect(res.body.meta.error_message).toMatch(q.startsWith("?filters") ? /'filters'/ : /'exclude'/);
    }
    // Filtered pages paginate too.
    const first = await feed(me, "?filters=bookmark,repost,reply&count=1");
    expect(first.body.data.map((i: any) => i.action)).toEqual(["reply"]);
    expect(first.body.meta.more).toBe(true);
    const next = await feed(me, `?filters=bookmark,repost,reply&count=1&before_id=${first.body.meta.min_id}`);
    expect(next.body.data.map((i: any) => i.action)).toEqual(["repost"]);
  });

  it("paginates by pagination_id (count, before_id, since_id, oldest first with a negative count)", async () => {
    const t0 = newEra();
    const me = await actor(SCOPES);
    const others = await Promise.all([1, 2, 3, 4, 5].map(() => actor(SCOPES)));
    const posts = [];
    for (let i = 0; i < 5; i++) posts.push(await post(me, `post ${i}`, t0 + i));
    for (let i = 0; i < 5; i++) await bookmark(others[i], posts[i].id, t0 + 100 + i);
    const all = await feed(me);
    const pids = all.body.data.map((i: any) => i.pagination_id);
    expect(pids).toHaveLength(5);
    expect([...pids].sort((a: string, b: string) => Number(b) - Number(a))).toEqual(pids);
    expect(all.body.data.map((i: any) => i.objects[0].id)).toEqual(posts.map((p) => p.id).reverse());

    const page1 = await feed(me, "?count=2");
    expect(page1.body.data.map((i: any) => i.pagination_id)).toEqual(pids.slice(0, 2));
    expect(page1.body.meta).toEqual({ code: 200, more: true, max_id: pids[0], min_id: pids[1] });
    const page2 = await feed(me, `?count=2&before_id=${page1.body.meta.min_id}`);
    expect(page2.body.data.map((i: any) => i.pagination_id)).toEqual(pids.slice(2, 4));
    const page3 = await feed(me, `?count=2&before_id=${page2.body.meta.min_id}`);
    expect(page3.body.data.map((i: any) => i.pagination_id)).toEqual(pids.slice(4));
    expect(page3.body.meta.more).toBe(false);
    const newer = await feed(me, `?since_id=${pids[2]}`);
    expect(newer.body.data.map((i: any) => i.pagination_id)).toEqual(pids.slice(0, 2));
    const oldest = await feed(me, "?count=-2");
    expect(oldest.body.data.map((i: any) => i.pagination_id)).toEqual([pids[3], pids[4]]);
    expect(oldest.body.meta.more).toBe(true);
    const bad = await call("GET", "/users/me/interactions?before_id=marker", { token: me.token });
    expect(bad.status).toBe(400);
  });

  it("still shows a bookmarked post after it is deleted", async () => {
    const t0 = newEra();
    const me = await actor(SCOPES);
    const u1 = await actor(SCOPES);
    const p = await post(me, "soon gone", t0);
    await bookmark(u1, p.id, t0 + 10);
    await must(call("DELETE", `/posts/${p.id}`, { token: me.token, now: t0 + 20 }));
    const res = await feed(me);
    expect(res.body.data).toHaveLength(1);
    const obj = res.body.data[0].objects[0];
    expect(obj).toMatchObject({ id: p.id, is_deleted: true });
    expect(obj).not.toHaveProperty("content");
    expect(res.body.data[0].users.map((u: any) => u.id)).toEqual([u1.user.id]);
  });

  it("poll responses: the abbreviated poll; users listed for a named poll, none for an anonymous one", async () => {
    const t0 = newEra();
    const me = await actor(SCOPES);
    const [u1, u2] = await Promise.all([1, 2].map(() => actor(SCOPES)));
    const create = (prompt: string, anonymous: boolean) =>
      must(
        call("POST", "/polls", {
          token: me.token,
          json: { type: "com.example.poll", prompt, options: ["yes", "no"], duration: 60, is_anonymous: anonymous },
          now: t0,
        }),
      ).then((b) => b.data);
    const named = await create("Named?", false);
    const anon = await create("Anonymous?", true);
    const respond = (a: Actor, poll: any, positions: number[], now: number) =>
      must(call("PUT", `/polls/${poll.id}/response`, { token: a.token, json: { positions, poll_token: poll.poll_token }, now }));
    await respond(u1, named, [1], t0 + 10);
    await respond(u2, named, [2], t0 + 20);
    await respond(u1, anon, [1], t0 + 30);
    await respond(u2, anon, [2], t0 + 40);
    // Changing one's response is not a new interaction.
    await respond(u2, named, [1], t0 + 50);

    const res = await feed(me, "?filters=poll_response");
    expect(res.body.data).toHaveLength(2);
    const [a, n] = res.body.data;
    expect(a.objects).toEqual([
      {
        id: anon.id,
        prompt: "Anonymous?",
        closed_at: anon.closed_at,
        poll_token: anon.poll_token,
        options: [
          { text: "yes", position: 1 },
          { text: "no", position: 2 },
        ],
      },
    ]);
    expect(a.users).toEqual([]);
    expect(a.event_date).toBe(isoOf(t0 + 40));
    expect(n.objects[0]).toMatchObject({ id: named.id, prompt: "Named?" });
    expect(n.users.map((u: any) => u.id)).toEqual([u2.user.id, u1.user.id]);
    expect(n.event_date).toBe(isoOf(t0 + 20));

    // A deleted poll's item is left out.
    await must(call("DELETE", `/polls/${named.id}`, { token: me.token, now: t0 + 60 }));
    const after = await feed(me, "?filters=poll_response");
    expect(after.body.data.map((i: any) => i.objects[0].id)).toEqual([anon.id]);
  });

  it("lists at most 50 users per item, the most recent first, each once", async () => {
    const t0 = newEra();
    const me = await actor(SCOPES);
    // 60 followers straight into the database (logging 60 users in through OAuth is slow), their
    // follows recorded by the same interactionWrites the follow endpoint batches.
    const db = openDb(env);
    const names = Array.from({ length: 60 }, () => uniqueName("fan"));
    const rows = await runBatch(db, [
      sql`INSERT INTO users (username, password_hash, created_at) SELECT j.value, 'x', ${t0} FROM ${jsonRows(names, "j", "text")} RETURNING id`,
    ]);
    const fans = (rows[0].results as { id: number }[]).map((r) => r.id).sort((a, b) => a - b);
    for (let i = 0; i < fans.length; i++) {
      await runBatch(db, interactionWrites({ userId: Number(me.user.id), action: "follow", objectId: Number(me.user.id), actorId: fans[i], at: t0 + i * 60 }));
    }
    // The oldest fan follows again (unfollow, follow): now the most recent, listed once.
    await runBatch(db, interactionWrites({ userId: Number(me.user.id), action: "follow", objectId: Number(me.user.id), actorId: fans[0], at: t0 + 3600 * 2 }));
    const res = await feed(me);
    expect(res.body.data).toHaveLength(1);
    const users = res.body.data[0].users.map((u: any) => Number(u.id));
    expect(users).toHaveLength(50);
    expect(users).toEqual([fans[0], ...fans.slice(11).reverse()]);
  });
});
