import { sql, type SQL } from "drizzle-orm";
import { BoundQuery, boundShape } from "../../db/batch";
import { dialect, inList, pgArrayLiteral } from "../../db/dialect";
import type { Page } from "../../http/pagination";
import type { PostFilters } from "../../http/params";
import { pageBoundsSql } from "../channel-sql";
import { filterConditions, visibleTo } from "../post-lists";
import { pageRow } from "../posts";
import { ftsQuery } from "./fts5";
import { tsQuery } from "./postgres";
import { hitsCte, relevanceBounds, RELEVANCE_WINDOW, wordMatcher, type SearchFilters } from "./filters";

// Post search (GET /posts/search): live original posts (no reposts), every filter a condition on
// the post or an EXISTS on its facets, words matched per backend like message search: FTS5's
// `post_search` (porter, bm25) on D1, the `search_vector` column (es_english, ts_rank) on
// Postgres (schema/*/migrations/*_post_user_search.sql). One statement gives the page's
// `pageRow`s for `postsQuery(…, { paged: true })`.

/** A post search, validated and normalised by the route (all words required). */
export interface PostSearch extends SearchFilters {
  excludeUserIds?: number[];
  /** Set: only posts with (true) or without (false) mentions; the other mention filters are ignored. */
  hasMentions?: boolean;
  directedOnly?: boolean;
  revisedOnly?: boolean;
}

// The page is compiled once per shape (`postSearchShapeKey`) and bound per request, unless the
// actors' statement must embed it as SQL: builders take `val`, which gives a value by name, or
// its placeholder (`postSearchValues` has them all; lists as one JSON parameter).
type Val = (name: string) => unknown;
const valSql = (val: Val, name: string): SQL => sql`${val(name)}`;

const facet = (val: Val, name: string) =>
  sql`EXISTS (SELECT 1 FROM post_facets sf WHERE sf.facet = ${name} AND sf.value IN ${inList(valSql(val, `facet_${name}`), "text")} AND sf.post_id = "posts"."id")`;
const anyFacet = (name: string) => sql`EXISTS (SELECT 1 FROM post_facets sf WHERE sf.post_id = "posts"."id" AND sf.facet = ${name})`;

/**
 * Not a repost. On Postgres as `IS TRUE`: estimated the same (from the column's null fraction), but no
 * index condition, so a phrase's GIN bitmap is not ANDed with the repost_of index's 145,000 originals
 * (7 ms of a 23 ms search); the reposts are left out as the matches are read.
 */
const original = dialect.pick({
  sqlite: () => sql`"posts"."repost_of" IS NULL`,
  postgres: () => sql`("posts"."repost_of" IS NULL) IS TRUE`,
});

/** The facet filters (values as strings) a post search has, by facet name; undefined or empty when absent. */
function facetLists(s: PostSearch): Record<string, readonly string[] | undefined> {
  const mentionsApply = s.hasMentions === undefined;
  return {
    file: s.fileId !== undefined ? [String(s.fileId)] : undefined,
    file_kind: s.fileKinds,
    leading_mention: mentionsApply ? s.leadingMentions : undefined,
    mention: mentionsApply ? s.mentions : undefined,
    poll: s.pollId !== undefined ? [String(s.pollId)] : undefined,
    raw_type: s.rawTypes,
    tag: s.tags,
    url_domain: s.urlDomains,
    url: s.urls,
  };
}

/** Every condition on `posts` besides the words: liveness, the filters, the viewer's mutes and blocks, the general filters. */
function conditions(s: PostSearch, viewerId: number | null, filters: PostFilters, val: Val): SQL {
  const c: SQL[] = [sql`"posts"."is_deleted" = 0`, original()];
  const facets = facetLists(s);
  const has = (name: string) => !!facets[name]?.length;
  if (s.clientId !== undefined) c.push(sql`"posts"."app_id" IN (SELECT id FROM apps WHERE client_id = ${val("clientId")})`);
  if (s.createdAfter !== undefined) c.push(sql`"posts"."created_at" > ${val("createdAfter")}`);
  if (s.createdBefore !== undefined) c.push(sql`"posts"."created_at" < ${val("createdBefore")}`);
  if (s.creator) {
    c.push(
      "id" in s.creator ? sql`"posts"."user_id" = ${val("creatorId")}` : sql`"posts"."user_id" = (SELECT id FROM users WHERE username = ${val("creatorName")})`,
    );
  }
  if (s.excludeUserIds?.length) c.push(sql`"posts"."user_id" NOT IN ${inList(valSql(val, "excludeUserIds"))}`);
  if (has("file")) c.push(facet(val, "file"));
  if (has("file_kind")) c.push(facet(val, "file_kind"));
  if (s.hasMentions !== undefined) c.push(s.hasMentions ? anyFacet("mention") : sql`NOT ${anyFacet("mention")}`);
  else {
    if (s.directedOnly) c.push(anyFacet("leading_mention"));
    if (has("leading_mention")) c.push(facet(val, "leading_mention"));
    if (has("mention")) c.push(facet(val, "mention"));
  }
  if (s.excludeNsfw) c.push(sql`"posts"."is_nsfw" = 0`);
  if (s.isReply !== undefined) c.push(s.isReply ? sql`"posts"."reply_to" IS NOT NULL` : sql`"posts"."reply_to" IS NULL`);
  if (s.revisedOnly) c.push(sql`"posts"."is_revised" = 1`);
  if (has("poll")) c.push(facet(val, "poll"));
  if (has("raw_type")) c.push(facet(val, "raw_type"));
  if (s.replyTo !== undefined) c.push(sql`"posts"."reply_to" = ${val("replyTo")}`);
  if (has("tag")) c.push(facet(val, "tag"));
  if (s.threadId !== undefined) c.push(sql`"posts"."thread_id" = ${val("threadId")}`);
  if (has("url_domain")) c.push(facet(val, "url_domain"));
  if (has("url")) c.push(facet(val, "url"));
  if (s.userTypes?.length)
    c.push(sql`EXISTS (SELECT 1 FROM users ut WHERE ut.id = "posts"."user_id" AND ut.type IN ${inList(valSql(val, "userTypes"), "text")})`);
  const viewer = viewerId == null ? null : (val("viewer") as number);
  c.push(...filterConditions(filters, viewer), visibleTo(viewer, filters.muted));
  return sql.join(c, sql` AND `);
}

/** The facet filter a search without words walks (most selective kinds first), if any. */
function facetDriver(s: PostSearch): string | undefined {
  const facets = facetLists(s);
  return ["file", "poll", "url", "tag", "mention", "leading_mention", "url_domain", "raw_type"].find((name) => facets[name]?.length);
}

/** How words are matched and ranked on each backend (`terms`: the tsquery's array literal, `match`: the FTS5 query). */
const matcher = (val: Val) =>
  wordMatcher(
    "posts",
    "post_search",
    () => tsQuery(valSql(val, "terms")),
    () => valSql(val, "match"),
    sql`bm25(post_search)`,
  );

/** What decides the text of a post search's page (see `postSearchShapeKey`'s use); from code and flags only. */
function postSearchShapeKey(s: PostSearch, page: Page, viewerId: number | null, f: PostFilters): string {
  const flag = (x: unknown) => (x === undefined || x === false || (Array.isArray(x) && !x.length) ? "0" : "1");
  const tri = (x: boolean | undefined) => (x === undefined ? "-" : x ? "y" : "n");
  const facets = facetLists(s);
  const present = [
    s.clientId,
    s.createdAfter,
    s.createdBefore,
    s.excludeUserIds,
    s.directedOnly,
    s.excludeNsfw,
    s.revisedOnly,
    s.replyTo,
    s.threadId,
    s.userTypes,
  ];
  const bound = (id: number | undefined, inclusive: boolean | undefined) => (id === undefined ? "-" : inclusive ? "=" : "<");
  return [
    "post-search",
    s.terms.length ? "words" : "none",
    s.order,
    viewerId == null ? "anon" : "viewer",
    present.map(flag).join(""),
    Object.values(facets).map(flag).join(""),
    s.creator ? ("id" in s.creator ? "i" : "n") : "-",
    tri(s.hasMentions) + tri(s.isReply),
    [f.deleted, f.replies, f.mentionPosts, f.directed, f.muted].map(flag).join(""),
    page.newestFirst,
    bound(page.sinceId, page.sinceInclusive) + bound(page.beforeId, page.beforeInclusive),
  ].join(":");
}

/** The values of a post search's page by name. */
function postSearchValues(s: PostSearch, page: Page, viewerId: number | null): Record<string, unknown> {
  const values: Record<string, unknown> = {
    viewer: viewerId,
    clientId: s.clientId,
    createdAfter: s.createdAfter,
    createdBefore: s.createdBefore,
    creatorId: s.creator && "id" in s.creator ? s.creator.id : undefined,
    creatorName: s.creator && "username" in s.creator ? s.creator.username : undefined,
    excludeUserIds: JSON.stringify(s.excludeUserIds ?? []),
    replyTo: s.replyTo,
    threadId: s.threadId,
    userTypes: JSON.stringify(s.userTypes ?? []),
    terms: dialect.backend === "postgres" ? pgArrayLiteral(s.terms) : null,
    match: ftsQuery(s.terms),
    limit: page.limit + 1,
    since: page.sinceId,
    before: page.beforeId,
    sinceKey: page.sinceId === undefined ? undefined : -page.sinceId,
    beforeKey: page.beforeId === undefined ? undefined : -page.beforeId,
  };
  for (const [name, list] of Object.entries(facetLists(s))) values[`facet_${name}`] = JSON.stringify(list ?? []);
  return values;
}

/**
 * The page of a post search as `pageRow`s, compiled once per shape and bound to this search's
 * values; as SQL with its values when `asSql` (the actors' statement embeds it).
 */
export function postSearchPage(s: PostSearch, page: Page, viewerId: number | null, filters: PostFilters, asSql = false): SQL | BoundQuery {
  const values = postSearchValues(s, page, viewerId);
  if (asSql) return postSearchSql(s, page, viewerId, filters, (name) => values[name], false);
  const placeholder = (name: string) => sql.placeholder(name);
  const bound = boundShape(postSearchShapeKey(s, page, viewerId, filters), () => postSearchSql(s, page, viewerId, filters, placeholder, true), values);
  // Its best plan depends on the words (how many posts match): planned for each search, not kept
  // (kept, a "music" search ran 5 times slower under the benchmark mix).
  return new BoundQuery({ ...bound.query, keepPlan: false });
}

/**
 * The page's SQL. Without words: newest first by id, walking a facet filter's rows when there is
 * one. With words and `order=id`: the matches by id. With `order=relevance`: the newest
 * RELEVANCE_WINDOW matches ranked (bm25 / ts_rank), paged by keyset on (score, id) as message
 * search is (`before_id`/`since_id` name a post of the result list).
 */
function postSearchSql(s: PostSearch, page: Page, viewerId: number | null, filters: PostFilters, val: Val, named: boolean): SQL {
  const where = conditions(s, viewerId, filters, val);
  const dir = (asc: boolean) => sql.raw(asc ? "ASC" : "DESC");
  const nf = page.newestFirst;
  const limit = val("limit");
  const bounds = (col: string) => pageBoundsSql(col, page, { since: val("since"), before: val("before") });
  const byId = (col: SQL) => pageRow(col, col, nf ? sql`-${col}` : col);
  if (!s.terms.length) {
    const driver = facetDriver(s);
    if (driver) {
      return sql`SELECT ${byId(sql`dp.post_id`)} FROM (SELECT DISTINCT df.post_id FROM post_facets df JOIN posts ON posts.id = df.post_id
          WHERE df.facet = ${driver} AND df.value IN ${inList(valSql(val, `facet_${driver}`), "text")} AND ${where} AND ${bounds("df.post_id")}) dp
        ORDER BY dp.post_id ${dir(!nf)} LIMIT ${limit}`;
    }
    return sql`SELECT ${byId(sql`posts.id`)} FROM posts WHERE ${where} AND ${bounds("posts.id")} ORDER BY posts.id ${dir(!nf)} LIMIT ${limit}`;
  }
  const m = matcher(val);
  if (s.order === "id") {
    return sql`SELECT ${byId(sql`posts.id`)} FROM ${m.from} AND ${where} AND ${bounds("posts.id")}
      ORDER BY ${m.order} ${dir(!nf)} LIMIT ${limit}`;
  }
  const ranked = sql`row_number() OVER (ORDER BY h.score ${dir(nf)}, h.id ${dir(!nf)})`;
  const hits = dialect.pick({
    sqlite: () => sql`${hitsCte(page)} (SELECT posts.id AS id, ${m.score} AS score FROM ${m.from} AND ${where}
      ORDER BY ${m.order} DESC LIMIT ${RELEVANCE_WINDOW})`,
    postgres: () => rankedWindow(valSql(val, "terms"), where),
  })();
  return sql`WITH ${hits},
    p AS (SELECT h.id, h.score FROM hits h WHERE ${relevanceBounds(page, named)} ORDER BY h.score ${dir(nf)}, h.id ${dir(!nf)} LIMIT ${limit})
    SELECT ${pageRow(sql`h.id`, sql`h.id`, ranked)} FROM p h`;
}

/**
 * Postgres: the ranked window (CTE `hits`), as message search keeps it: the newest RELEVANCE_WINDOW
 * matches cut first, then ranked, so ts_rank runs for the window only. The tsquery is a constant
 * when planning (search/postgres.ts `tsQuery`), so the planner estimates the words' matches from the
 * column's statistics: a common word walks the primary key newest first and stops after the window,
 * a rare word or a phrase reads its matches through the GIN index.
 */
function rankedWindow(terms: SQL, where: SQL): SQL {
  const q = tsQuery(terms);
  return sql`hits AS MATERIALIZED (SELECT c.id, -ts_rank(c.search_vector, ${q}) AS score
      FROM (SELECT posts.id, posts.search_vector FROM posts WHERE posts.search_vector @@ ${q} AND ${where}
        ORDER BY posts.id DESC LIMIT ${RELEVANCE_WINDOW}) c)`;
}
