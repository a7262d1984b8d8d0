import { beforeAll, describe, expect, it } from "vitest";
import { isPostgres } from "../../src/db";
import { DB } from "../support/db";
import { actor, call, uniqueName } from "../support/client";
import { idsOf } from "../support/fixtures";

// Home timelines read a page, not the table (issue 27): with 20,000 posts by 200 authors seeded
// straight into the database and a viewer following 50 of them (through the API, so the follow's
// own work runs), a page of /posts/streams/me and /unified reads at most 3 × `count` rows on D1
// (plus 3 per followed merged author) beyond what rendering the same posts by id reads, newest
// page and page 2 alike. Ten followed authors are merged authors (too many followers to fan out:
// read at timeline time, each with as many posts as the others), one is muted; the pages are
// checked against the list's definition computed straight from the tables.

const AUTHORS = 200;
const POSTS = 20_000;
const FOLLOWED = 50;
const COUNT = 20;
/** Followed authors with more followers than a post fans out to. */
const MERGED = 10;
/** Rows a page may read beyond rendering its posts by id (see docs/contract-choices/posts-and-graph.md, "Home timelines"). */
// Beyond rendering the page's posts: D1 merges the walks (home_items, each followed merged
// author's posts, the mentions) in id order and stops after a page, one index seek (two rows) per
// post taken and per walk's next post queued, plus the visibility probes of each row it passes
// (mutes, blocks, of the reposted author too). Each followed merged author adds about 3 (its
// follow probe, its first seek), and each merged author about 2 more while there are fewer of them
// than the viewer's follows (read, and counted up to that number to choose the side they are read
// from). Rendering by id reads the ids' JSON rows and each post once (stores/posts.ts `idsPage`),
// as a page's render reads each post once.
// Measured: me 51–67, unified 57–70 beyond a by-id render that read each post three times
// (2026-11-26; me 163–188 and unified 209–237 before the merge); whole pages 183–204 and 97–115
// beyond a by-id render of 86–89 rows (2026-11-27, merged_authors WITHOUT ROWID: its probe's
// misses read no row).
const BOUND = { me: 4 * COUNT + 4 * MERGED + 5, unified: 4 * COUNT + 4 * MERGED + 5 } as const;
/** The whole request, rendering included (rendering 20 posts by id reads ~90 rows; a page ~185–205 for `me` and `unified`). */
const CEILING = 9 * COUNT + 4 * MERGED + 5;
const CHUNK = 500;

const rowsRead = (res: { headers: Headers }) => Number(res.headers.get("x-debug-rows-read"));

describe("home timeline rows read", { timeout: 600_000 }, () => {
  let viewer: Awaited<ReturnType<typeof actor>>;
  let authors: number[];
  /** Followed authors whose posts are on the first pages: merged ones, one muted. */
  let merged: number[], muted: number;

  beforeAll(async () => {
    viewer = await actor("write_post stream follow");
    const me = Number(viewer.user.id);
    const prefix = uniqueName("h").slice(0, 12);
    const userRows = Array.from({ length: AUTHORS }, (_, i) => `('${prefix}${i}', 'x', 1)`);
    await DB.prepare(`insert into users (username, password_hash, created_at) values ${userRows.join(", ")}`).run();
    const found = await DB.prepare(`select id from users where username like '${prefix}%' order by id`).all<{ id: number }>();
    authors = found.results.map((r) => Number(r.id));
    muted = authors[FOLLOWED - 2];
    merged = [authors[FOLLOWED - 1], ...authors.slice(FOLLOWED - 1 - MERGED, FOLLOWED - 2)];
    const appId = (await DB.prepare(`select id from apps order by id limit 1`).first<{ id: number }>("id"))!;
    // Posts round-robin over the authors; every 7th a reply, every 11th a repost, every 50th mentions the viewer.
    const first = Number((await DB.prepare(`select coalesce(max(id), 0) as m from posts`).first("m")) ?? 0) + 1;
    for (let start = 0; start < POSTS; start += CHUNK) {
      const rows: string[] = [];
      for (let i = start; i < Math.min(POSTS, start + CHUNK); i++) {
        const author = authors[i % AUTHORS];
        const replyTo = i % 7 === 6 && i > AUTHORS ? first + i - AUTHORS : null;
        const repostOf = i % 11 === 10 && replyTo == null && i > 3 ? first + i - 3 : null;
        rows.push(`(${author}, ${appId}, 0, ${replyTo ?? "null"}, ${repostOf ?? "null"}, ${repostOf ? "null" : `'post ${i}'`}, 1000, 1000)`);
      }
      await DB.prepare(`insert into posts (user_id, app_id, thread_id, reply_to, repost_of, text, created_at, revised_at) values ${rows.join(", ")}`).run();
    }
    await DB.prepare(`update posts set thread_id = id where thread_id = 0`).run();
    await DB.prepare(`insert into post_mentions (post_id, user_id) select id, ${me} from posts where id >= ${first} and (id - ${first}) % 50 = 0`).run();
    await DB.prepare(`update users set posts = ${POSTS / AUTHORS} where username like '${prefix}%'`).run();
    // More followers than a post fans out to: following them makes them merged authors.
    await DB.prepare(`update users set followers = 6000 where id in (${merged.join(",")})`).run();
    for (const a of authors.slice(0, FOLLOWED)) {
      const res = await call("PUT", `/users/${a}/follow`, { token: viewer.token });
      expect(res.status, res.text).toBe(200);
    }
    expect((await call("PUT", `/users/${muted}/mute`, { token: viewer.token })).status).toBe(200);
    const mergedRows = await DB.prepare(`select user_id from merged_authors where user_id in (${merged.join(",")})`).all();
    expect(mergedRows.results).toHaveLength(MERGED);
  }, 600_000);

  /** The list by its definition: own and followed authors' posts (and mentions), none by or reposting the muted author. */
  async function expected(withMentions: boolean, beforeId?: number) {
    const me = Number(viewer.user.id);
    const rows = await DB.prepare(
      `select p.id from posts p where (p.user_id = ? or p.user_id in (select followed_id from follows where follower_id = ?)
        ${withMentions ? "or p.id in (select post_id from post_mentions where user_id = ?)" : "or ? = 0"})
        and p.user_id <> ? and (p.repost_of is null or (select o.user_id from posts o where o.id = p.repost_of) <> ?)
        and p.id < ? order by p.id desc limit ${COUNT}`,
    )
      .bind(me, me, me, muted, muted, beforeId ?? Number.MAX_SAFE_INTEGER)
      .all<{ id: number }>();
    return rows.results.map((r) => String(r.id));
  }

  for (const stream of ["me", "unified"]) {
    it(`/posts/streams/${stream}: pages as the definition says, each reading at most ${BOUND[stream as keyof typeof BOUND]} rows beyond their rendering`, async () => {
      const page1 = await call("GET", `/posts/streams/${stream}?count=${COUNT}`, { token: viewer.token });
      expect(page1.status, page1.text).toBe(200);
      expect(idsOf(page1)).toEqual(await expected(stream === "unified"));
      expect(idsOf(page1).some((id) => page1.body.data.find((p: any) => p.id === id).user.id === String(merged[0]))).toBe(true);
      const page2 = await call("GET", `/posts/streams/${stream}?count=${COUNT}&before_id=${page1.body.meta.min_id}`, { token: viewer.token });
      expect(idsOf(page2)).toEqual(await expected(stream === "unified", Number(page1.body.meta.min_id)));
      if (isPostgres) return; // rows read: D1 only
      for (const page of [page1, page2]) {
        const rendering = await call("GET", `/posts?ids=${idsOf(page).join(",")}`, { token: viewer.token });
        console.log(`${stream}: rows read by the page ${rowsRead(page)}, by rendering the same posts by id ${rowsRead(rendering)}`);
        expect(rowsRead(page)).toBeLessThanOrEqual(rowsRead(rendering) + BOUND[stream as keyof typeof BOUND]);
        expect(rowsRead(page)).toBeLessThanOrEqual(CEILING);
      }
    });
  }

  // A page's cost follows the viewer's follows, not the service's merged authors: with 3,000, then
  // 6,000 more merged authors the viewer does not follow, the same pages read at most ~4 rows per
  // follow more than with 10 (past the viewer's follow count the merged authors are not counted on,
  // and the follows are checked against them instead), and no more with 6,000 than with 3,000.
  it("reads no more rows with thousands of merged authors the viewer does not follow", async () => {
    const pages = async () => Promise.all(["me", "unified"].map((stream) => call("GET", `/posts/streams/${stream}?count=${COUNT}`, { token: viewer.token })));
    const moreMerged = (from: number) =>
      DB.prepare(
        `with recursive s(n) as (select 1 union all select n + 1 from s where n < 3000) insert into merged_authors (user_id) select ${900_000_000 + from} + n from s`,
      ).run();
    const before = await pages();
    await moreMerged(0);
    const mid = await pages();
    await moreMerged(3000);
    const after = await pages();
    for (const [i, page] of after.entries()) {
      for (const p of [mid[i], page]) expect(idsOf(p), p.text).toEqual(idsOf(before[i]));
      if (isPostgres) continue; // rows read: D1 only
      console.log(`merged authors 10 / 3,010 / 6,010: rows read ${rowsRead(before[i])} / ${rowsRead(mid[i])} / ${rowsRead(page)}`);
      expect(rowsRead(mid[i])).toBeLessThanOrEqual(rowsRead(before[i]) + 4 * FOLLOWED);
      expect(rowsRead(page)).toBeLessThanOrEqual(rowsRead(mid[i]) + 5);
    }
  });
});
