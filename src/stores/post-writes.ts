import { sql, type SQL } from "drizzle-orm";
import { LIMITS } from "../config";
import type { Db } from "../db";
import { boundShape, boundShapes, mixedBatch, placeholder as v, violates, type BoundQuery } from "../db/batch";
import type { RawResult } from "../db/types";
import {
  capturedSeq,
  refValues,
  reserveCaptured,
  reservedSeq,
  reservedValues,
  reserveEvent,
  reserveEventShape,
  reserveRefShape,
  refText,
  type OutboxRef,
} from "../events/outbox";
import { dialect, inList, int, jsonItem, jsonRows, jsonValues, lastId, text } from "../db/dialect";
import type { TextResult } from "../text";
import { fanOutSql, repostsClearSql } from "./home-timeline";
import { interactionValues, interactionWritesShape, recordsInteraction, type InteractionEvent } from "./interactions";
import { markerWriteSql } from "./markers";
import { messageFacets, rawAttachments } from "./messages";
import { onePostPage, postsQuery, toPostSet, type PostRows, type PostSet, type PostView } from "./posts";

// Writes of posts. Each is one atomic batch that ends with the read of the post it returns.
// Conditions that another request may change between our check and the batch (a duplicate, a
// deleted reply target, an existing repost/bookmark/revision) are re-checked inside the batch by
// statements that fail on a constraint (NOT NULL fed a null, a unique key), which rolls the batch
// back: counters can then be plain increments, exact under concurrency.

/**
 * The post the batch just inserted for a user: where batches never interleave (D1) their newest
 * post, else the posts sequence's value in this transaction.
 */
const newestOf = (userId: number | SQL) => (dialect.serializesWrites ? sql`(select max(np.id) from posts np where np.user_id = ${userId})` : lastId("posts"));

/** The page of the post the batch just inserted for `user` (see `newestOf`), compiled once. */
const newestPostPage = (user: number) => boundShape("newest-post-page", () => sql`select ${newestOf(v("user"))} as id`, { user });

/** Explore `newcomers`: 1 while the author has fewer than NEWCOMER_POSTS original posts (before the insert). */
const NEWCOMER_POSTS = 50;
const newcomer = (userId: number | SQL) => sql`case when (select nc.id from posts nc where nc.user_id = ${userId} and nc.repost_of is null
  order by nc.id limit 1 offset ${sql.raw(String(NEWCOMER_POSTS - 1))}) is null then 1 else 0 end`;

/** Explore `conversations` for the row of `posts` being updated (a thread root): a live reply by someone else. */
const conversation = sql`case when exists(select 1 from posts cr where cr.thread_id = posts.id and cr.id <> posts.id
  and cr.user_id <> posts.user_id and cr.is_deleted = 0) then 1 else 0 end`;

/** Ancestors of a post (itself included), walking reply_to up to the thread root. */
const ancestors = (postId: number | SQL) =>
  sql`with recursive anc(id) as (select ${int(postId)} union select ap.reply_to from posts ap join anc on ap.id = anc.id where ap.reply_to is not null)`;

const mentionIds = (text: TextResult) => JSON.stringify([...new Set(text.entities.mentions.map((m) => Number(m.id)))]);

const OEMBED_TYPE = "io.example.core.oembed";

/**
 * Search facets of a post (post search's filters, the tag and explore streams): those of a message
 * (mentions, leading mentions, tags, URLs, domains, raw types), copy mentions, the poll attached
 * and the `type` of each oEmbed item (`photo`, `video`, ...).
 */
export function postFacets(text: TextResult, raw: unknown): [string, string][] {
  const out: [string, string][] = [...messageFacets(text, raw)];
  for (const m of text.entities.mentions) if (m.id && m.is_copy) out.push(["copy_mention", m.text.toLowerCase()]);
  const { pollId } = rawAttachments(raw);
  if (pollId != null) out.push(["poll", String(pollId)]);
  const oembeds = raw && typeof raw === "object" ? (raw as Record<string, unknown>)[OEMBED_TYPE] : undefined;
  if (Array.isArray(oembeds)) {
    for (const o of oembeds) {
      const type = o && typeof o === "object" ? (o as { type?: unknown }).type : undefined;
      if (typeof type === "string" && type.length <= 64) out.push(["oembed", type.toLowerCase()]);
    }
  }
  return [...new Map(out.map((f) => [f.join("\u0000"), f])).values()];
}

/**
 * The statement writing a post's facets: `facets` (their values with `sentinel` replaced by the id,
 * as `{object_id}` in link URLs) and the files the raw names (`file`, `file_kind`) that exist.
 */
function facetsInsert(
  postId: SQL | number,
  facets: [string, string][] | SQL,
  fileIds: number[] | SQL,
  sentinel: string | SQL | null,
  when: SQL = sql`1 = 1`,
): SQL | null {
  // Lists as SQL: placeholders of a statement compiled once (the caller knows they are not both empty).
  if (Array.isArray(facets) && Array.isArray(fileIds) && !facets.length && !fileIds.length) return null;
  const id = typeof postId === "number" ? int(postId) : postId;
  const value = sentinel ? sql`replace(${jsonItem(sql`j.value`, 1)}, ${text(sentinel)}, CAST(${id} AS TEXT))` : jsonItem(sql`j.value`, 1);
  return sql`INSERT INTO post_facets (post_id, facet, value)
    SELECT fx.post_id, fx.facet, fx.value FROM (
      SELECT ${id} AS post_id, ${jsonItem(sql`j.value`, 0)} AS facet, ${value} AS value FROM ${jsonValues(facets, "j")}
      UNION ALL SELECT ${id}, 'file', CAST(f.id AS TEXT) FROM files f WHERE f.id IN ${inList(fileIds)} AND f.is_deleted = 0
      UNION ALL SELECT ${id}, 'file_kind', f.kind FROM files f WHERE f.id IN ${inList(fileIds)} AND f.is_deleted = 0
    ) fx WHERE ${when}
    ON CONFLICT DO NOTHING`;
}

const readBack = (results: unknown[]): PostSet => toPostSet(results[results.length - 1] as PostRows);

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
  /** The post event's outbox row, reserved in the same batch (src/events/outbox.ts). */
  event?: OutboxRef;
}

export type CreateResult = { ok: true; set: PostSet; view: PostView; seq?: number } | { ok: false; reason: "duplicate" | "reply_to" };

export async function createPost(db: Db, p: NewPost): Promise<CreateResult> {
  const facets = postFacets(p.text, p.raw);
  const { fileIds } = rawAttachments(p.raw);
  const reply: InteractionEvent | null = p.replyTo && { userId: p.replyTo.userId, action: "reply", objectId: p.replyTo.id, actorId: p.userId, at: p.at };
  const shape: PostShape = {
    reply: reply !== null,
    replyRecorded: reply !== null && recordsInteraction(reply),
    sentinel: p.sentinel !== null,
    mentions: p.text.entities.mentions.length > 0,
    facets: facets.length > 0 || fileIds.length > 0,
  };
  const values = {
    user: p.userId,
    app: p.appId,
    text: p.text.text,
    html: p.text.html,
    entities: JSON.stringify(p.text.entities),
    nsfw: p.isNsfw ? 1 : 0,
    raw: p.raw === undefined ? null : JSON.stringify(p.raw),
    at: p.at,
    since: p.at - LIMITS.post.seconds_between_duplicates,
    replyId: p.replyTo?.id ?? null,
    sentinel: p.sentinel,
    mentions: mentionIds(p.text),
    facets: JSON.stringify(facets),
    files: JSON.stringify(fileIds),
    ...(reply ? interactionValues(reply) : {}),
    ...(p.event ? reservedValues(p.event, p.at) : {}),
  };
  // The post's own writes (a reply's too) compiled once per shape and bound per request (drizzle's
  // compile cost more CPU than the write); the marker's are built per request.
  const writes: (SQL | BoundQuery)[] = boundShapes(`post-create:${Object.values(shape).map(Number).join("")}`, () => postWrites(shape), values);
  if (p.marker) {
    writes.push(
      markerWriteSql({ userId: p.userId, name: "personal", position: newestOf(p.userId), percentage: 0, reset: false, version: p.marker.version, at: p.at }),
    );
  }
  // The outbox row last among the writes: on Postgres it takes the outbox lock, held to commit.
  if (p.event) writes.push(boundShape("post-create-event", () => reserveEventShape("post", newestOf(v("user"))), values));
  try {
    const results = await mixedBatch(db, [...writes, postsQuery(p.userId, newestPostPage(p.userId))]);
    const set = readBack(results);
    return { ok: true, set, view: set.page[0], seq: p.event ? reservedSeq(results[results.length - 2] as RawResult) : undefined };
  } catch (err) {
    if (violates(err, "posts", "user_id")) return { ok: false, reason: "duplicate" };
    if (violates(err, "posts", "thread_id")) return { ok: false, reason: "reply_to" };
    throw err;
  }
}

/** What decides the text of a post create's own writes. */
interface PostShape {
  reply: boolean;
  /** A reply to someone else's post: an interaction of its author's. */
  replyRecorded: boolean;
  sentinel: boolean;
  mentions: boolean;
  facets: boolean;
}

/** A post create's own writes: the row, its thread id and `{object_id}`, mentions, facets, the author's count and the home fan-out. */
function postWrites(s: PostShape): SQL[] {
  const user = v("user");
  const duplicate = sql`exists(select 1 from posts d where d.user_id = ${user} and d.text = ${v("text")}
    and d.repost_of is null and d.is_deleted = 0 and d.created_at > ${v("since")})`;
  const threadId = s.reply ? sql`(select t.thread_id from posts t where t.id = ${v("replyId")} and t.is_deleted = 0)` : sql`0`;
  const id = newestOf(user);
  const writes: SQL[] = [
    // NOT NULL on user_id fails a duplicate, on thread_id a reply to a missing or deleted post.
    sql`insert into posts (user_id, app_id, thread_id, reply_to, text, html, entities, is_nsfw, raw, created_at, revised_at, is_newcomer)
      select case when ${duplicate} then null else ${int(user)} end, ${v("app")}, ${threadId}, ${v("replyId")},
        ${v("text")}, ${v("html")}, ${v("entities")}, ${v("nsfw")},
        ${v("raw")}, ${v("at")}, ${v("at")}, ${newcomer(user)}`,
  ];
  if (!s.reply || s.sentinel) {
    const fixId = s.sentinel
      ? sql`, html = replace(html, ${v("sentinel")}, CAST(id AS TEXT)), entities = replace(entities, ${v("sentinel")}, CAST(id AS TEXT))`
      : sql``;
    writes.push(sql`update posts set thread_id = case when thread_id = 0 then id else thread_id end ${fixId} where id = ${id}`);
  }
  if (s.mentions) {
    writes.push(sql`insert into post_mentions (post_id, user_id) select ${id}, j.value from ${jsonRows(v("mentions"), "j")} where true on conflict do nothing`);
  }
  if (s.facets) writes.push(facetsInsert(id, v("facets"), v("files"), s.sentinel ? v("sentinel") : null)!);
  // The author's row is updated (locked, on Postgres) before the fan-out: see home-timeline.ts.
  writes.push(sql`update users set posts = posts + 1 where id = ${user}`, fanOutSql(user, id));
  if (s.reply) {
    const replyId = v("replyId");
    writes.push(
      sql`update posts set replies = replies + 1 where id = ${replyId}`,
      sql`update posts set is_conversation = 1 where id = (select rt.thread_id from posts rt where rt.id = ${id}) and user_id <> ${user}`,
      sql`${ancestors(replyId)} update posts set threads = threads + 1 where id in (select id from anc)`,
      ...(s.replyRecorded ? interactionWritesShape("reply") : []),
    );
  }
  return writes;
}

export interface Revision {
  postId: number;
  text: TextResult;
  isNsfw: boolean;
  /** undefined keeps the current raw. */
  raw: unknown;
  /** The raw the post has now (its facets are rewritten from the raw it keeps). */
  currentRaw: unknown;
  at: number;
  viewerId: number;
  /** The post event's outbox row, reserved in the same batch. */
  event?: OutboxRef;
}

/**
 * Logs a revision or deletion of the posts `cp` that `which` selects (before a deletion removes
 * them), for polling clients' `meta.revised_ids` / `deleted_ids` (stores/post-changes).
 */
function changeLogSql(which: SQL, deletion: boolean): SQL {
  return sql`insert into post_changes (post_id, user_id, thread_id, is_repost, is_deletion, mark)
    select cp.id, cp.user_id, cp.thread_id, case when cp.repost_of is null then 0 else 1 end, ${sql.raw(deletion ? "1" : "0")},
      (select max(mp.id) from posts mp) from posts cp where ${which}`;
}

/** Revises a post; the current version becomes revision 0. Returns null if it was revised meanwhile. */
export async function revisePost(db: Db, r: Revision): Promise<{ set: PostSet; view: PostView; seq?: number } | null> {
  const rawSet = r.raw === undefined ? sql`` : sql`, raw = ${JSON.stringify(r.raw)}`;
  const raw = r.raw === undefined ? r.currentRaw : r.raw;
  // A post deleted since the route looked keeps its mentions and facets (its tag lists show it deleted).
  const live = sql`exists(select 1 from posts where id = ${r.postId} and is_deleted = 0 and repost_of is null)`;
  const writes: SQL[] = [
    // The primary key (post_id, revision) refuses a second revision, rolling the batch back.
    sql`insert into post_revisions (post_id, revision, text, html, entities, is_nsfw, raw, created_at)
      select id, 0, text, html, entities, is_nsfw, raw, created_at from posts where id = ${r.postId} and is_deleted = 0 and repost_of is null`,
    sql`update posts set text = ${r.text.text}, html = ${r.text.html}, entities = ${JSON.stringify(r.text.entities)},
      is_nsfw = ${r.isNsfw ? 1 : 0} ${rawSet}, is_revised = 1, revised_at = ${r.at}
      where id = ${r.postId} and is_deleted = 0 and repost_of is null`,
    changeLogSql(sql`cp.id = ${r.postId} and cp.is_deleted = 0 and cp.repost_of is null`, false),
    sql`delete from post_mentions where post_id = ${r.postId} and ${live}`,
    sql`delete from post_facets where post_id = ${r.postId} and ${live}`,
  ];
  if (r.text.entities.mentions.length) {
    writes.push(sql`insert into post_mentions (post_id, user_id)
      select ${r.postId}, j.value from ${jsonRows(mentionIds(r.text), "j")} where ${live}
      on conflict do nothing`);
  }
  const facets = facetsInsert(r.postId, postFacets(r.text, raw), rawAttachments(raw).fileIds, null, live);
  if (facets) writes.push(facets);
  // Last (the outbox lock on Postgres); none when the post was deleted meanwhile (nothing revised).
  if (r.event) writes.push(reserveEvent("post", { ...r.event, id: r.postId }, r.at, undefined, live));
  try {
    const results = await mixedBatch(db, [...writes, postsQuery(r.viewerId, onePostPage(r.postId))]);
    const set = readBack(results);
    const seq = r.event ? reservedSeq(results[results.length - 2] as RawResult) : undefined;
    return set.page[0] ? { set, view: set.page[0], seq } : null;
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
export async function deletePost(
  db: Db,
  post: { id: number; userId: number; replyTo: number | null },
  viewerId: number,
  event?: { ref: OutboxRef; at: number },
): Promise<{ set: PostSet; view: PostView; seq?: number } | undefined> {
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
    changeLogSql(sql`cp.repost_of = ${post.id}`, true),
    changeLogSql(sql`cp.id = ${post.id} and cp.is_deleted = 0`, true),
    repostsClearSql(sql`select rr.id from posts rr where rr.repost_of = ${post.id}`),
    sql`delete from posts where repost_of = ${post.id}`,
  );
  // The event is reserved only when this batch deletes the post (it was still live here).
  const reservation = event
    ? reserveCaptured("post", event.at, sql`case when ${stillLive} then ${refText({ ...event.ref, isDeleted: true }, { id: int(post.id) })} end`)
    : null;
  if (reservation) writes.push(reservation.capture);
  writes.push(
    sql`update posts set is_deleted = 1, reposts = 0 where id = ${post.id}`,
    // Its thread's root stays a conversation while another live reply by someone else remains.
    sql`update posts set is_conversation = ${conversation} where id = (select dt.thread_id from posts dt where dt.id = ${post.id}) and id <> ${post.id}`,
    sql`delete from post_mentions where post_id = ${post.id}`,
    // Facets stay: tag and explore lists show the deleted post as a tombstone (include_deleted=1),
    // and search leaves deleted posts out by itself.
  );
  if (reservation) writes.push(reservation.insert);
  const results = await mixedBatch(db, [...writes, postsQuery(viewerId, onePostPage(post.id))]);
  const set = readBack(results);
  const seq = reservation ? capturedSeq(results[writes.indexOf(reservation.capture)] as RawResult, results[writes.length - 1] as RawResult) : undefined;
  return set.page[0] ? { set, view: set.page[0], seq } : undefined;
}

export type RepostResult = { ok: true; repost: PostView; original: PostView; set: PostSet; seq?: number } | { ok: false; reason: "already" | "deleted" };

/**
 * Reposts `target` (an original post) as `userId`: a post of its own, in its own thread. `isNsfw`
 * marks the repost itself (it shows NSFW when the original is, too).
 */
export async function createRepost(
  db: Db,
  r: { userId: number; appId: number; target: { id: number; userId: number }; isNsfw: boolean; at: number; event?: OutboxRef },
): Promise<RepostResult> {
  const interaction: InteractionEvent = { userId: r.target.userId, action: "repost", objectId: r.target.id, actorId: r.userId, at: r.at };
  const recorded = recordsInteraction(interaction);
  const values = {
    user: r.userId,
    app: r.appId,
    target: r.target.id,
    nsfw: r.isNsfw ? 1 : 0,
    at: r.at,
    ...interactionValues(interaction),
    ...(r.event ? reservedValues(r.event, r.at) : {}),
  };
  const writes = boundShapes(`repost-create:${Number(recorded)}${Number(!!r.event)}`, () => repostWrites(recorded, !!r.event), values);
  try {
    const results = await mixedBatch(db, [...writes, postsQuery(r.userId, newestPostPage(r.userId))]);
    const set = readBack(results);
    const seq = r.event ? reservedSeq(results[results.length - 2] as RawResult) : undefined;
    return { ok: true, repost: set.page[0], original: set.byId.get(r.target.id)!, set, seq };
  } catch (err) {
    if (violates(err, "posts", "user_id")) return { ok: false, reason: "already" };
    if (violates(err, "posts", "app_id")) return { ok: false, reason: "deleted" };
    throw err;
  }
}

/** A repost's writes, compiled once per shape: the post, its thread id, the counters, the home fan-out, the interaction, the event. */
function repostWrites(recorded: boolean, event: boolean): SQL[] {
  const [user, target] = [v("user"), v("target")];
  const id = newestOf(user);
  return [
    // NOT NULL on user_id fails when already reposted, on app_id when the original is deleted.
    sql`insert into posts (user_id, app_id, thread_id, repost_of, is_nsfw, created_at, revised_at)
      select case when exists(select 1 from posts e where e.repost_of = ${target} and e.user_id = ${user}) then null else ${int(user)} end,
        case when exists(select 1 from posts o where o.id = ${target} and o.is_deleted = 0) then ${int(v("app"))} else null end,
        0, ${target}, ${v("nsfw")}, ${v("at")}, ${v("at")}`,
    sql`update posts set thread_id = id where id = ${id}`,
    sql`update posts set reposts = reposts + 1 where id = ${target}`,
    sql`update users set posts = posts + 1 where id = ${user}`,
    fanOutSql(user, id),
    ...(recorded ? interactionWritesShape("repost") : []),
    ...(event ? [reserveEventShape("post", id)] : []),
  ];
}

/** The post actions act on for a post id: the original of a repost, else the post. */
const actedOn = (postId: number) => sql`coalesce((select ao.repost_of from posts ao where ao.id = ${postId}), ${postId})`;

/**
 * Removes `userId`'s repost of the post `postId` acts on. Returns the removed repost as it was
 * (for the event; null if there was none) and the original, or undefined if there is no such post.
 */
export async function deleteRepost(db: Db, postId: number, userId: number, event?: { ref: OutboxRef; at: number }) {
  const target = actedOn(postId);
  const mine = sql`exists(select 1 from posts e where e.repost_of = ${target} and e.user_id = ${userId})`;
  // The repost row is gone after the batch: its reference keeps what rendering it needs (`repost`).
  const reservation = reserveCaptured(
    "post",
    event?.at ?? 0,
    event
      ? sql`(select ${refText(
          { ...event.ref, isDeleted: true },
          {
            id: sql`sr.id`,
            repost: sql`'{"repostOf":' || CAST(sr.repost_of AS TEXT) || ',"appId":' || CAST(sr.app_id AS TEXT) || ',"isNsfw":' || CAST(sr.is_nsfw AS TEXT) || ',"createdAt":' || CAST(sr.created_at AS TEXT) || '}'`,
          },
        )} from posts sr where sr.repost_of = ${target} and sr.user_id = ${userId})`
      : sql`NULL`,
  );
  const [before, , , , , capture, , insert, after] = await mixedBatch(db, [
    postsQuery(userId, sql`select mr.id as id from posts mr where mr.repost_of = ${target} and mr.user_id = ${userId}`),
    sql`update posts set reposts = reposts - 1 where id = ${target} and ${mine}`,
    sql`update users set posts = posts - 1 where id = ${userId} and ${mine}`,
    changeLogSql(sql`cp.repost_of = ${target} and cp.user_id = ${userId}`, true),
    repostsClearSql(sql`select dr.id from posts dr where dr.repost_of = ${target} and dr.user_id = ${userId}`),
    reservation.capture,
    sql`delete from posts where repost_of = ${target} and user_id = ${userId}`,
    reservation.insert,
    postsQuery(userId, sql`select ${target} as id`),
  ] as const);
  const removed = toPostSet(before);
  const set = toPostSet(after);
  if (!set.page[0]) return undefined;
  return { removed: removed.page[0] ? removed : null, view: set.page[0], set, seq: capturedSeq(capture, insert) };
}

export type BookmarkResult = { ok: true; view: PostView; set: PostSet; seq?: number } | { ok: false };

/** Bookmarks a post (deleted posts too) with an optional note. `ok: false` when it was already bookmarked. */
export async function addBookmark(
  db: Db,
  b: { userId: number; target: { id: number; userId: number }; note: string | null; at: number; event?: OutboxRef },
): Promise<BookmarkResult> {
  const interaction: InteractionEvent = { userId: b.target.userId, action: "bookmark", objectId: b.target.id, actorId: b.userId, at: b.at };
  const recorded = recordsInteraction(interaction);
  const values = {
    user: b.userId,
    post: b.target.id,
    note: b.note,
    at: b.at,
    ...interactionValues(interaction),
    // The reference names the post; the actor is route.actorId.
    ...(b.event ? refValues({ ...b.event, id: b.target.id }, b.at) : {}),
  };
  // Compiled once per shape (drizzle's compile cost more CPU than the write), bound per request.
  const writes = boundShapes(`bookmark-add:${Number(recorded)}${Number(!!b.event)}`, () => bookmarkWrites(recorded, !!b.event), values);
  try {
    const results = await mixedBatch(db, [...writes, postsQuery(b.userId, onePostPage(b.target.id))]);
    const set = readBack(results);
    return { ok: true, view: set.page[0], set, seq: b.event ? reservedSeq(results[results.length - 2] as RawResult) : undefined };
  } catch (err) {
    if (violates(err, "bookmarks")) return { ok: false };
    throw err;
  }
}

function bookmarkWrites(recorded: boolean, event: boolean): SQL[] {
  return [
    // The unique key (user_id, post_id) refuses a second bookmark, rolling the counters back with it.
    sql`insert into bookmarks (user_id, post_id, note, created_at) values (${v("user")}, ${v("post")}, ${v("note")}, ${v("at")})`,
    sql`update posts set bookmarks = bookmarks + 1 where id = ${v("post")}`,
    sql`update users set bookmarks = bookmarks + 1 where id = ${v("user")}`,
    ...(recorded ? interactionWritesShape("bookmark") : []),
    ...(event ? [reserveRefShape("bookmark")] : []),
  ];
}

/** Sets the note of an existing bookmark (null clears it). */
export async function setBookmarkNote(db: Db, userId: number, postId: number, note: string | null): Promise<void> {
  await mixedBatch(db, [sql`update bookmarks set note = ${note} where user_id = ${userId} and post_id = ${postId}`]);
}

/** Removes a bookmark of the post `postId` acts on; `removed` tells whether there was one. */
export async function removeBookmark(db: Db, postId: number, userId: number, event?: { ref: OutboxRef; at: number }) {
  const target = actedOn(postId);
  const has = sql`exists(select 1 from bookmarks hb where hb.user_id = ${userId} and hb.post_id = ${target})`;
  const reservation = reserveCaptured(
    "bookmark",
    event?.at ?? 0,
    event ? sql`case when ${has} then ${refText({ ...event.ref, isDeleted: true }, { id: target })} end` : sql`NULL`,
  );
  const [, , capture, removed, insert, rows] = await mixedBatch(db, [
    sql`update posts set bookmarks = bookmarks - 1 where id = ${target} and ${has}`,
    sql`update users set bookmarks = bookmarks - 1 where id = ${userId} and ${has}`,
    reservation.capture,
    sql`delete from bookmarks where user_id = ${userId} and post_id = ${target} returning post_id`,
    reservation.insert,
    postsQuery(userId, sql`select ${target} as id`),
  ] as const);
  const set = toPostSet(rows);
  if (!set.page[0]) return undefined;
  return { removed: removed.results.length > 0, view: set.page[0], set, seq: capturedSeq(capture, insert) };
}

export const POST_REPORT_REASONS = ["account_type", "nsfw", "soliciting", "user_abuse"] as const;
export type PostReportReason = (typeof POST_REPORT_REASONS)[number];

/**
 * Stores a report of a live post (the same reporter, post and reason are stored once) and returns
 * the post; undefined (nothing stored) when there is no such live post.
 */
export async function reportPost(db: Db, r: { postId: number; reporterId: number; reason: PostReportReason; at: number }) {
  const [, rows] = await mixedBatch(db, [
    sql`insert into post_reports (post_id, reporter_id, reason, created_at)
      select ${r.postId}, ${r.reporterId}, ${r.reason}, ${r.at} where exists(select 1 from posts rp where rp.id = ${r.postId} and rp.is_deleted = 0)
      on conflict do nothing`,
    postsQuery(r.reporterId, sql`select lp.id as id from posts lp where lp.id = ${r.postId} and lp.is_deleted = 0`),
  ] as const);
  const set = toPostSet(rows);
  return set.page[0] ? { view: set.page[0], set } : undefined;
}
