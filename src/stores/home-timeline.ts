import { sql, type SQL } from "drizzle-orm";
import { HOME_TIMELINES } from "../config";
import { dialect, int, lateralRows, unindexed } from "../db/dialect";
import type { Page } from "../http/pagination";
import { pageRow } from "./posts";

/**
 * The span of post ids (all posts, at most). On Postgres a `max`/`min` aggregate is planned twice
 * (as an index walk and as an aggregate), on every request; the same ends read by index walks
 * planned once cost a home page ~0.08 ms less planning. SQLite plans either in no measurable time.
 */
const idSpan = dialect.pick<SQL>({
  sqlite: sql`(select max(ap.id) from posts ap) - (select min(aq.id) from posts aq)`,
  postgres: sql`(select ap.id from posts ap order by ap.id desc limit 1) - (select aq.id from posts aq order by aq.id limit 1)`,
});

// Home timelines (/posts/streams/me, /unified) fanned out on write, so that a page reads about a
// page of rows however many posts there are (issue 27). `home_items` holds, per user, the ids of
// their own posts and of their followed users' posts (reposts included); the list's other rules
// (mutes, blocks, directed posts, the include_* flags, deletions) are applied when it is read.
// Authors in `merged_authors` (config HOME_TIMELINES) are not fanned out: a page merges in their
// posts at read time, at most a page of them per merged author followed. Unified adds the user's
// mentions, walked on post_mentions' primary key (user_id, post_id).
//
// Postgres (read committed): a post's fan-out runs after its batch updated the author's users row,
// and a follow's backfill / an unfollow's clean-up after theirs updated the followed user's row,
// so a post and a follow of its author take the same row lock and the later one sees the other.

const isMerged = (author: SQL | number) => sql`exists(select 1 from merged_authors ma where ma.user_id = ${author})`;

/** Fans out the post `postId` (an id expression of the batch's insert) of `authorId`: their own row, and each follower's unless merged. */
export function fanOutSql(authorId: number, postId: SQL): SQL {
  return sql`insert into home_items (user_id, post_id)
    select ${int(authorId)}, ${postId}
    union all select fo.follower_id, ${postId} from follows fo where fo.followed_id = ${authorId} and not ${isMerged(authorId)}
    on conflict do nothing`;
}

/**
 * After a follow row and the followed user's counts were written: make the followed user a merged
 * author past the thresholds, else copy their posts to the follower's home timeline.
 */
export function followBackfillSql(followerId: number, followedId: number): SQL[] {
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

/**
 * The page of a home timeline (the CTE `page` of post-statement): the newest (or oldest) `count`
 * posts, after `visible` (the list's filters on `posts`), of three sources each walked in id
 * order and cut at a page: the user's home_items, each followed merged author's posts (not past
 * the home walk's page-th post), and with `withMentions` the user's mentions.
 * Rows read: about a page per source, about 9 per merged author followed besides their posts
 * within the page's span, plus what `visible` filters out along the way.
 */
export function homePage(
  userId: unknown,
  withMentions: boolean,
  page: Page,
  visible: SQL,
  bounds: (col: SQL) => SQL,
  limit: unknown,
  /** A CTE `visible` names (or null). */
  cte: SQL | null = null,
): SQL {
  const n = limit;
  const dir = sql.raw(page.newestFirst ? "desc" : "asc");
  const walk = (from: SQL, col: string, where: SQL) =>
    sql`select posts.id as id from ${from} where ${where} and ${bounds(sql.raw(col))} and ${visible}
      order by ${sql.raw(col)} ${dir} limit ${n}`;
  const homeWalk = walk(sql`home_items hi join posts on posts.id = hi.post_id`, "hi.post_id", sql`hi.user_id = ${userId}`);
  // The page-th visible home_items post: a merged author's post beyond it has a page of newer
  // posts ahead of it, so no merged author is walked past it (before, each was walked a page deep
  // twice: 715 rows a page with ten followed, 340 now).
  const homeNth = sql`(select hn.id from home_walk hn order by hn.id ${dir} limit 1 offset (${n} - 1))`;
  const atOrBefore = (bound: SQL) =>
    page.newestFirst ? sql`posts.id >= coalesce(${bound}, 0)` : sql`posts.id <= coalesce(${bound}, ${Number.MAX_SAFE_INTEGER})`;
  // The merged authors the user follows (a CTE: named by both ways below and by the choice).
  const followedMerged = sql`select ma.user_id from merged_authors ma
    where exists(select 1 from follows mf where mf.follower_id = ${userId} and mf.followed_id = ma.user_id)`;
  // Two exact ways to the followed merged authors' posts of the page, one chosen per request by
  // a one-time condition on the authors' post counts (users.posts, a few rows):
  // - `byAuthor`: each author's own walk (`(user_id, id)` index) cut at a page: about a page per
  //   author at most, cheap when they post little next to the rest;
  // - `byRecency`: one walk of all posts newest first keeping theirs, cut at a page: about
  //   count ÷ (their share of all posts) rows, cheap when they write much of what is posted.
  // byRecency when count ÷ share < authors × count ÷ 2, i.e. authors × their posts ≥ 2 × all posts.
  const recencyPays = sql`(case when (select count(*) * coalesce(sum(mu.posts), 0) from users mu where mu.id in (select user_id from merged_followed))
    >= 2 * coalesce(${idSpan} + 1, 0) then 1 else 0 end)`;
  // An author's walk: their posts in the page's direction, not past the home walk's page-th post
  // (`hw.lo`: a column, so computed once, not once per author).
  const authorWalk = sql`select posts.id as id from posts where posts.user_id = mfa.user_id and ${bounds(sql`posts.id`)} and ${atOrBefore(sql`hw.lo`)}
    and ${visible} order by posts.id ${dir} limit ${n}`;
  // `hw`: the home walk's bound and the choice, one row computed once; a condition on it stops
  // the way not chosen before it walks anything.
  const authorRows = lateralRows("posts", "mp", authorWalk);
  // CROSS JOIN: SQLite walks the authors first (else it scans posts).
  const byAuthor = sql`select mp.id as id from hw cross join merged_followed mfa ${authorRows.from} where hw.by_recency = 0 and ${authorRows.where}`;
  const byRecency = sql`select posts.id as id from hw cross join posts where hw.by_recency = 1 and ${bounds(sql`posts.id`)} and ${atOrBefore(sql`hw.lo`)}
    and ${unindexed(sql`posts.user_id`)} in (select user_id from merged_followed) and ${visible} order by posts.id ${dir} limit ${n}`;
  const pos = page.newestFirst ? sql`-hs.id` : sql`hs.id`;
  const source = (ids: SQL) => sql`select ${pageRow(sql`hs.id`, sql`hs.id`, pos)} from (${ids}) hs`;
  const sources = [
    // The home walk is read twice (its page, and its page-th post): a CTE named twice is
    // materialized once by SQLite and Postgres alike.
    source(sql`select home_walk.id as id from home_walk`),
    source(byAuthor),
    source(byRecency),
  ];
  if (withMentions) sources.push(source(walk(sql`post_mentions pm join posts on posts.id = pm.post_id`, "pm.post_id", sql`pm.user_id = ${userId}`)));
  // ORDER BY on the compound itself: SQLite merges the sorted sources lazily up to the limit
  // (no temporary tables), and UNION drops a post two sources hold.
  return sql`with ${cte ? sql`${cte}, ` : sql``}home_walk as (${homeWalk}), merged_followed as (${followedMerged}),
    hw as (select ${homeNth} as lo, ${recencyPays} as by_recency) ${sql.join(sources, sql` union `)} order by id ${dir} limit ${n}`;
}
