import { sql, type SQL } from "drizzle-orm";
import { HOME_TIMELINES } from "../config";
import { dialect, int, lateralRows, unindexed } from "../db/dialect";
import type { Page } from "../http/pagination";
import { pageRow } from "./posts";

// Home timelines (/posts/streams/me, /unified) fanned out on write, so that a page reads about a
// page of rows however many posts there are (issue 27). `home_items` holds, per user, the ids of
// their own posts and of their followed users' posts (reposts included); the list's other rules
// (mutes, blocks, directed posts, the include_* flags, deletions) are applied when it is read.
// Authors in `merged_authors` (config HOME_TIMELINES) are not fanned out: a page merges in their
// posts at read time (a page of them in all on D1, at most a page per author on Postgres). Unified adds the user's
// mentions, walked on post_mentions' primary key (user_id, post_id).
//
// Postgres (read committed): a post's fan-out runs after its batch updated the author's users row,
// and a follow's backfill / an unfollow's clean-up after theirs updated the followed user's row,
// so a post and a follow of its author take the same row lock and the later one sees the other.

const isMerged = (author: SQL | number) => sql`exists(select 1 from merged_authors ma where ma.user_id = ${author})`;
/** Whether `userId` follows `author` (a primary-key probe of follows_pair). */
const follows = (userId: unknown, author: SQL) => sql`exists(select 1 from follows xf where xf.follower_id = ${userId} and xf.followed_id = ${author})`;

/** Fans out the post `postId` (an id expression of the batch's insert) of `authorId`: their own row, and each follower's unless merged. */
export function fanOutSql(authorId: number | SQL, postId: SQL): SQL {
  return sql`insert into home_items (user_id, post_id)
    select ${int(authorId)}, ${postId}
    union all select fo.follower_id, ${postId} from follows fo where fo.followed_id = ${authorId} and not ${isMerged(authorId)}
    on conflict do nothing`;
}

/**
 * After a follow row and the followed user's counts were written: make the followed user a merged
 * author past the thresholds, else copy their posts to the follower's home timeline.
 */
export function followBackfillSql(followerId: number | SQL, followedId: number | SQL): SQL[] {
  return [
    sql`insert into merged_authors (user_id) select mu.id from users mu where mu.id = ${followedId}
      and (mu.followers > ${HOME_TIMELINES.fanoutMaxFollowers} or mu.posts > ${HOME_TIMELINES.backfillMaxPosts})
      on conflict do nothing`,
    sql`insert into home_items (user_id, post_id) select ${int(followerId)}, bp.id from posts bp
      where bp.user_id = ${followedId} and not ${isMerged(followedId)}
      on conflict do nothing`,
  ];
}

/** Takes the followed user's posts off the follower's home timeline (when `guard` holds: the follow existed). */
export function unfollowClearSql(followerId: number, followedId: number, guard: SQL): SQL {
  return sql`delete from home_items where user_id = ${followerId}
    and post_id in (select up.id from posts up where up.user_id = ${followedId}) and ${guard}`;
}

/** Removes the home rows of the reposts `reposts` selects (ids), before they are deleted. */
export function repostsClearSql(reposts: SQL): SQL {
  return sql`delete from home_items where post_id in (${reposts})
    and user_id in (select rp.user_id from posts rp where rp.id in (${reposts})
      union all select rf.follower_id from posts rp join follows rf on rf.followed_id = rp.user_id where rp.id in (${reposts}))`;
}

/** What `homePage` filters with, from the list's rules. */
export interface HomeFilters {
  /** The list's conditions on `posts` (filters, mutes, blocks). */
  visible: SQL;
  /** Whether the viewer hides `author`'s posts (muted, blocked either way). */
  hiddenAuthor: (author: SQL) => SQL;
  /** A CTE `visible` names (or null). */
  cte: SQL | null;
}

/** A walk of post ids in id order: `col` of `from` where `where` holds (and the page's bounds, the list's filters). */
interface Walk {
  from: SQL;
  col: SQL;
  where: SQL;
}

/** A home page's parts, for the dialect's way to the merged authors' posts. */
interface Home {
  userId: unknown;
  page: Page;
  f: HomeFilters;
  /** The page's since/before bounds on `col` (those of `bounded`: the page or a part of it). */
  bounds: (col: SQL, bounded?: Page) => SQL;
  limit: unknown;
  dir: SQL;
  /** The user's home_items, then with `unified` their mentions. */
  walks: Walk[];
}

/** The page's rows of the post ids `ids` selects (column `id`). */
const source = (page: Page, ids: SQL) => sql`select ${pageRow(sql`hs.id`, sql`hs.id`, page.newestFirst ? sql`-hs.id` : sql`hs.id`)} from (${ids}) hs`;

/** A walk cut at a page, in the page's order. */
const walkPage = (h: Home, w: Walk) =>
  sql`select posts.id as id from ${w.from} where ${w.where} and ${h.bounds(w.col)} and ${h.f.visible} order by ${w.col} ${h.dir} limit ${h.limit}`;

/**
 * The page of a home timeline (the CTE `page` of post-statement): the newest (or oldest) `count`
 * posts, after the list's filters, of three sources each walked in id order: the user's
 * home_items, the followed merged authors' posts, and with `withMentions` the user's mentions.
 * Rows read: about the page's rows of each source, plus what the filters drop along the way;
 * see `pageByMerge` (D1) / `mergedWithinHome` (Postgres).
 */
export function homePage(userId: unknown, withMentions: boolean, page: Page, f: HomeFilters, bounds: (col: SQL, bounded?: Page) => SQL, limit: unknown): SQL {
  const dir = sql.raw(page.newestFirst ? "desc" : "asc");
  const walks: Walk[] = [{ from: sql`home_items hi join posts on posts.id = hi.post_id`, col: sql`hi.post_id`, where: sql`hi.user_id = ${userId}` }];
  if (withMentions) walks.push({ from: sql`post_mentions pm join posts on posts.id = pm.post_id`, col: sql`pm.post_id`, where: sql`pm.user_id = ${userId}` });
  const { ctes, sources } = dialect.pick({ sqlite: pageByMerge, postgres: mergedWithinHome })({ userId, page, f, bounds, limit, dir, walks });
  // UNION drops a post two sources hold (D1: one source).
  return sql`with ${f.cte ? sql`${f.cte}, ` : sql``}${ctes} ${sql.join(sources, sql` union `)} order by id ${dir} limit ${limit}`;
}

/** No limit, for a branch that is taken (LIMIT -1 is SQLite's, NULL Postgres'). */
const ALL_ROWS = 1_000_000_000;

/**
 * The merged authors the user follows (column `user_id`), read from the smaller side: every merged
 * author checked against the user's follows, or the user's follows checked against the merged
 * authors. Merged authors are counted only up to the user's follow count (`users.following`), so
 * choosing reads at most that many rows, and the page's cost follows the user's follows, not how
 * many merged authors the whole service has. The branch not taken gets LIMIT 0 (a WHERE guard
 * would be checked row by row).
 */
function followedMerged(userId: unknown): SQL {
  // 0 without a users row (no follows then), so that the LIMIT below is an integer.
  const following = sql`coalesce((select fu.following from users fu where fu.id = ${userId}), 0)`;
  // The choice is made once (a materialized CTE, `fewer` 1 or 0: each branch's LIMIT reads its one row).
  const all = sql.raw(String(ALL_ROWS));
  const limitWhen = (fewer: 0 | 1) => sql`limit (select case when ms.fewer = ${sql.raw(String(fewer))} then ${all} else 0 end from merged_side ms)`;
  return sql`with merged_side(fewer) as materialized (select case when (select count(*) from (select 1 from merged_authors mc limit ${following} + 1) mcl) <= ${following} then 1 else 0 end)
    select ma.user_id from (select ma.user_id from merged_authors ma where ${follows(userId, sql`ma.user_id`)} ${limitWhen(1)}) ma
    union all select mf.user_id from (select mf.followed_id as user_id from follows mf
      where mf.follower_id = ${userId} and ${isMerged(sql`mf.followed_id`)} ${limitWhen(0)}) mf`;
}

/**
 * SQLite: the page as one k-way merge of the walks (home_items, each followed merged author's
 * posts, the mentions), a recursive CTE whose queue is ordered by post id: each walk's next
 * visible post is queued (one index seek), each step takes the newest and queues that walk's
 * next, and the merge stops after a page: about `count` + walks seeks however far back the page
 * reaches. (Walking each merged author down to the home walk's page-th post, as Postgres does,
 * read ~300 rows a page on the benchmark's data, where they write ~43 % of posts; the home and
 * mentions walks as sources of the compound each read up to the page's end.) The walks must not
 * share a post (the merge's limit counts posts), and authors the viewer hides are left out
 * first (their walk would pass every post they wrote).
 */
function pageByMerge(h: Home): { ctes: SQL; sources: SQL[] } {
  const { page, dir } = h;
  // Queued when a walk has no more posts: last in the queue's order, never on the page.
  const none = sql.raw(page.newestFirst ? "0" : String(Number.MAX_SAFE_INTEGER));
  const past = sql.raw(page.newestFirst ? "<" : ">");
  // After a walk's post, only the page's far bound: the near one holds already, and SQLite
  // would seek from it instead of from the post (walking the posts between them).
  const { beforeId, beforeInclusive, sinceId, sinceInclusive, ...rest } = page;
  const far: Page = page.newestFirst ? { ...rest, sinceId, sinceInclusive } : { ...rest, beforeId, beforeInclusive };
  const next = (w: Walk, after: SQL | null, only: SQL = sql`true`) =>
    sql`coalesce((select ${w.col} from ${w.from} where ${w.where} and ${after ? sql`${w.col} ${past} ${after} and ${h.bounds(w.col, far)}` : h.bounds(w.col)}
      and ${only} and ${h.f.visible} order by ${w.col} ${dir} limit 1), ${none})`;
  const byAuthor = (author: SQL): Walk => ({ from: sql`posts`, col: sql`posts.id`, where: sql`posts.user_id = ${author}` });
  // The walks hold each post once: a followed merged author's posts only in their own walk (their
  // home_items rows from before they were merged are passed), a mention only if not in home_items.
  const followedMergedAuthor = sql`(${isMerged(sql`posts.user_id`)} and ${follows(h.userId, sql`posts.user_id`)})`;
  // By walk (home_items, then the mentions).
  const only = [
    sql`not ${followedMergedAuthor}`,
    sql`not exists(select 1 from home_items xh where xh.user_id = ${h.userId} and xh.post_id = posts.id) and not ${followedMergedAuthor}`,
  ];
  const { walks } = h;
  const authors = sql`select fm.user_id from (${followedMerged(h.userId)}) fm where not ${h.f.hiddenAuthor(sql`fm.user_id`)}`;
  const heads = walks.map((w, i) => sql`select ${sql.raw(String(i + 1))}, 0, ${next(w, null, only[i])} union all `);
  const step = sql`case mw.walk when 0 then ${next(byAuthor(sql`mw.author`), sql`mw.id`)} ${sql.join(
    walks.map((w, i) => sql`when ${sql.raw(String(i + 1))} then ${next(w, sql`mw.id`, only[i])}`),
    sql` `,
  )} end`;
  const ctes = sql`recursive page_walk(walk, author, id) as (${sql.join(heads, sql``)}select 0, mfa.user_id, ${next(byAuthor(sql`mfa.user_id`), null)} from (${authors}) mfa
    union all select mw.walk, mw.author, ${step} from page_walk mw where mw.id <> ${none}
    order by 3 ${dir} limit ${h.limit})`;
  return { ctes, sources: [source(page, sql`select mw.id as id from page_walk mw where mw.id <> ${none}`)] };
}

/**
 * Postgres: the home walk's page-th visible post bounds the merged authors: a merged author's post
 * older than it has a page of newer posts ahead of it. Their posts within that span are found one
 * of two exact ways, chosen per request from the authors' post counts (`users.posts`, a few rows):
 * - `byAuthor`: each author's own walk (`(user_id, id)` index) cut at a page: about a page per
 *   author at most, cheap when they post little next to the rest;
 * - `byRecency`: one walk of all posts newest first keeping theirs, cut at a page: about
 *   count ÷ (their share of all posts) rows, cheap when they write much of what is posted.
 * byRecency when count ÷ share < authors × count ÷ 2, i.e. authors × their posts ≥ 2 × all posts.
 */
function mergedWithinHome(h: Home): { ctes: SQL; sources: SQL[] } {
  const { userId, page, f, bounds, limit: n, dir } = h;
  const homeNth = sql`(select hn.id from home_walk hn order by hn.id ${dir} limit 1 offset (${n} - 1))`;
  const atOrBefore = (bound: SQL) =>
    page.newestFirst ? sql`posts.id >= coalesce(${bound}, 0)` : sql`posts.id <= coalesce(${bound}, ${Number.MAX_SAFE_INTEGER})`;
  // The span of post ids by two index walks, not max()/min(): Postgres plans an aggregate twice (as
  // an index walk and as an aggregate) on every request (~0.08 ms of a home page's planning).
  const idSpan = sql`(select ap.id from posts ap order by ap.id desc limit 1) - (select aq.id from posts aq order by aq.id limit 1)`;
  const recencyPays = sql`(case when (select count(*) * coalesce(sum(mu.posts), 0) from users mu where mu.id in (select user_id from merged_followed))
    >= 2 * coalesce(${idSpan} + 1, 0) then 1 else 0 end)`;
  // An author's walk: their posts in the page's direction, not past the home walk's page-th post
  // (`hw.lo`: a column, so computed once, not once per author).
  const authorWalk = sql`select posts.id as id from posts where posts.user_id = mfa.user_id and ${bounds(sql`posts.id`)} and ${atOrBefore(sql`hw.lo`)}
    and ${f.visible} order by posts.id ${dir} limit ${n}`;
  // `hw`: the home walk's bound and the choice, one row computed once; a condition on it stops
  // the way not chosen before it walks anything.
  const authorRows = lateralRows("posts", "mp", authorWalk);
  const byAuthor = sql`select mp.id as id from hw cross join merged_followed mfa ${authorRows.from} where hw.by_recency = 0 and ${authorRows.where}`;
  const byRecency = sql`select posts.id as id from hw cross join posts where hw.by_recency = 1 and ${bounds(sql`posts.id`)} and ${atOrBefore(sql`hw.lo`)}
    and ${unindexed(sql`posts.user_id`)} in (select user_id from merged_followed) and ${f.visible} order by posts.id ${dir} limit ${n}`;
  // The home walk is read twice (its page, and its page-th post), merged_followed three times:
  // CTEs, computed once.
  const [home, ...mentions] = h.walks.map((w) => walkPage(h, w));
  const ctes = sql`home_walk as (${home}), merged_followed as (${followedMerged(userId)}),
    hw as (select ${homeNth} as lo, ${recencyPays} as by_recency)`;
  const sources = [source(page, sql`select home_walk.id as id from home_walk`), source(page, byAuthor), source(page, byRecency)];
  return { ctes, sources: [...sources, ...mentions.map((m) => source(page, m))] };
}
