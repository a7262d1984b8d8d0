import { sql, type SQL } from "drizzle-orm";
import { dialect, inList } from "../../db/dialect";
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

const facet = (name: string, values: readonly string[]) =>
  sql`EXISTS (SELECT 1 FROM post_facets sf WHERE sf.facet = ${name} AND sf.value IN ${inList(values, "text")} AND sf.post_id = "posts"."id")`;
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

/** Every condition on `posts` besides the words: liveness, the filters, the viewer's mutes and blocks, the general filters. */
function conditions(s: PostSearch, viewerId: number | null, filters: PostFilters): SQL {
  const c: SQL[] = [sql`"posts"."is_deleted" = 0`, original()];
  if (s.clientId !== undefined) c.push(sql`"posts"."app_id" IN (SELECT id FROM apps WHERE client_id = ${s.clientId})`);
  if (s.createdAfter !== undefined) c.push(sql`"posts"."created_at" > ${s.createdAfter}`);
  if (s.createdBefore !== undefined) c.push(sql`"posts"."created_at" < ${s.createdBefore}`);
  if (s.creator) {
    c.push(
      "id" in s.creator ? sql`"posts"."user_id" = ${s.creator.id}` : sql`"posts"."user_id" = (SELECT id FROM users WHERE username = ${s.creator.username})`,
    );
  }
  if (s.excludeUserIds?.length) c.push(sql`"posts"."user_id" NOT IN ${inList(s.excludeUserIds)}`);
  if (s.fileId !== undefined) c.push(facet("file", [String(s.fileId)]));
  if (s.fileKinds?.length) c.push(facet("file_kind", s.fileKinds));
  if (s.hasMentions !== undefined) c.push(s.hasMentions ? anyFacet("mention") : sql`NOT ${anyFacet("mention")}`);
  else {
    if (s.directedOnly) c.push(anyFacet("leading_mention"));
    if (s.leadingMentions?.length) c.push(facet("leading_mention", s.leadingMentions));
    if (s.mentions?.length) c.push(facet("mention", s.mentions));
  }
  if (s.excludeNsfw) c.push(sql`"posts"."is_nsfw" = 0`);
  if (s.isReply !== undefined) c.push(s.isReply ? sql`"posts"."reply_to" IS NOT NULL` : sql`"posts"."reply_to" IS NULL`);
  if (s.revisedOnly) c.push(sql`"posts"."is_revised" = 1`);
  if (s.pollId !== undefined) c.push(facet("poll", [String(s.pollId)]));
  if (s.rawTypes?.length) c.push(facet("raw_type", s.rawTypes));
  if (s.replyTo !== undefined) c.push(sql`"posts"."reply_to" = ${s.replyTo}`);
  if (s.tags?.length) c.push(facet("tag", s.tags));
  if (s.threadId !== undefined) c.push(sql`"posts"."thread_id" = ${s.threadId}`);
  if (s.urlDomains?.length) c.push(facet("url_domain", s.urlDomains));
  if (s.urls?.length) c.push(facet("url", s.urls));
  if (s.userTypes?.length) c.push(sql`EXISTS (SELECT 1 FROM users ut WHERE ut.id = "posts"."user_id" AND ut.type IN ${inList(s.userTypes, "text")})`);
  c.push(...filterConditions(filters, viewerId), visibleTo(viewerId, filters.muted));
  return sql.join(c, sql` AND `);
}

/** The facet filter a search without words walks (most selective kinds first), if any. */
function facetDriver(s: PostSearch): [string, string[]] | undefined {
  const options: [string, readonly string[] | undefined][] = [
    ["file", s.fileId !== undefined ? [String(s.fileId)] : undefined],
    ["poll", s.pollId !== undefined ? [String(s.pollId)] : undefined],
    ["url", s.urls],
    ["tag", s.tags],
    ["mention", s.hasMentions === undefined ? s.mentions : undefined],
    ["leading_mention", s.hasMentions === undefined ? s.leadingMentions : undefined],
    ["url_domain", s.urlDomains],
    ["raw_type", s.rawTypes],
  ];
  const found = options.find(([, v]) => v?.length);
  return found ? [found[0], [...found[1]!]] : undefined;
}

/** How words are matched and ranked on each backend. */
const matcher = (terms: string[]) =>
  wordMatcher(
    "posts",
    "post_search",
    () => tsQuery(terms),
    () => ftsQuery(terms),
    sql`bm25(post_search)`,
  );

/**
 * The page of a post search as `pageRow`s. Without words: newest first by id, walking a facet
 * filter's rows when there is one. With words and `order=id`: the matches by id. With
 * `order=relevance`: the newest RELEVANCE_WINDOW matches ranked (bm25 / ts_rank), paged by keyset
 * on (score, id) as message search is (`before_id`/`since_id` name a post of the result list).
 */
export function postSearchPage(s: PostSearch, page: Page, viewerId: number | null, filters: PostFilters): SQL {
  const where = conditions(s, viewerId, filters);
  const dir = (asc: boolean) => sql.raw(asc ? "ASC" : "DESC");
  const nf = page.newestFirst;
  const limit = page.limit + 1;
  const byId = (col: SQL) => pageRow(col, col, nf ? sql`-${col}` : col);
  if (!s.terms.length) {
    const driver = facetDriver(s);
    if (driver) {
      return sql`SELECT ${byId(sql`dp.post_id`)} FROM (SELECT DISTINCT df.post_id FROM post_facets df JOIN posts ON posts.id = df.post_id
          WHERE df.facet = ${driver[0]} AND df.value IN ${inList(driver[1], "text")} AND ${where} AND ${pageBoundsSql("df.post_id", page)}) dp
        ORDER BY dp.post_id ${dir(!nf)} LIMIT ${limit}`;
    }
    return sql`SELECT ${byId(sql`posts.id`)} FROM posts WHERE ${where} AND ${pageBoundsSql("posts.id", page)} ORDER BY posts.id ${dir(!nf)} LIMIT ${limit}`;
  }
  const m = matcher(s.terms);
  if (s.order === "id") {
    return sql`SELECT ${byId(sql`posts.id`)} FROM ${m.from} AND ${where} AND ${pageBoundsSql("posts.id", page)}
      ORDER BY ${m.order} ${dir(!nf)} LIMIT ${limit}`;
  }
  const ranked = sql`row_number() OVER (ORDER BY h.score ${dir(nf)}, h.id ${dir(!nf)})`;
  const hits = dialect.pick({
    sqlite: () => sql`${hitsCte(page)} (SELECT posts.id AS id, ${m.score} AS score FROM ${m.from} AND ${where}
      ORDER BY ${m.order} DESC LIMIT ${RELEVANCE_WINDOW})`,
    postgres: () => rankedWindow(s.terms, where),
  })();
  return sql`WITH ${hits},
    p AS (SELECT h.id, h.score FROM hits h WHERE ${relevanceBounds(page)} ORDER BY h.score ${dir(nf)}, h.id ${dir(!nf)} LIMIT ${limit})
    SELECT ${pageRow(sql`h.id`, sql`h.id`, ranked)} FROM p h`;
}

/**
 * Postgres: the ranked window (CTE `hits`), as message search keeps it: the newest RELEVANCE_WINDOW
 * matches cut first, then ranked, so ts_rank runs for the window only. The tsquery is a constant
 * when planning (search/postgres.ts `tsQuery`), so the planner estimates the words' matches from the
 * column's statistics: a common word walks the primary key newest first and stops after the window,
 * a rare word or a phrase reads its matches through the GIN index.
 */
function rankedWindow(terms: string[], where: SQL): SQL {
  const q = tsQuery(terms);
  return sql`hits AS MATERIALIZED (SELECT c.id, -ts_rank(c.search_vector, ${q}) AS score
      FROM (SELECT posts.id, posts.search_vector FROM posts WHERE posts.search_vector @@ ${q} AND ${where}
        ORDER BY posts.id DESC LIMIT ${RELEVANCE_WINDOW}) c)`;
}
