import { sql, type Placeholder, type SQL } from "drizzle-orm";
import { schema, type Db } from "../db";
import { boundShape, mixedBatch, type BoundQuery } from "../db/batch";
import { dialect, text, unindexed } from "../db/dialect";
import type { PostFilters } from "../http/params";
import type { Page } from "../http/pagination";
import { pageBoundsSql } from "./channel-sql";
import { homePage, type HomeFilters } from "./home-timeline";
import { changedIds, postChangesQuery, type ChangedIds } from "./post-changes";
import { carriedPageRow, postReads, type PostReadOptions, type PostSet } from "./posts";

// Lists of posts: the page (a query of `carriedPageRow`s, or a home timeline's `pageRow`s) of each stream, bookmarks list, tag and
// explore stream, as a viewer sees it, with the general post parameters' filters. A page's text
// depends only on its shape (stream kind, filters, bounds given, whether there is a viewer): it is
// built with placeholders and compiled once per shape (`listPageQuery`), then bound per request.

const { posts } = schema;

/** A value of the page's SQL: the value itself, or (compiled per shape) a placeholder for it. */
type Arg = number | string | Placeholder;

/** The post actions and facets concern: the original of a repost, else the post itself. */
const acted = sql`coalesce(${posts.repostOf}, ${posts.id})`;

/** Whether the viewer hides `author`'s posts: blocked either way, and unless `includeMuted`, muted. */
function hiddenBy(viewerId: Arg, includeMuted: boolean): (author: SQL) => SQL {
  const muted = (author: SQL) =>
    includeMuted ? sql`false` : sql`exists(select 1 from user_mutes vm where vm.user_id = ${viewerId} and vm.muted_id = ${author})`;
  return (author) => sql`(${muted(author)}
    or exists(select 1 from user_blocks vb where (vb.user_id = ${viewerId} and vb.blocked_id = ${author}) or (vb.user_id = ${author} and vb.blocked_id = ${viewerId})))`;
}

/**
 * Posts the viewer has not hidden: authors (and reposted authors) who block the viewer or whom the
 * viewer blocked, and unless `includeMuted`, whom the viewer muted.
 */
export function visibleTo(viewerId: Arg | null, includeMuted: boolean): SQL {
  if (viewerId == null) return sql`true`;
  const hidden = hiddenBy(viewerId, includeMuted);
  return sql`not ${hidden(sql`${posts.userId}`)}
    and (${posts.repostOf} is null or not ${hidden(sql`(select vo.user_id from posts vo where vo.id = ${posts.repostOf})`)})`;
}

/**
 * `visibleTo` for a statement that can name a CTE: `cte` (null: none needed) goes into its WITH
 * list, `visible` is the condition on `posts`, `hiddenAuthor` the same per author. Postgres plans a list's page on every request, and
 * `visibleTo`'s subqueries (two EXISTS per author, the block's with an OR, up to three times in a
 * home page) were a fifth of its planning: there the hidden users are one CTE, read once and
 * hashed by each `IN` (a home page planned in 2.5 → 1.9 ms, and ran in 1.5 → 1.4 ms). SQLite keeps
 * `visibleTo` (D1 counts the rows each read of the CTE would read).
 */
const sharedVisibleTo = dialect.pick<(viewerId: Arg | null, includeMuted: boolean) => HomeFilters>({
  sqlite: (viewerId, includeMuted) => ({
    cte: null,
    visible: visibleTo(viewerId, includeMuted),
    hiddenAuthor: viewerId == null ? () => sql`false` : hiddenBy(viewerId, includeMuted),
  }),
  postgres: (viewerId, includeMuted) => {
    if (viewerId == null) return { cte: null, visible: sql`true`, hiddenAuthor: () => sql`false` };
    const muted = includeMuted ? sql`` : sql`select vm.muted_id as id from user_mutes vm where vm.user_id = ${viewerId} union all `;
    const cte = sql`viewer_hidden as (${muted}select vb.blocked_id as id from user_blocks vb where vb.user_id = ${viewerId}
      union all select vb.user_id from user_blocks vb where vb.blocked_id = ${viewerId})`;
    // A repost of a post gone (no author) is not hidden: `is not true` (`in` of null is null).
    const visible = sql`${posts.userId} not in (select id from viewer_hidden)
      and (${posts.repostOf} is null or ((select vo.user_id from posts vo where vo.id = ${posts.repostOf}) in (select id from viewer_hidden)) is not true)`;
    return { cte, visible, hiddenAuthor: (author) => sql`${author} in (select id from viewer_hidden)` };
  },
});

/** The general post parameters' filters as conditions on `posts` (visibility is separate). */
export function filterConditions(f: PostFilters, viewerId: Arg | null): SQL[] {
  const v = viewerId ?? 0;
  const conds: SQL[] = [];
  if (!f.deleted) conds.push(sql`${posts.isDeleted} = 0`);
  if (!f.replies) conds.push(sql`${posts.replyTo} is null`);
  if (!f.mentionPosts) conds.push(sql`not exists(select 1 from post_facets mf where mf.post_id = ${acted} and mf.facet = 'mention')`);
  if (!f.directed) {
    // Directed: a leading mention of someone other than the viewer whom the viewer does not follow.
    conds.push(sql`(${posts.userId} = ${v} or not exists(select 1 from post_facets df join users du on du.username = df.value
      where df.post_id = ${acted} and df.facet = 'leading_mention' and du.id <> ${v}
        and not exists(select 1 from follows dfo where dfo.follower_id = ${v} and dfo.followed_id = du.id)))`);
  }
  return conds;
}

const and = (conds: SQL[]) => (conds.length ? sql.join(conds, sql` and `) : sql`true`);

/** The values a list's page reads, by name: the viewer, the list's subject, the bounds and the clock. */
interface ListArgs {
  viewer: Arg | null;
  subject: Arg;
  limit: Arg;
  sinceId?: Arg;
  beforeId?: Arg;
  trendingSince: Arg;
  missedBefore: Arg;
}

/** The page's since/before bounds on `col` (`true` without any). */
const bounds = (col: SQL, page: Page, a: ListArgs): SQL => pageBoundsSql(col, page, { since: a.sinceId, before: a.beforeId });

/** A page of post ids walked in id order (the stream's pagination id). */
function pageOf(cond: SQL, page: Page, a: ListArgs): SQL {
  const pos = page.newestFirst ? sql`-${posts.id}` : sql`${posts.id}`;
  return sql`select ${carriedPageRow(sql`${posts.id}`, pos)} from ${posts} where ${cond} and ${bounds(sql`${posts.id}`, page, a)}
    order by ${posts.id} ${dir(page)} limit ${a.limit}`;
}

/** A page of the posts with a facet, walking its rows (primary key: facet, value, post_id) in post id order. */
function facetPage(facet: string, value: Arg | SQL, cond: SQL, page: Page, a: ListArgs): SQL {
  return sql`${facetWalk(facet, value, cond, page, a)} order by tf.post_id ${dir(page)} limit ${a.limit}`;
}

/** The rows of a facet walk, unordered: `facetPage`'s, or an arm of a union. */
function facetWalk(facet: string, value: Arg | SQL, cond: SQL, page: Page, a: ListArgs): SQL {
  const pos = page.newestFirst ? sql`-tf.post_id` : sql`tf.post_id`;
  return sql`select ${carriedPageRow(sql`tf.post_id`, pos)} from post_facets tf join ${posts} on ${posts.id} = tf.post_id
    where tf.facet = ${sql.raw(`'${facet}'`)} and tf.value = ${value} and ${bounds(sql`tf.post_id`, page, a)} and ${cond}`;
}

/**
 * Explore `photos`: the page of each facet walk (an image file, an oEmbed photo), merged in id
 * order. SQLite merges the two walks' index orders itself and stops after a page: its arms are
 * plain selects, since an arm's own ORDER BY (in a subquery) would be sorted again in a temporary
 * b-tree, a row read per item on D1. Postgres would hash and sort every row of such a union:
 * there each arm is a page of its own.
 */
function photosPage(cond: SQL, page: Page, a: ListArgs): SQL {
  const arms = (walk: typeof facetWalk) =>
    [
      ["file_kind", "image"],
      ["oembed", "photo"],
    ].map(([facet, value]) => walk(facet, sql.raw(`'${value}'`), sql`${unindexed(posts.repostOf)} is null and ${cond}`, page, a));
  return dialect.pick({
    sqlite: () => {
      const [images, photos] = arms(facetWalk);
      return sql`${images} union ${photos} order by pid ${dir(page)} limit ${a.limit}`;
    },
    postgres: () => {
      const [images, photos] = arms(facetPage);
      return sql`select * from (${images}) pi union select * from (${photos}) po order by pos limit ${a.limit}`;
    },
  })();
}

const dir = (page: Page) => sql.raw(page.newestFirst ? "DESC" : "ASC");
const humanAuthor = sql`exists(select 1 from users gu where gu.id = ${posts.userId} and gu.type = 'human')`;

/** The post explore streams (GET /posts/streams/explore): pre-built lists of human users' posts (no reposts). */
export const EXPLORE_STREAMS = [
  { slug: "conversations", title: "Conversations", description: "Posts that started a thread others replied to, newest first." },
  { slug: "photos", title: "Photos", description: "Posts with an image attached (an image file, or an oEmbed photo)." },
  { slug: "trending", title: "Trending", description: "Posts of the last 48 hours replied to, reposted or bookmarked at least 3 times." },
  { slug: "missed_conversations", title: "Missed conversations", description: "Posts older than an hour that nobody replied to, reposted or bookmarked." },
  { slug: "newcomers", title: "Newcomers", description: "Posts among the first 50 of their authors." },
  { slug: "256", title: "256", description: "Posts of exactly 256 characters." },
] as const;
export type ExploreSlug = (typeof EXPLORE_STREAMS)[number]["slug"];

const TRENDING_SECONDS = 48 * 3600;
const TRENDING_ACTIONS = 3;
const MISSED_AFTER_SECONDS = 3600;

function exploreCondition(slug: ExploreSlug, a: ListArgs): SQL {
  switch (slug) {
    case "conversations":
      // is_conversation: a live reply by someone else in the post's thread (kept by the writes).
      return sql`${posts.isConversation} = 1 and ${unindexed(posts.replyTo)} is null and ${posts.replies} > 0`;
    case "photos":
      return sql`true`; // walks the facets instead (photosPage)
    case "trending":
      // Ids grow with time: the oldest post of the window bounds the walk (index posts_created);
      // the literal sum condition is the WHERE of the partial index posts_popular.
      return sql`${posts.id} >= coalesce((select tw.id from posts tw where tw.created_at > ${a.trendingSince} order by tw.created_at limit 1), 0)
        and ${posts.createdAt} > ${a.trendingSince} and ${posts.replies} + ${posts.reposts} + ${posts.bookmarks} >= ${sql.raw(String(TRENDING_ACTIONS))}`;
    case "missed_conversations":
      // The counters' conditions are the WHERE of the partial index posts_unanswered. `unindexed`
      // reply_to (here and above): keeps SQLite off the reply_to index, whose null entries are most posts.
      return sql`${unindexed(posts.replyTo)} is null and ${posts.replies} = 0 and ${posts.reposts} = 0 and ${posts.bookmarks} = 0
        and ${posts.createdAt} <= ${a.missedBefore}`;
    case "newcomers":
      // is_newcomer: set at insert when the author had fewer than 50 original posts.
      return sql`${posts.isNewcomer} = 1`;
    case "256":
      return sql`length(${posts.text}) = 256`; // the WHERE of the partial index posts_256
  }
}

export type Stream =
  | { kind: "global" }
  | { kind: "personal"; userId: number; withMentions: boolean }
  | { kind: "user"; userId: number }
  | { kind: "mentions"; userId: number }
  | { kind: "thread"; postId: number }
  | { kind: "tag"; tag: string }
  | { kind: "explore"; slug: ExploreSlug; at: number }
  | { kind: "bookmarks"; userId: number; withNotes: boolean };

/** The values of `ListArgs` for one request. */
function listArgs(stream: Stream, page: Page, viewerId: number | null): ListArgs {
  const at = stream.kind === "explore" ? stream.at : 0;
  const subject = stream.kind === "tag" ? stream.tag : stream.kind === "thread" ? stream.postId : "userId" in stream ? stream.userId : 0;
  return {
    viewer: viewerId,
    subject,
    limit: page.limit + 1, // one more than wanted, so `meta.more` needs no count query
    ...(page.sinceId !== undefined && { sinceId: page.sinceId }),
    ...(page.beforeId !== undefined && { beforeId: page.beforeId }),
    trendingSince: at - TRENDING_SECONDS,
    missedBefore: at - MISSED_AFTER_SECONDS,
  };
}

/**
 * The page of a list as the viewer sees it, filtered by the general post parameters. Deleted posts
 * are listed (as `is_deleted` posts) unless `include_deleted=0`. Posts of users the viewer muted or
 * blocked or who block the viewer are left out everywhere but `/users/{id}/posts` (asked for by
 * name). Global: posts and replies of human users, no reposts. Personal (`/posts/streams/me`):
 * the user's and followed users' posts and reposts; unified adds posts mentioning the user.
 */
function listPageSql(stream: Stream, page: Page, f: PostFilters, a: ListArgs): SQL {
  const filters = filterConditions(f, a.viewer);
  const { cte, visible, hiddenAuthor } = sharedVisibleTo(a.viewer, f.muted);
  const common = and([...filters, visible]);
  if (stream.kind === "personal") {
    // Fanned out on write (home_items): reads about a page, not every followed author's posts.
    return homePage(a.subject, stream.withMentions, page, { visible: common, hiddenAuthor, cte }, (col, bounded = page) => bounds(col, bounded, a), a.limit);
  }
  if (stream.kind === "user") return pageOf(sql`${posts.userId} = ${a.subject} and ${and(filters)}`, page, a);
  const body = listBody(stream, page, common, f, a);
  return cte ? sql`with ${cte} ${body}` : body;
}

/** The page of a list whose posts the viewer's mutes and blocks filter (`common`: every condition on `posts`). */
function listBody(stream: Exclude<Stream, { kind: "personal" | "user" }>, page: Page, common: SQL, f: PostFilters, a: ListArgs): SQL {
  switch (stream.kind) {
    case "global":
      // `unindexed` (`+repost_of` on SQLite): keeps SQLite from using the repost_of index for `is null` (every original
      // matches) and sorting them all, instead of walking the primary key to the page.
      return pageOf(sql`${unindexed(posts.repostOf)} is null and ${humanAuthor} and ${common}`, page, a);
    case "mentions": {
      const copies = f.copyMentions
        ? sql`true`
        : sql`not exists(select 1 from post_facets cf where cf.post_id = ${posts.id} and cf.facet = 'copy_mention'
            and cf.value = (select cu.username from users cu where cu.id = ${a.subject}))`;
      // Walks the user's mention rows (primary key: user_id, post_id) in post id order.
      const pos = page.newestFirst ? sql`-pm.post_id` : sql`pm.post_id`;
      return sql`select ${carriedPageRow(sql`pm.post_id`, pos)} from post_mentions pm join ${posts} on ${posts.id} = pm.post_id
        where pm.user_id = ${a.subject} and ${bounds(sql`pm.post_id`, page, a)} and ${copies} and ${common}
        order by pm.post_id ${dir(page)} limit ${a.limit}`;
    }
    case "thread":
      return pageOf(sql`${posts.threadId} = (select tp.thread_id from posts tp where tp.id = ${a.subject}) and ${common}`, page, a);
    case "explore":
      if (stream.slug === "photos") return photosPage(sql`${humanAuthor} and ${common}`, page, a);
      return pageOf(sql`${unindexed(posts.repostOf)} is null and ${humanAuthor} and ${exploreCondition(stream.slug, a)} and ${common}`, page, a);
    case "tag":
      return facetPage("tag", a.subject, common, page, a);
    case "bookmarks": {
      // Newest bookmark first: the bookmark's id is the item's pagination id.
      const pos = page.newestFirst ? sql`-bk.id` : sql`bk.id`;
      const note = stream.withNotes ? sql`bk.note` : text(null);
      return sql`select ${carriedPageRow(sql`bk.id`, pos, note)} from bookmarks bk join ${posts} on ${posts.id} = bk.post_id
        where bk.user_id = ${a.subject} and ${bounds(sql`bk.id`, page, a)} and ${common}
        order by bk.id ${dir(page)} limit ${a.limit}`;
    }
  }
}

/** A list's page as SQL with its values (for statements that embed it). */
export function listPage(stream: Stream, page: Page, viewerId: number | null, f: PostFilters): SQL {
  return listPageSql(stream, page, f, listArgs(stream, page, viewerId));
}

const flagKey = (f: PostFilters) => [f.deleted, f.replies, f.mentionPosts, f.directed, f.muted, f.copyMentions].map(Number).join("");

/** A list's page compiled once per shape and bound to this request's values (see `boundShape`). */
export function listPageQuery(stream: Stream, page: Page, viewerId: number | null, f: PostFilters): BoundQuery {
  const variant =
    stream.kind === "personal" ? stream.withMentions : stream.kind === "bookmarks" ? stream.withNotes : stream.kind === "explore" ? stream.slug : "";
  const bound = (v: unknown, i: boolean | undefined) => (v === undefined ? "-" : i ? "=" : "<");
  const key = `list:${stream.kind}:${variant}:${viewerId == null ? "anon" : "viewer"}:${flagKey(f)}:${page.newestFirst}:${bound(page.sinceId, page.sinceInclusive)}${bound(page.beforeId, page.beforeInclusive)}`;
  const values = listArgs(stream, page, viewerId);
  const p = sql.placeholder;
  const named: ListArgs = {
    viewer: viewerId == null ? null : p("viewer"),
    subject: p("subject"),
    limit: p("limit"),
    sinceId: p("sinceId"),
    beforeId: p("beforeId"),
    trendingSince: p("trendingSince"),
    missedBefore: p("missedBefore"),
  };
  return boundShape(key, () => listPageSql(stream, page, f, named), { ...values });
}

/**
 * A page of a list in one round trip; the user or post the list is about is checked in the same
 * batch (`found`), and so is `markerRead` (the list's marker, stores/markers `markerSql`) when given,
 * and with `since_id` the posts changed since (`changes`: stores/post-changes).
 */
export async function readList(
  db: Db,
  stream: Stream,
  page: Page,
  viewerId: number | null,
  opts: { filters: PostFilters; reads?: PostReadOptions; markerRead?: BoundQuery },
): Promise<{ found: boolean; set: PostSet; markerRows?: Record<string, unknown>[]; changes: ChangedIds }> {
  // The bookmarking and reposting users' statement embeds the page as SQL; otherwise it comes compiled.
  const withActors = opts.reads?.bookmarkedBy || opts.reads?.repostedBy;
  const pageIds = withActors ? listPage(stream, page, viewerId, opts.filters) : listPageQuery(stream, page, viewerId, opts.filters);
  // Every page but a home timeline's is walked over `posts` and carries them (`carriedPageRow`).
  const reads = postReads(db, viewerId, pageIds, { ...opts.reads, paged: true, carried: stream.kind !== "personal" });
  const subject =
    stream.kind === "user" || stream.kind === "mentions" || stream.kind === "bookmarks"
      ? boundShape("list-subject:user", () => sql`select id from users where id = ${sql.placeholder("id")}`, { id: stream.userId })
      : stream.kind === "thread"
        ? boundShape("list-subject:post", () => sql`select id from posts where id = ${sql.placeholder("id")}`, { id: stream.postId })
        : boundShape("list-subject:none", () => sql`select 1`, {});
  const changes = postChangesQuery(stream, page);
  const head = [subject, ...(opts.markerRead ? [opts.markerRead] : []), ...(changes ? [changes] : [])];
  const results = await mixedBatch(db, [...head, ...reads.items]);
  const rowsAt = (i: number) => (results[i] as { results: Record<string, unknown>[] }).results;
  const found = rowsAt(0).length > 0;
  const markerRows = opts.markerRead ? rowsAt(1) : undefined;
  return { found, set: reads.decode(results.slice(head.length)), markerRows, changes: changes ? changedIds(rowsAt(head.length - 1)) : {} };
}
