import { eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import { LIMITS, MORE_LIMITS } from "../config";
import type { Page } from "../http/pagination";
import type { TextResult } from "../text";
import { schema, type Db } from "../db";
import { interactionWrites } from "./interactions";
import { markerWriteSql } from "./markers";
import { aliasedFields, first, mixedBatch, violates } from "../db/batch";
import { pageLimit, pageOrder, pageWhere } from "./page-sql";
import { userViewColumns, type UserView } from "./users";
import { isPostgres } from "../db";
import { int, jsonRows, lastId } from "../db/dialect";

const { posts, users, apps, postRevisions } = schema;

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
}

/**
 * The rows of one read: `page` are the posts asked for (in the page's order), `byId` every row
 * fetched, including the originals that the reposts among them embed.
 */
export interface PostSet {
  page: PostView[];
  byId: Map<number, PostView>;
}

// ---------------------------------------------------------------------------------------------
// The one read: a page of post ids (a CTE) and, in the same statement, every post of the page
// plus the originals its reposts embed, each with author (and the viewer's relationship flags),
// client and the viewer's bookmark/repost flags. Columns are aliased so that no name repeats
// (drizzle maps batch rows by position from row objects).

function selection(viewerId: number | null, inPage: SQL) {
  const flag = (q: SQL, name: string) => (viewerId == null ? sql`0` : q).mapWith(Boolean).as(name);
  return {
    post: aliasedFields(getTableColumns(posts), "p_"),
    user: aliasedFields(userViewColumns(viewerId), "u_"),
    app: aliasedFields({ clientId: apps.clientId, name: apps.name, url: apps.url, deletedAt: apps.deletedAt }, "a_"),
    youBookmarked: flag(sql`exists(select 1 from bookmarks yb where yb.user_id = ${viewerId} and yb.post_id = ${posts.id})`, "you_bookmarked"),
    youReposted: flag(sql`exists(select 1 from posts yr where yr.repost_of = ${posts.id} and yr.user_id = ${viewerId})`, "you_reposted"),
    inPage: inPage.mapWith(Boolean).as("in_page"),
  };
}

/** The read of the posts whose ids `pageIds` selects (a query with one column, `id`). */
export function postsQuery(db: Db, viewerId: number | null, pageIds: SQL) {
  const page = db.$with("page", { id: sql<number>`id` }).as(pageIds);
  const inPage = sql`${posts.id} in (select id from page)`;
  return db
    .with(page)
    .select(selection(viewerId, inPage))
    .from(posts)
    .leftJoin(users, eq(users.id, posts.userId))
    .leftJoin(apps, eq(apps.id, posts.appId))
    // One IN over a union, not an OR of two INs: Postgres cannot use the primary key for the OR
    // and scans every post; SQLite plans both forms as primary-key probes.
    .where(sql`${posts.id} in (select id from page union select ro.repost_of from posts ro where ro.id in (select id from page))`);
}

type PostRows = Awaited<ReturnType<typeof postsQuery>>;

/** Rows of `postsQuery` as a PostSet, the page ordered by `order` (default: newest id first). */
export function toPostSet(rows: PostRows, order: (a: PostView, b: PostView) => number = (a, b) => b.post.id - a.post.id): PostSet {
  const byId = new Map<number, PostView>();
  const page: PostView[] = [];
  for (const r of rows) {
    const view: PostView = {
      post: r.post as unknown as PostRecord,
      user: r.user.id == null ? null : (r.user as unknown as UserView),
      app: r.app.clientId == null ? null : (r.app as unknown as AppRef),
      youBookmarked: r.youBookmarked,
      youReposted: r.youReposted,
    };
    byId.set(view.post.id, view);
    if (r.inPage) page.push(view);
  }
  page.sort(order);
  return { page, byId };
}

// ---------------------------------------------------------------------------------------------
// Page queries: `select id` of the posts of a stream, bounded and ordered as the page asks.

/** Posts the viewer has not hidden: authors (and reposted authors) they muted or that block either way. */
function visibleTo(viewerId: number | null): SQL {
  if (viewerId == null) return sql`true`;
  const hidden = (author: SQL) => sql`(exists(select 1 from user_mutes vm where vm.user_id = ${viewerId} and vm.muted_id = ${author})
    or exists(select 1 from user_blocks vb where (vb.user_id = ${viewerId} and vb.blocked_id = ${author}) or (vb.user_id = ${author} and vb.blocked_id = ${viewerId})))`;
  return sql`not ${hidden(sql`${posts.userId}`)}
    and (${posts.repostOf} is null or not ${hidden(sql`(select vo.user_id from posts vo where vo.id = ${posts.repostOf})`)})`;
}

function pageOf(cond: SQL, page: Page): SQL {
  const bounds = pageWhere(posts.id, page);
  return sql`select ${posts.id} as id from ${posts} where ${cond} ${bounds ? sql`and ${bounds}` : sql``}
    order by ${pageOrder(posts.id, page)} limit ${pageLimit(page)}`;
}

const live = sql`${posts.isDeleted} = 0`;

export type Stream =
  | { kind: "global" }
  | { kind: "personal"; userId: number; withMentions: boolean }
  | { kind: "user"; userId: number }
  | { kind: "mentions"; userId: number }
  | { kind: "thread"; postId: number };

/**
 * The ids of a stream's page as the viewer sees it. Streams leave out deleted posts, and (except
 * a user's own posts, asked for by name) posts of users the viewer muted or blocked or who block
 * the viewer. Global: posts and replies of human users, no reposts. Personal (`/posts/streams/me`):
 * the user's and followed users' posts and reposts; unified adds posts mentioning the user.
 */
export function streamPage(stream: Stream, page: Page, viewerId: number | null): SQL {
  switch (stream.kind) {
    case "global":
      return pageOf(
        // `+repost_of`: keeps SQLite from using the repost_of index for `is null` (every original
        // matches) and sorting them all, instead of walking the primary key to the page.
        sql`${live} and +${posts.repostOf} is null
          and exists(select 1 from users gu where gu.id = ${posts.userId} and gu.type = 'human') and ${visibleTo(viewerId)}`,
        page,
      );
    case "personal": {
      const mine = sql`${posts.userId} = ${stream.userId} or ${posts.userId} in (select f.followed_id from follows f where f.follower_id = ${stream.userId})`;
      const mentions = stream.withMentions ? sql` or ${posts.id} in (select pm.post_id from post_mentions pm where pm.user_id = ${stream.userId})` : sql``;
      return pageOf(sql`${live} and (${mine}${mentions}) and ${visibleTo(viewerId)}`, page);
    }
    case "user":
      return pageOf(sql`${live} and ${posts.userId} = ${stream.userId}`, page);
    case "mentions":
      return pageOf(
        sql`${live} and ${posts.id} in (select pm.post_id from post_mentions pm where pm.user_id = ${stream.userId}) and ${visibleTo(viewerId)}`,
        page,
      );
    case "thread":
      return pageOf(
        sql`${live} and ${posts.threadId} = (select tp.thread_id from posts tp where tp.id = ${stream.postId}) and ${visibleTo(viewerId)}`,
        page,
      );
  }
}

/**
 * A page of a stream in one round trip; `exists` (a user or post the stream is about) is read in the
 * same batch, and so is `markerRead` (the stream's marker, stores/markers `markerSql`) when given.
 */
export async function readStream(
  db: Db,
  stream: Stream,
  page: Page,
  viewerId: number | null,
  markerRead?: SQL,
): Promise<{ found: boolean; set: PostSet; markerRows?: Record<string, unknown>[] }> {
  const order = page.newestFirst ? (a: PostView, b: PostView) => b.post.id - a.post.id : (a: PostView, b: PostView) => a.post.id - b.post.id;
  const query = postsQuery(db, viewerId, streamPage(stream, page, viewerId));
  const subject =
    stream.kind === "user" || stream.kind === "mentions"
      ? db.select({ id: users.id }).from(users).where(eq(users.id, stream.userId))
      : stream.kind === "thread"
        ? db.select({ id: posts.id }).from(posts).where(eq(posts.id, stream.postId))
        : null;
  if (markerRead) {
    const [rows, marker, found] = await mixedBatch(db, [query, markerRead, subject ?? sql`select 1`] as const);
    return { found: !subject || (found as unknown[]).length > 0, set: toPostSet(rows, order), markerRows: marker.results };
  }
  if (!subject) return { found: true, set: toPostSet(await query, order) };
  const [found, rows] = await mixedBatch(db, [subject, query] as const);
  return { found: found.length > 0, set: toPostSet(rows, order) };
}

const single = (id: number | SQL) => sql`select ${typeof id === "number" ? int(id) : id} as id`;

/** One post (and the original it reposts), one round trip. */
export async function readPost(db: Db, id: number, viewerId: number | null): Promise<{ view: PostView; set: PostSet } | undefined> {
  const set = toPostSet(await postsQuery(db, viewerId, single(id)));
  return set.page[0] ? { view: set.page[0], set } : undefined;
}

/** Posts by id, in the order asked, unknown ids skipped, at most the first 200 found. */
export async function readPostsByIds(db: Db, ids: number[], viewerId: number | null): Promise<PostSet> {
  const pageIds = sql`select pi.id as id from ${jsonRows(ids, "ji")} join posts pi on pi.id = ji.value
    order by ji.key limit ${MORE_LIMITS.postsReturned}`;
  const position = new Map(ids.map((id, i) => [id, i]));
  return toPostSet(await postsQuery(db, viewerId, pageIds), (a, b) => position.get(a.post.id)! - position.get(b.post.id)!);
}

/** A post and its earlier versions (oldest first), one round trip. */
export async function readRevisions(db: Db, id: number, viewerId: number | null) {
  const [rows, revisions] = await mixedBatch(db, [
    postsQuery(db, viewerId, single(id)),
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

export async function getPostBasics(db: Db, id: number, viewerId: number): Promise<PostBasics | undefined> {
  const t = sql`coalesce(${posts.repostOf}, ${posts.id})`;
  const row = await db
    .select({
      id: posts.id,
      userId: posts.userId,
      repostOf: posts.repostOf,
      isDeleted: posts.isDeleted,
      isRevised: posts.isRevised,
      createdAt: posts.createdAt,
      threadId: posts.threadId,
      replyTo: posts.replyTo,
      targetUserId: sql<number>`(select tb.user_id from posts tb where tb.id = ${t})`.mapWith(Number),
      targetDeleted: sql<number>`(select tb.is_deleted from posts tb where tb.id = ${t})`.mapWith(Boolean),
      targetThreadId: sql<number>`(select tb.thread_id from posts tb where tb.id = ${t})`.mapWith(Number),
      youReposted: sql<number>`exists(select 1 from posts yr where yr.repost_of = ${t} and yr.user_id = ${viewerId})`.mapWith(Boolean),
      youBookmarked: sql<number>`exists(select 1 from bookmarks yb where yb.post_id = ${t} and yb.user_id = ${viewerId})`.mapWith(Boolean),
    })
    .from(posts)
    .where(eq(posts.id, id))
    .then(first);
  if (!row) return undefined;
  const { targetUserId, targetDeleted, targetThreadId, ...rest } = row;
  return {
    ...rest,
    target: { id: row.repostOf ?? row.id, userId: targetUserId, isDeleted: targetDeleted, threadId: targetThreadId },
  };
}

// ---------------------------------------------------------------------------------------------
// Writes. Each is one atomic batch that ends with the read of the post it returns. Conditions
// that another request may change between our check and the batch (a duplicate, a deleted reply
// target, an existing repost/bookmark/revision) are re-checked inside the batch by statements
// that fail on a constraint (NOT NULL fed a null, a primary key), which rolls the batch back:
// counters can then be plain increments, exact under concurrency.

/**
 * The post the batch just inserted for a user: on D1 (batches serialized) their newest post, on
 * Postgres the posts sequence's value in this transaction.
 */
const newestOf = (userId: number) => (isPostgres ? lastId("posts") : sql`(select max(np.id) from posts np where np.user_id = ${userId})`);

/** Ancestors of a post (itself included), walking reply_to up to the thread root. */
const ancestors = (postId: number) =>
  sql`with recursive anc(id) as (select ${int(postId)} union select ap.reply_to from posts ap join anc on ap.id = anc.id where ap.reply_to is not null)`;

const mentionIds = (text: TextResult) => JSON.stringify([...new Set(text.entities.mentions.map((m) => Number(m.id)))]);

export interface NewPost {
  userId: number;
  appId: number;
  text: TextResult;
  /** `text` with `{object_id}` in links replaced by `sentinel`, replaced by the id in SQL after insert. */
  sentinel: string | null;
  isNsfw: boolean;
  raw: unknown;
  replyTo: { id: number; userId: number } | null;
  at: number;
  /** Sets the `personal` marker to the new post (update_marker=1). */
  marker: { version: string } | null;
}

export type CreateResult = { ok: true; set: PostSet; view: PostView } | { ok: false; reason: "duplicate" | "reply_to" };

export async function createPost(db: Db, p: NewPost): Promise<CreateResult> {
  const since = p.at - LIMITS.post.seconds_between_duplicates;
  const duplicate = sql`exists(select 1 from posts d where d.user_id = ${p.userId} and d.text = ${p.text.text}
    and d.repost_of is null and d.is_deleted = 0 and d.created_at > ${since})`;
  const threadId = p.replyTo ? sql`(select t.thread_id from posts t where t.id = ${p.replyTo.id} and t.is_deleted = 0)` : sql`0`;
  const id = newestOf(p.userId);
  const writes: SQL[] = [
    // NOT NULL on user_id fails a duplicate, on thread_id a reply to a missing or deleted post.
    sql`insert into posts (user_id, app_id, thread_id, reply_to, text, html, entities, is_nsfw, raw, created_at, revised_at)
      select case when ${duplicate} then null else ${int(p.userId)} end, ${p.appId}, ${threadId}, ${p.replyTo?.id ?? null},
        ${p.text.text}, ${p.text.html}, ${JSON.stringify(p.text.entities)}, ${p.isNsfw ? 1 : 0},
        ${p.raw === undefined ? null : JSON.stringify(p.raw)}, ${p.at}, ${p.at}`,
  ];
  if (!p.replyTo || p.sentinel) {
    const fixId = p.sentinel ? sql`, html = replace(html, ${p.sentinel}, CAST(id AS TEXT)), entities = replace(entities, ${p.sentinel}, CAST(id AS TEXT))` : sql``;
    writes.push(sql`update posts set thread_id = case when thread_id = 0 then id else thread_id end ${fixId} where id = ${id}`);
  }
  if (p.text.entities.mentions.length) {
    writes.push(sql`insert into post_mentions (post_id, user_id) select ${id}, j.value from ${jsonRows(mentionIds(p.text), "j")} where true on conflict do nothing`);
  }
  writes.push(sql`update users set posts = posts + 1 where id = ${p.userId}`);
  if (p.replyTo) {
    writes.push(
      sql`update posts set replies = replies + 1 where id = ${p.replyTo.id}`,
      sql`${ancestors(p.replyTo.id)} update posts set threads = threads + 1 where id in (select id from anc)`,
      ...interactionWrites({ userId: p.replyTo.userId, action: "reply", objectId: p.replyTo.id, actorId: p.userId, at: p.at }),
    );
  }
  if (p.marker) {
    writes.push(markerWriteSql({ userId: p.userId, name: "personal", position: id, percentage: 0, reset: false, version: p.marker.version, at: p.at }));
  }
  try {
    const results = await mixedBatch(db, [...writes, postsQuery(db, p.userId, sql`select ${id} as id`)]);
    const set = toPostSet(results[results.length - 1] as PostRows);
    return { ok: true, set, view: set.page[0] };
  } catch (err) {
    if (violates(err, "posts", "user_id")) return { ok: false, reason: "duplicate" };
    if (violates(err, "posts", "thread_id")) return { ok: false, reason: "reply_to" };
    throw err;
  }
}

export interface Revision {
  postId: number;
  text: TextResult;
  isNsfw: boolean;
  /** undefined keeps the current raw. */
  raw: unknown;
  at: number;
  viewerId: number;
}

/** Revises a post; the current version becomes revision 0. Returns null if it was revised meanwhile. */
export async function revisePost(db: Db, r: Revision): Promise<{ set: PostSet; view: PostView } | null> {
  const rawSet = r.raw === undefined ? sql`` : sql`, raw = ${JSON.stringify(r.raw)}`;
  const writes: SQL[] = [
    // The primary key (post_id, revision) refuses a second revision, rolling the batch back.
    sql`insert into post_revisions (post_id, revision, text, html, entities, is_nsfw, raw, created_at)
      select id, 0, text, html, entities, is_nsfw, raw, created_at from posts where id = ${r.postId} and is_deleted = 0 and repost_of is null`,
    sql`update posts set text = ${r.text.text}, html = ${r.text.html}, entities = ${JSON.stringify(r.text.entities)},
      is_nsfw = ${r.isNsfw ? 1 : 0} ${rawSet}, is_revised = 1, revised_at = ${r.at}
      where id = ${r.postId} and is_deleted = 0 and repost_of is null`,
    sql`delete from post_mentions where post_id = ${r.postId}`,
  ];
  if (r.text.entities.mentions.length) {
    writes.push(sql`insert into post_mentions (post_id, user_id)
      select ${r.postId}, j.value from ${jsonRows(mentionIds(r.text), "j")} where exists(select 1 from posts where id = ${r.postId} and is_deleted = 0)
      on conflict do nothing`);
  }
  try {
    const results = await mixedBatch(db, [...writes, postsQuery(db, r.viewerId, single(r.postId))]);
    const set = toPostSet(results[results.length - 1] as PostRows);
    return set.page[0] ? { set, view: set.page[0] } : null;
  } catch (err) {
    if (violates(err, "post_revisions")) return null;
    throw err;
  }
}

/**
 * Deletes a post: it keeps its id and loses its content; the author's post count, the parent's
 * reply count and the ancestors' thread counts drop once (guarded by the post not being deleted
 * yet); its reposts are removed with it (their authors' counts drop).
 */
export async function deletePost(db: Db, post: PostBasics, viewerId: number): Promise<{ set: PostSet; view: PostView } | undefined> {
  const stillLive = sql`exists(select 1 from posts g where g.id = ${post.id} and g.is_deleted = 0)`;
  const writes: SQL[] = [sql`update users set posts = posts - 1 where id = ${post.userId} and ${stillLive}`];
  if (post.replyTo != null) {
    writes.push(
      sql`update posts set replies = replies - 1 where id = ${post.replyTo} and ${stillLive}`,
      sql`${ancestors(post.replyTo)} update posts set threads = threads - 1 where id in (select id from anc) and ${stillLive}`,
    );
  }
  writes.push(
    sql`update users set posts = posts - 1 where id in (select rp.user_id from posts rp where rp.repost_of = ${post.id})`,
    sql`delete from posts where repost_of = ${post.id}`,
    sql`update posts set is_deleted = 1, reposts = 0 where id = ${post.id}`,
    sql`delete from post_mentions where post_id = ${post.id}`,
  );
  const results = await mixedBatch(db, [...writes, postsQuery(db, viewerId, single(post.id))]);
  const set = toPostSet(results[results.length - 1] as PostRows);
  return set.page[0] ? { set, view: set.page[0] } : undefined;
}

export type RepostResult =
  | { ok: true; repost: PostView; original: PostView; set: PostSet }
  | { ok: false; reason: "already" | "deleted" };

/** Reposts `target` (an original post) as `userId`: a post of its own, in its own thread. */
export async function createRepost(
  db: Db,
  r: { userId: number; appId: number; target: { id: number; userId: number }; at: number },
): Promise<RepostResult> {
  const id = newestOf(r.userId);
  const writes: SQL[] = [
    // NOT NULL on user_id fails when already reposted, on app_id when the original is deleted.
    sql`insert into posts (user_id, app_id, thread_id, repost_of, created_at, revised_at)
      select case when exists(select 1 from posts e where e.repost_of = ${r.target.id} and e.user_id = ${r.userId}) then null else ${int(r.userId)} end,
        case when exists(select 1 from posts o where o.id = ${r.target.id} and o.is_deleted = 0) then ${int(r.appId)} else null end,
        0, ${r.target.id}, ${r.at}, ${r.at}`,
    sql`update posts set thread_id = id where id = ${id}`,
    sql`update posts set reposts = reposts + 1 where id = ${r.target.id}`,
    sql`update users set posts = posts + 1 where id = ${r.userId}`,
    ...interactionWrites({ userId: r.target.userId, action: "repost", objectId: r.target.id, actorId: r.userId, at: r.at }),
  ];
  try {
    const results = await mixedBatch(db, [...writes, postsQuery(db, r.userId, sql`select ${id} as id`)]);
    const set = toPostSet(results[results.length - 1] as PostRows);
    return { ok: true, repost: set.page[0], original: set.byId.get(r.target.id)!, set };
  } catch (err) {
    if (violates(err, "posts", "user_id")) return { ok: false, reason: "already" };
    if (violates(err, "posts", "app_id")) return { ok: false, reason: "deleted" };
    throw err;
  }
}

/** The post actions act on for a post id: the original of a repost, else the post. */
const actedOn = (postId: number) => sql`coalesce((select ao.repost_of from posts ao where ao.id = ${postId}), ${postId})`;

/**
 * Removes `userId`'s repost of the post `postId` acts on. Returns the removed repost as it was
 * (for the event; null if there was none) and the original, or undefined if there is no such post.
 */
export async function deleteRepost(db: Db, postId: number, userId: number) {
  const target = actedOn(postId);
  const mine = sql`exists(select 1 from posts e where e.repost_of = ${target} and e.user_id = ${userId})`;
  const [before, , , , after] = await mixedBatch(db, [
    postsQuery(db, userId, sql`select mr.id as id from posts mr where mr.repost_of = ${target} and mr.user_id = ${userId}`),
    sql`update posts set reposts = reposts - 1 where id = ${target} and ${mine}`,
    sql`update users set posts = posts - 1 where id = ${userId} and ${mine}`,
    sql`delete from posts where repost_of = ${target} and user_id = ${userId}`,
    postsQuery(db, userId, sql`select ${target} as id`),
  ] as const);
  const removed = toPostSet(before);
  const set = toPostSet(after);
  if (!set.page[0]) return undefined;
  return { removed: removed.page[0] ? removed : null, view: set.page[0], set };
}

export type BookmarkResult = { ok: true; view: PostView; set: PostSet } | { ok: false };

/** Bookmarks a post (deleted posts too). `ok: false` when it was already bookmarked. */
export async function addBookmark(db: Db, b: { userId: number; target: { id: number; userId: number }; at: number }): Promise<BookmarkResult> {
  try {
    const results = await mixedBatch(db, [
      // The primary key refuses a second bookmark, rolling the counters back with it.
      sql`insert into bookmarks (user_id, post_id, created_at) values (${b.userId}, ${b.target.id}, ${b.at})`,
      sql`update posts set bookmarks = bookmarks + 1 where id = ${b.target.id}`,
      sql`update users set bookmarks = bookmarks + 1 where id = ${b.userId}`,
      ...interactionWrites({ userId: b.target.userId, action: "bookmark", objectId: b.target.id, actorId: b.userId, at: b.at }),
      postsQuery(db, b.userId, single(b.target.id)),
    ]);
    const set = toPostSet(results[results.length - 1] as PostRows);
    return { ok: true, view: set.page[0], set };
  } catch (err) {
    if (violates(err, "bookmarks")) return { ok: false };
    throw err;
  }
}

/** Removes a bookmark of the post `postId` acts on; `removed` tells whether there was one. */
export async function removeBookmark(db: Db, postId: number, userId: number) {
  const target = actedOn(postId);
  const has = sql`exists(select 1 from bookmarks hb where hb.user_id = ${userId} and hb.post_id = ${target})`;
  const [, , removed, rows] = await mixedBatch(db, [
    sql`update posts set bookmarks = bookmarks - 1 where id = ${target} and ${has}`,
    sql`update users set bookmarks = bookmarks - 1 where id = ${userId} and ${has}`,
    sql`delete from bookmarks where user_id = ${userId} and post_id = ${target} returning post_id`,
    postsQuery(db, userId, sql`select ${target} as id`),
  ] as const);
  const set = toPostSet(rows);
  if (!set.page[0]) return undefined;
  return { removed: removed.results.length > 0, view: set.page[0], set };
}
