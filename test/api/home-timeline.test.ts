import { describe, expect, it } from "vitest";
import { DB } from "../support/db";
import { actor, call } from "../support/client";
import { createPost } from "../support/fixtures";

// Home timelines fanned out on write (issue 27): a follow brings the followed user's earlier posts
// in, an unfollow or a block takes them out, removed reposts leave, and a merged author's posts
// (not fanned out) are merged in at read time, paged both ways like the rest.

const SCOPES = "write_post stream follow";
type Actor = Awaited<ReturnType<typeof actor>>;

const post = async (a: Actor, text: string, extra: Record<string, unknown> = {}) => (await createPost(a, text, extra)).id as string;
const ids = (res: { status: number; text: string; body: any }) => {
  expect(res.status, res.text).toBe(200);
  return (res.body.data as any[]).map((p) => p.id as string);
};
const home = (a: Actor, query = "", stream = "me") => call("GET", `/posts/streams/${stream}${query}`, { token: a.token }).then(ids);
const homeRows = async (a: Actor) =>
  (await DB.prepare("select post_id from home_items where user_id = ? order by post_id").bind(Number(a.user.id)).all<{ post_id: number }>()).results.map((r) =>
    String(r.post_id),
  );
/** Reposts `postId` as `a`; the repost's id. */
async function repost(a: Actor, postId: string) {
  expect((await call("PUT", `/posts/${postId}/repost`, { token: a.token })).status).toBe(201);
  return (await home(a, "?count=1"))[0];
}
const follow = (a: Actor, b: Actor) => call("PUT", `/users/${b.user.id}/follow`, { token: a.token });
const unfollow = (a: Actor, b: Actor) => call("DELETE", `/users/${b.user.id}/follow`, { token: a.token });

describe("home timelines", { timeout: 60_000 }, () => {
  it("a follow brings the followed user's earlier posts and reposts in; later ones fan out; an unfollow takes them out", async () => {
    const [a, b, c] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    const mine = await post(a, "mine");
    const b1 = await post(b, "b one");
    const c1 = await post(c, "c one");
    const b2 = await post(b, "b two");
    const bRepost = await repost(b, c1);
    expect(await home(a)).toEqual([mine]);

    expect((await follow(a, b)).status).toBe(200);
    expect(await home(a)).toEqual([bRepost, b2, b1, mine]);
    const b3 = await post(b, "b three");
    expect(await home(a)).toEqual([b3, bRepost, b2, b1, mine]);
    expect(await home(a, `?since_id=${b1}&before_id=${b3}`)).toEqual([bRepost, b2]);
    expect(await home(a, "?count=-2")).toEqual([b1, mine]); // the oldest, shown newest first

    // A removed repost leaves the timeline and its rows.
    await call("DELETE", `/posts/${c1}/repost`, { token: b.token });
    expect(await home(a)).toEqual([b3, b2, b1, mine]);
    expect(await homeRows(a)).not.toContain(bRepost);

    expect((await unfollow(a, b)).status).toBe(200);
    expect(await home(a)).toEqual([mine]);
    expect(await homeRows(a)).toEqual([mine]);
    expect(await home(b)).toEqual([b3, b2, b1]);
  });

  it("a block either way ends the follow and takes the posts out; a deleted original takes its reposts out", async () => {
    const [a, b, c] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    const c1 = await post(c, "c one");
    await follow(a, b);
    await follow(a, c);
    const b1 = await post(b, "b one");
    const bRepost = await repost(b, c1);
    expect(await home(a)).toEqual([bRepost, b1, c1]);
    await call("DELETE", `/posts/${c1}`, { token: c.token });
    expect(await home(a)).toEqual([b1, c1]);
    expect(await home(a, "?include_deleted=0")).toEqual([b1]);
    expect(await homeRows(a)).not.toContain(bRepost);
    expect((await call("PUT", `/users/${a.user.id}/block`, { token: b.token })).status).toBe(200);
    expect(await home(a)).toEqual([c1]);
    expect(await homeRows(a)).toEqual([c1]);
  });

  it("leaves out a repost of a muted author's post (unless asked for) and of one by a user who blocks the viewer", async () => {
    const [a, b, c, d] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    await follow(a, b);
    const c1 = await post(c, "c one");
    const d1 = await post(d, "d one");
    const b1 = await post(b, "b one");
    const cRepost = await repost(b, c1);
    const dRepost = await repost(b, d1);
    expect(await home(a)).toEqual([dRepost, cRepost, b1]);
    await call("PUT", `/users/${c.user.id}/mute`, { token: a.token });
    expect(await home(a)).toEqual([dRepost, b1]);
    expect(await home(a, "?include_muted=1")).toEqual([dRepost, cRepost, b1]);
    expect((await call("PUT", `/users/${a.user.id}/block`, { token: d.token })).status).toBe(200);
    expect(await home(a, "?include_muted=1")).toEqual([cRepost, b1]);
    expect(await home(a)).toEqual([b1]);
  });

  // On Postgres a page finds the merged authors' posts one of two ways, chosen by their post
  // counts: each author's own walk, or one newest-first walk of all posts when they write most of
  // them (here: their post count raised, as a prolific author's would be). Both must give the same
  // pages (D1 merges the authors' walks either way).
  for (const way of ["each author's walk", "one newest-first walk"]) {
    it(`merges a merged author's posts in at read time (${way}), paged both ways, under the list's rules`, async () => {
      const [a, big, c, d] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
      await follow(a, c);
      const early = await post(big, "before the follow");
      // More followers than a post fans out to: the follow makes `big` a merged author.
      await DB.prepare("update users set followers = 6000 where id = ?").bind(Number(big.user.id)).run();
      if (way === "one newest-first walk") await DB.prepare("update users set posts = 10000000 where id = ?").bind(Number(big.user.id)).run();
      expect((await follow(a, big)).status).toBe(200);
      expect((await DB.prepare("select user_id from merged_authors where user_id = ?").bind(Number(big.user.id)).all()).results).toHaveLength(1);

      const posts: string[] = [early];
      const bigs: string[] = [early];
      const cs: string[] = [];
      for (let i = 0; i < 4; i++) {
        bigs.push(await post(big, `big ${i}`));
        cs.push(await post(c, `c ${i}`));
        posts.push(bigs[bigs.length - 1], cs[cs.length - 1]);
      }
      const reply = await post(big, "a reply", { reply_to: cs[0] });
      bigs.push(reply);
      const mention = await post(d, `@${a.user.username} hello`);
      posts.push(reply);
      const newest = [...posts].reverse();
      // Nothing of big's was fanned out to a: their rows are their own posts only elsewhere.
      expect((await homeRows(a)).filter((id) => bigs.includes(id))).toEqual([]);

      expect(await home(a)).toEqual(newest);
      expect(await home(a, "?count=3")).toEqual(newest.slice(0, 3));
      expect(await home(a, `?count=3&before_id=${newest[2]}`)).toEqual(newest.slice(3, 6));
      expect(await home(a, `?count=-3&since_id=${newest[7]}`)).toEqual(newest.slice(4, 7));
      expect(await home(a, "?count=-2")).toEqual([bigs[1], early]);
      expect(await home(a, "?include_replies=0&count=2")).toEqual(newest.slice(1, 3));
      expect(await home(a, "", "unified")).toEqual([mention, ...newest]);

      // Muted: out, unless asked for; unfollowed: out.
      await call("PUT", `/users/${big.user.id}/mute`, { token: a.token });
      expect(await home(a)).toEqual([...cs].reverse());
      expect(await home(a, "?include_muted=1")).toEqual(newest);
      await call("DELETE", `/users/${big.user.id}/mute`, { token: a.token });
      await unfollow(a, big);
      expect(await home(a)).toEqual([...cs].reverse());
      // The merged author's own timeline has their posts (their own rows are always written).
      expect(await home(big)).toEqual([...bigs].reverse());
    });
  }

  it("merges several merged authors' posts in id order, paged both ways, without a muted user's post they reposted", async () => {
    const [a, big1, big2, c, m, x] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    // big1's first posts are fanned out to a (one mentions a), then big1 becomes a merged author.
    expect((await follow(a, big1)).status).toBe(200);
    const all = [await post(big1, "fanned out"), await post(big1, `@${a.user.username} fanned out`)];
    expect(await homeRows(a)).toEqual(all);
    for (const big of [big1, big2]) await DB.prepare("update users set followers = 6000 where id = ?").bind(Number(big.user.id)).run();
    expect((await follow(x, big1)).status).toBe(200);
    for (const b of [big2, c]) expect((await follow(a, b)).status).toBe(200);
    const merged = await DB.prepare("select user_id from merged_authors where user_id in (?, ?)").bind(Number(big1.user.id), Number(big2.user.id)).all();
    expect(merged.results).toHaveLength(2);
    await call("PUT", `/users/${m.user.id}/mute`, { token: a.token });
    const mPost = await post(m, "muted");
    let mRepost = "";
    for (let i = 0; i < 3; i++) {
      all.push(await post(big1, `big1 ${i}`), await post(big2, `big2 ${i}`), await post(big2, `big2 ${i}b`));
      if (i === 1) all.push((mRepost = await repost(big1, mPost)));
      all.push(await post(c, `c ${i}`), await post(big1, `big1 ${i}b`));
    }
    const listed = all.filter((id) => id !== mRepost); // a muted user's post, reposted
    const newest = [...listed].reverse();
    expect(await home(a)).toEqual(newest);
    expect(await home(a, "?include_muted=1")).toEqual([...all].reverse());
    // Two at a time, newest first (before_id) and oldest first (since_id; each page shown newest first).
    const pages = async (oldestFirst: boolean, stream = "me") => {
      const seen: string[] = [];
      for (let last = ""; ; ) {
        const bound = last ? (oldestFirst ? `&since_id=${last}` : `&before_id=${last}`) : "";
        const page = await home(a, `?count=${oldestFirst ? -2 : 2}${bound}`, stream);
        if (!page.length) return seen;
        seen.push(...(oldestFirst ? [...page].reverse() : page));
        last = seen.at(-1)!;
      }
    };
    expect(await pages(false)).toEqual(newest);
    expect(await pages(true)).toEqual(listed);
    expect(await pages(false, "unified")).toEqual(newest);
    expect(await pages(true, "unified")).toEqual(listed);
    expect(await home(a, `?since_id=${listed[2]}&before_id=${listed[12]}`)).toEqual(listed.slice(3, 12).reverse());
    expect(await home(a, `?count=-4&since_id=${listed[2]}&before_id=${listed[12]}`)).toEqual(listed.slice(3, 7).reverse());
    expect(await home(a, `?count=4&since_id=${listed[2]}&before_id=${listed[12]}`)).toEqual(listed.slice(8, 12).reverse());
  });

  it("unified: mentions by users not followed, once when also followed", async () => {
    const [a, b, c] = await Promise.all([actor(SCOPES), actor(SCOPES), actor(SCOPES)]);
    await follow(a, b);
    const fromB = await post(b, `@${a.user.username} from b`);
    const fromC = await post(c, `@${a.user.username} from c`);
    const plainC = await post(c, "not for a");
    expect(await home(a, "", "unified")).toEqual([fromC, fromB]);
    expect(await home(a)).toEqual([fromB]);
    expect(await home(a, "", "unified")).not.toContain(plainC);
  });
});
