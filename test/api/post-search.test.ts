import { beforeAll, describe, expect, it } from "vitest";
import { actor, call } from "../support/client";
import { createPost, idsOf } from "../support/fixtures";
import { DB } from "../support/db";

// GET /posts/search: words, order, keyset pages of the ranking, every filter (issue 17).

const SCOPES = "write_post stream follow";
type Actor = Awaited<ReturnType<typeof actor>>;

const post = (a: Actor, text: string, extra: Record<string, unknown> = {}) => createPost(a, text, extra);
const search = async (q: string, token?: string) => {
  const res = await call("GET", `/posts/search?${q}`, { token });
  if (res.status !== 200) throw new Error(`search ${q}: ${res.status} ${res.text}`);
  return idsOf(res);
};

describe("GET /posts/search", { timeout: 60_000 }, () => {
  let a: Actor, b: Actor, feed: Actor;
  const p: Record<string, any> = {};
  beforeAll(async () => {
    [a, b, feed] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES, { type: "feed" })]);
    p.running = await post(a, "Running shoes for the marathon #sport https://shop.example.com/shoes");
    p.runner = await post(b, `@${a.user.username} the runner runs every morning`);
    p.reply = await post(b, "great marathon tips", { reply_to: p.running.id });
    p.nsfw = await post(a, "marathon after-party", { is_nsfw: true });
    p.feed = await post(feed, "Marathon results are in #Sport", { raw: { "io.example.results": [{ place: 1 }] } });
    p.gone = await post(a, "deleted marathon post");
    await call("DELETE", `/posts/${p.gone.id}`, { token: a.token });
    await call("PUT", `/posts/${p.running.id}/repost`, { token: b.token });
  }, 60_000);

  it("matches every word, stemmed, live original posts only; order=id is newest first", async () => {
    expect(await search("q=marathon&order=id")).toEqual([p.feed.id, p.nsfw.id, p.reply.id, p.running.id]);
    expect(await search("q=running&order=id")).toEqual([p.runner.id, p.running.id]);
    expect(await search("q=marathon shoes")).toEqual([p.running.id]);
    expect(await search("q=nothing+matches+this")).toEqual([]);
    expect(await search(`q=${encodeURIComponent('"marathon" OR NOT -(x')}`)).toEqual([]);
  });

  it("order=relevance (the default) ranks and pages by keyset on the ranking", async () => {
    const ranked = await search("q=marathon");
    expect([...ranked].sort()).toEqual([p.feed.id, p.nsfw.id, p.reply.id, p.running.id].sort());
    const first = await call("GET", "/posts/search?q=marathon&count=2");
    expect(idsOf(first)).toEqual(ranked.slice(0, 2));
    expect(first.body.meta.more).toBe(true);
    const second = await call("GET", `/posts/search?q=marathon&count=2&before_id=${first.body.meta.min_id}`);
    expect(idsOf(second)).toEqual(ranked.slice(2, 4));
    expect(second.body.meta.more).toBe(false);
    expect(second.body.data.every((x: any) => x.pagination_id === x.id)).toBe(true);
    expect(Number(first.headers.get("x-debug-db-calls"))).toBe(1);
  });

  it("pages the same with the actors' statement (the page as SQL, not compiled per shape)", async () => {
    for (const q of ["q=marathon&order=id", "q=marathon", "tags=sport&order=id", "q=marathon&count=2&before_id=" + p.reply.id]) {
      expect(await search(`${q}&include_reposted_by=1`), q).toEqual(await search(q));
    }
  });

  it("filters", async () => {
    const cases: [string, string[]][] = [
      [`q=marathon&creator_id=${a.user.id}&order=id`, [p.nsfw.id, p.running.id]],
      [`q=marathon&creator_id=@${b.user.username}`, [p.reply.id]],
      [`q=marathon&exclude_user_ids=${a.user.id},${feed.user.id}`, [p.reply.id]],
      ["tags=sport&order=id", [p.feed.id, p.running.id]],
      ["q=marathon&is_reply=1", [p.reply.id]],
      [`reply_to=${p.running.id}`, [p.reply.id]],
      [`thread_id=${p.running.id}&order=id`, [p.reply.id, p.running.id]],
      ["q=marathon&is_nsfw=0&order=id", [p.feed.id, p.reply.id, p.running.id]],
      ["q=marathon&user_types=feed", [p.feed.id]],
      ["url_domains=shop.example.com", [p.running.id]],
      ["urls=https://shop.example.com/shoes", [p.running.id]],
      ["raw_types=io.example.results", [p.feed.id]],
      [`mentions=${a.user.username}`, [p.runner.id]],
      [`leading_mentions=@${a.user.username}`, [p.runner.id]],
      ["q=runs&is_directed=1", [p.runner.id]],
      ["q=runner&has_mentions=0", []],
      [`q=runner&has_mentions=1&mentions=nobody`, [p.runner.id]],
      ["q=marathon&created_after=2100-01-01T00:00:00Z", []],
      [`q=marathon&client_id=${feed.app.client_id}`, [p.feed.id]],
    ];
    for (const [q, want] of cases) expect(await search(q), q).toEqual(want);
    await call("PUT", `/posts/${p.runner.id}`, { token: b.token, json: { text: `@${a.user.username} the runner runs every evening` } });
    expect(await search("is_revised=1")).toEqual([p.runner.id]);
    expect(await search("q=morning")).toEqual([]);
    expect(await search("q=evening")).toEqual([p.runner.id]);
  });

  it("without parameters lists every live post of every user type, newest first; mutes apply", async () => {
    const all = await search("count=200");
    expect(all).toContain(p.feed.id);
    expect(all).not.toContain(p.gone.id);
    const viewer = await actor(SCOPES);
    await call("PUT", `/users/${feed.user.id}/mute`, { token: viewer.token });
    expect(await search("q=marathon&user_types=feed", viewer.token)).toEqual([]);
    expect(await search("q=marathon&user_types=feed&include_muted=1", viewer.token)).toEqual([p.feed.id]);
  });

  it("refuses bad parameters with a 400 naming them", async () => {
    for (const [q, name] of [
      ["order=best", "'order'"],
      ["file_kinds=movie", "'file_kinds'"],
      ["user_types=robot", "'user_types'"],
      ["is_reply=maybe", "'is_reply'"],
      ["created_before=soon", "'created_before'"],
      ["exclude_user_ids=a,b", "'exclude_user_ids'"],
      ["creator_id=someone", "'creator_id'"],
      ["thread_id=x", "'thread_id'"],
      [`q=${Array.from({ length: 33 }, (_, i) => `w${i}`).join("+")}`, "'q'"],
    ]) {
      const res = await call("GET", `/posts/search?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.meta.error_message).toContain(name);
    }
  });
});

// Last in the file: its thousands of posts would crowd the lists of the tests above.
describe("GET /posts/search over many posts", { timeout: 120_000 }, () => {
  it("ranks the newest matches however many posts came after them", async () => {
    const [a, b] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const old = await post(a, "a quokka at dawn");
    const appId = (await DB.prepare("select app_id from posts where id = ?").bind(Number(old.id)).first<{ app_id: number }>("app_id"))!;
    for (let start = 0; start < 5200; start += 520) {
      const rows = Array.from({ length: 520 }, (_, i) => `(${Number(b.user.id)}, ${appId}, 0, 'filler post ${start + i}', 1000, 1000)`);
      await DB.prepare(`insert into posts (user_id, app_id, thread_id, text, created_at, revised_at) values ${rows.join(", ")}`).run();
    }
    await DB.prepare("update posts set thread_id = id where thread_id = 0").run();
    expect(await search("q=quokka")).toEqual([old.id]);
    expect(await search("q=quokka&order=id")).toEqual([old.id]);
    const fresh = await post(a, "another quokka");
    expect((await search("q=quokka")).sort()).toEqual([old.id, fresh.id].sort());
    // A word of every filler post: the window is the newest matches, the old post is not among them.
    expect(await search("q=filler&count=5&order=id")).toHaveLength(5);
    expect(await search("q=filler")).not.toContain(old.id);
  });
});
