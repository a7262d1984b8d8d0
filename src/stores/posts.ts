import { eq, sql, type SQL } from "drizzle-orm";
import { MORE_LIMITS } from "../config";
import { schema, type Db, type RawResult } from "../db";
import { BoundQuery, boundShape, mixedBatch, placeholder } from "../db/batch";
import { dialect, existsFlag, int, jsonRows, text } from "../db/dialect";
import { bool, readUser, userColumnsSql } from "./channel-sql";
import { boundPostsQuery, decodePostRow } from "./post-statement";
import type { UserView, ViewerSlot } from "./users";

// Reading posts: the one statement that reads a page of posts with everything a Post object
// embeds, and the lookups by id. Lists (streams, bookmarks, search) build the page's ids in
// post-lists.ts and search/; writes are in post-writes.ts.

const { posts, postRevisions } = schema;

export type PostRecord = typeof posts.$inferSelect;
export type RevisionRecord = typeof postRevisions.$inferSelect;
export interface AppRef {
  clientId: string;
  name: string;
  url: string;
  deletedAt: number | null;
}

/** A post as one viewer sees it: the row, its author and client, and the viewer's flags. */
export interface PostView {
  post: PostRecord;
  user: UserView | null;
  app: AppRef | null;
  youBookmarked: boolean;
  youReposted: boolean;
  /** Of a list's page: the item's pagination id, its place in the page, and the bookmark note. */
  pid?: number;
  pos?: number;
  note?: string | null;
}

/** Users shown in `bookmarked_by` / `reposted_by`, per post id (the post acted on). */
export interface PostActors {
  bookmarkedBy: Map<number, UserView[]>;
  repostedBy: Map<number, UserView[]>;
}

/**
 * The rows of one read: `page` are the posts asked for (in the page's order), `byId` every row
 * fetched, including the originals that the reposts among them embed.
 */
export interface PostSet {
  page: PostView[];
  byId: Map<number, PostView>;
  actors?: PostActors;
}

/** What a read adds to the posts: the users who bookmarked / reposted them (`include_bookmarked_by` / `include_reposted_by`). */
export interface PostReadOptions {
  bookmarkedBy?: boolean;
  repostedBy?: boolean;
  /** false: the request does not show users' presence (`include_presence`), so it is not read. */
  presence?: boolean;
}

/** How many users `bookmarked_by` and `reposted_by` list: the most recent. */
export const ACTORS_SAMPLED = 10;

// ---------------------------------------------------------------------------------------------
// The one read: a page of post ids (a CTE) and, in the same statement, every post of the page
// plus the originals its reposts embed, each with author (and the viewer's relationship flags),
// client and the viewer's bookmark/repost flags. Columns are aliased so that no name repeats
// (drizzle maps batch rows by position from row objects).

/**
 * A list's page as the CTE `page` of `postsQuery(…, { paged: true })`: one row per post with
 * `id`, `pid` (the item's pagination id), `pos` (its place in the page's fetch order, ascending)
 * and `note` (a bookmark's note, or null).
 */
export const pageRow = (id: SQL, pid: SQL, pos: SQL, note: SQL = text(null)) => sql`${id} AS id, ${pid} AS pid, ${pos} AS pos, ${note} AS note`;

/** Whether a page of `carriedPageRow`s carries its posts (D1 only; Postgres reads them by id). */
const pagesCarryPosts = dialect.backend === "d1";

/**
 * `pageRow` for a page walked over the table `posts` itself (not aliased): on D1 the row carries
 * every column of the post, so the render reads it from the page instead of reading the post's row
 * again (`postsQuery`'s `carried`); D1 counts each read, a page's walk already read it.
 */
export const carriedPageRow = (pid: SQL, pos: SQL, note: SQL = text(null)) =>
  pagesCarryPosts ? sql`"posts".*, ${pid} AS pid, ${pos} AS pos, ${note} AS note` : pageRow(sql`"posts"."id"`, pid, pos, note);

/**
 * The read of the posts whose ids `pageIds` selects: a query with the column `id`, or with
 * `paged` the columns of `pageRow`. Its result (raw rows) goes to `toPostSet`.
 */
export function postsQuery(
  viewer: ViewerSlot | null,
  pageIds: SQL | BoundQuery,
  opts: { paged?: boolean; presence?: boolean; carried?: boolean } = {},
): BoundQuery {
  return boundPostsQuery(viewer, pageIds, opts.paged ?? false, opts.presence ?? true, (opts.carried ?? false) && pagesCarryPosts);
}

export type PostRows = RawResult;

const byNewest = (a: PostView, b: PostView) => b.post.id - a.post.id;

/** Rows of `postsQuery` as a PostSet, the page ordered by `order` (default: `pos` when paged, else newest id first). */
export function toPostSet(rows: PostRows, order?: (a: PostView, b: PostView) => number): PostSet {
  const byId = new Map<number, PostView>();
  const page: PostView[] = [];
  let paged = false;
  const originals: PostView[] = [];
  for (const r of rows.results) {
    const { view, original } = decodePostRow(r);
    if (original) originals.push(original);
    if (!view) continue;
    paged ||= view.pos != null;
    byId.set(view.post.id, view);
    page.push(view);
  }
  // A post both in the page and embedded by a repost of it comes twice: the page's row wins.
  for (const o of originals) if (!byId.has(o.post.id)) byId.set(o.post.id, o);
  page.sort(order ?? (paged ? (a, b) => (a.pos ?? 0) - (b.pos ?? 0) : byNewest));
  return { page, byId };
}

/**
 * `bookmarked_by` / `reposted_by` of the page's posts (for a repost, of its original): the
 * ACTORS_SAMPLED most recent users each, one statement.
 */
function actorsSql(viewerId: number | null, pageIds: SQL, opts: PostReadOptions): SQL {
  const acted = sql`SELECT coalesce(ap.repost_of, ap.id) FROM posts ap WHERE ap.id IN (SELECT id FROM pg)`;
  const parts: SQL[] = [];
  if (opts.bookmarkedBy) {
    parts.push(sql`SELECT 'b' AS kind, b.post_id AS post_id, b.user_id AS user_id,
      row_number() OVER (PARTITION BY b.post_id ORDER BY b.id DESC) AS rn FROM bookmarks b WHERE b.post_id IN (${acted})`);
  }
  if (opts.repostedBy) {
    parts.push(sql`SELECT 'r' AS kind, r.repost_of AS post_id, r.user_id AS user_id,
      row_number() OVER (PARTITION BY r.repost_of ORDER BY r.id DESC) AS rn FROM posts r WHERE r.repost_of IN (${acted})`);
  }
  return sql`WITH pg AS (${pageIds}), ranked AS (${sql.join(parts, sql` UNION ALL `)})
    SELECT ranked.kind AS ix_kind, ranked.post_id AS ix_post_id, ${userColumnsSql(viewerId)}
    FROM ranked JOIN users ON users.id = ranked.user_id
    WHERE ranked.rn <= ${ACTORS_SAMPLED} ORDER BY ranked.post_id, ranked.rn`;
}

function readActors(r: RawResult): PostActors {
  const actors: PostActors = { bookmarkedBy: new Map(), repostedBy: new Map() };
  for (const row of r.results) {
    const map = row.ix_kind === "b" ? actors.bookmarkedBy : actors.repostedBy;
    const id = Number(row.ix_post_id);
    map.set(id, [...(map.get(id) ?? []), readUser(row)!]);
  }
  return actors;
}

/**
 * The statements of one read of posts, to run in a batch with others: the posts and, when
 * asked for, their bookmarking and reposting users. `decode` turns their results (in order,
 * starting at the first) into the PostSet.
 */
export function postReads(db: Db, viewerId: number | null, pageIds: SQL | BoundQuery, opts: PostReadOptions & { paged?: boolean; carried?: boolean } = {}) {
  const withActors = !!(opts.bookmarkedBy || opts.repostedBy);
  // The actors' statement embeds the page's SQL: a page compiled ahead cannot ride in it.
  if (withActors && pageIds instanceof BoundQuery) throw new Error("postReads: the actors need the page as SQL");
  const items = [postsQuery(viewerId, pageIds, opts), ...(withActors ? [actorsSql(viewerId, pageIds as SQL, opts)] : [])] as const;
  return {
    items,
    decode(results: readonly unknown[], order?: (a: PostView, b: PostView) => number): PostSet {
      const set = toPostSet(results[0] as PostRows, order);
      if (withActors) set.actors = readActors(results[1] as RawResult);
      return set;
    },
  };
}

/** One read of posts in one round trip (with the bookmarking and reposting users when asked). */
export async function readPosts(
  db: Db,
  viewerId: number | null,
  pageIds: SQL | BoundQuery,
  opts: PostReadOptions & { paged?: boolean; carried?: boolean } = {},
  order?: (a: PostView, b: PostView) => number,
) {
  const reads = postReads(db, viewerId, pageIds, opts);
  return reads.decode(await mixedBatch(db, reads.items), order);
}

const single = (id: number | SQL) => sql`select ${typeof id === "number" ? int(id) : id} as id`;

/**
 * The page ids of a read by id, `build` given each value by name: compiled once per `key` with
 * placeholders (drizzle's compile cost more than the read), or plain SQL when the actors'
 * statement must embed it.
 */
function pageIdsOf(key: string, build: (v: (name: string) => unknown) => SQL, values: Record<string, unknown>, opts: PostReadOptions): SQL | BoundQuery {
  if (opts.bookmarkedBy || opts.repostedBy) return build((name) => values[name]);
  return boundShape(key, () => build(placeholder), values);
}
const onePostIds = (v: (name: string) => unknown) => sql`select ${int(v("id") as SQL)} as id`;

/** The page (column `id`) of the one post `id`, compiled once: what a write reads back when it knows its post. */
export const onePostPage = (id: number): BoundQuery => boundShape("post-ids:one", () => onePostIds(placeholder), { id });

/** One post (and the original it reposts), one round trip; `liveOnly`: a deleted post is not found. */
export async function readPost(
  db: Db,
  id: number,
  viewerId: number | null,
  opts: PostReadOptions & { liveOnly?: boolean } = {},
): Promise<{ view: PostView; set: PostSet } | undefined> {
  const ids = pageIdsOf(
    opts.liveOnly ? "post-ids:live" : "post-ids:one",
    (v) => (opts.liveOnly ? sql`select lp.id as id from posts lp where lp.id = ${v("id")} and lp.is_deleted = 0` : onePostIds(v)),
    { id },
    opts,
  );
  const set = await readPosts(db, viewerId, ids, opts);
  return set.page[0] ? { view: set.page[0], set } : undefined;
}

/**
 * The page of posts by id: each found post with its id's place in the list (`pos`, which the
 * render orders by). SQLite: the ids drive the join (CROSS JOIN), so the first found come first
 * without a sort, and the page carries the posts (`carriedPageRow`): D1 counts a sort's rows
 * again, and a second read of each post. Postgres (no ON with CROSS JOIN) sorts by the place.
 */
const [idsJoin, idsOrder] = dialect.pick({ sqlite: [sql`cross join`, sql``], postgres: [sql`join`, sql`order by ji.key`] });
const idsPage = (ids: unknown, liveOnly: boolean) =>
  sql`select ${carriedPageRow(sql`ji.key`, sql`ji.key`)} from ${jsonRows(ids as string, "ji")} ${idsJoin} posts on posts.id = ji.value
    ${liveOnly ? sql`where posts.is_deleted = 0` : sql``} ${idsOrder} limit ${MORE_LIMITS.postsReturned}`;

/** Posts by id, in the order asked, unknown ids skipped, at most the first 200 found. */
export async function readPostsByIds(db: Db, ids: number[], viewerId: number | null, opts: PostReadOptions & { liveOnly?: boolean } = {}): Promise<PostSet> {
  const pageIds = pageIdsOf(`post-ids:list:${!!opts.liveOnly}`, (v) => idsPage(v("ids"), !!opts.liveOnly), { ids: JSON.stringify(ids) }, opts);
  return readPosts(db, viewerId, pageIds, { ...opts, paged: true, carried: true });
}

/** A post and its earlier versions (oldest first), one round trip. */
export async function readRevisions(db: Db, id: number, viewerId: number | null) {
  const [rows, revisions] = await mixedBatch(db, [
    postsQuery(viewerId, single(id)),
    db.select().from(postRevisions).where(eq(postRevisions.postId, id)).orderBy(postRevisions.revision),
  ] as const);
  const set = toPostSet(rows);
  return set.page[0] ? { view: set.page[0], set, revisions } : undefined;
}

/** What writes need to know of a post before acting on it: its author and whether it is a repost. */
export interface PostBasics {
  id: number;
  userId: number;
  repostOf: number | null;
  isDeleted: boolean;
  isRevised: boolean;
  createdAt: number;
  threadId: number;
  replyTo: number | null;
  /** The post actions act on: the original of a repost, else the post itself. */
  target: { id: number; userId: number; isDeleted: boolean; threadId: number };
  /** Whether `viewerId` already reposted / bookmarked the target. */
  youReposted: boolean;
  youBookmarked: boolean;
}

/** The lookup of `getPostBasics`, compiled once: the post, and the post actions act on (`t`). */
const postBasicsSql = () => {
  const t = sql`coalesce(bp.repost_of, bp.id)`;
  return sql`select bp.id, bp.user_id, bp.repost_of, bp.is_deleted, bp.is_revised, bp.created_at, bp.thread_id, bp.reply_to,
      tb.user_id as target_user_id, tb.is_deleted as target_deleted, tb.thread_id as target_thread_id,
      ${existsFlag(sql`select 1 from posts yr where yr.repost_of = ${t} and yr.user_id = ${placeholder("viewer")}`)} as you_reposted,
      ${existsFlag(sql`select 1 from bookmarks yb where yb.post_id = ${t} and yb.user_id = ${placeholder("viewer")}`)} as you_bookmarked
    from posts bp left join posts tb on tb.id = ${t} where bp.id = ${placeholder("id")}`;
};

export async function getPostBasics(db: Db, id: number, viewerId: number): Promise<PostBasics | undefined> {
  // Through the batch executor, not the builder's own session: a deferred token check rides in it.
  const [rows] = await mixedBatch(db, [boundShape("post-basics", postBasicsSql, { id, viewer: viewerId })]);
  const row = rows.results[0];
  if (!row) return undefined;
  const num = (v: unknown) => (v == null ? null : Number(v));
  const post = { id: Number(row.id), userId: Number(row.user_id), repostOf: num(row.repost_of), threadId: Number(row.thread_id) };
  const targetFound = row.target_user_id != null;
  return {
    ...post,
    isDeleted: bool(row.is_deleted),
    isRevised: bool(row.is_revised),
    createdAt: Number(row.created_at),
    replyTo: num(row.reply_to),
    // A repost without its original row (none is ever removed) has nulls here, as drizzle's mapping gave them before.
    target: targetFound
      ? { id: post.repostOf ?? post.id, userId: Number(row.target_user_id), isDeleted: bool(row.target_deleted), threadId: Number(row.target_thread_id) }
      : ({ id: post.repostOf ?? post.id, userId: null, isDeleted: null, threadId: null } as unknown as PostBasics["target"]),
    youReposted: bool(row.you_reposted),
    youBookmarked: bool(row.you_bookmarked),
  };
}
