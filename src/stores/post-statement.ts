import { fillPlaceholders, getTableColumns, Placeholder, sql, type SQL } from "drizzle-orm";
import { schema, type Row } from "../db";
import { dialect } from "../db/dialect";
import { BoundQuery, compile, shiftParams } from "../db/batch";
import { selectGroup, pick, type Field } from "../db/compiled";
import type { AppRef, PostRecord, PostView } from "./posts";
import { embeddedUserColumns, type UserView, type ViewerSlot } from "./users";

// The statement that reads posts with everything a Post object embeds, compiled once per shape
// (anonymous or not, paged or not) and bound per request: building it through drizzle on every
// request, and mapping its rows through drizzle's generic mapper, cost more than the database
// read itself (docs/benchmark.md, "Statements built once"). The page of ids is a CTE: a list's comes compiled
// per shape (post-lists.ts `listPageQuery`), others are compiled per request.

const { posts, users, apps } = schema;

interface Shape {
  /** The statement after `WITH page AS (…)` (from its next CTE on), with `$n` numbered from 1 on Postgres. */
  text: string;
  params: unknown[];
  postFields: Field[];
  userFields: Field[];
  appFields: Field[];
  /** Postgres: the text with its parameters renumbered after a page of n parameters. */
  shifted: Map<number, string>;
}

const bool = (v: unknown) => v === 1 || v === true || v === "1";

type ViewerKind = "anonymous" | "user" | "token";

function buildShape(kind: ViewerKind, paged: boolean): Shape {
  const viewer =
    kind === "anonymous"
      ? null
      : kind === "user"
        ? sql`${sql.placeholder("viewer")}`
        : sql`(SELECT vt.user_id FROM tokens vt WHERE vt.token_hash = ${sql.placeholder("hash")})`;
  const flag = (q: SQL) => (viewer ? q : sql`0`);
  const post = selectGroup(getTableColumns(posts), "p_");
  const user = selectGroup(embeddedUserColumns(viewer), "u_");
  const app = selectGroup({ clientId: apps.clientId, name: apps.name, url: apps.url, deletedAt: apps.deletedAt }, "a_");
  const extra = [
    sql`${flag(sql`exists(select 1 from bookmarks yb where yb.user_id = ${viewer} and yb.post_id = ${posts.id})`)} AS you_bookmarked`,
    sql`${flag(sql`exists(select 1 from posts yr where yr.repost_of = ${posts.id} and yr.user_id = ${viewer})`)} AS you_reposted`,
    sql`sel.in_page AS in_page`,
    sql`sel.pid AS page_pid`,
    sql`sel.pos AS page_pos`,
    sql`sel.note AS page_note`,
  ];
  // The rows to read: the page's (with their place) and the originals its reposts embed, driven
  // from the page, each post a primary-key probe. The page is referenced twice at most: SQLite
  // runs a CTE's query again (or scans its materialized rows) at every reference, and D1 counts
  // every row those read. A post both in the page and embedded comes twice (the page's row wins).
  // `+sel.id`: SQLite must drive from `sel` and probe posts by primary key; left free, D1 chose to
  // walk all of posts and probe an automatic index on `sel` for the home timelines' compound page
  // (20,000 rows read for a page of 20).
  const pageCols = paged ? sql`pg.pid, pg.pos, pg.note` : sql`CAST(NULL AS BIGINT) AS pid, CAST(NULL AS BIGINT) AS pos, CAST(NULL AS TEXT) AS note`;
  const statement = sql`, sel AS (SELECT pg.id, ${pageCols}, 1 AS in_page FROM page pg
      UNION SELECT ro.repost_of, NULL, NULL, NULL, 0 FROM page rp JOIN posts ro ON ro.id = rp.id WHERE ro.repost_of IS NOT NULL)
    SELECT ${sql.join([...post.select, ...user.select, ...app.select, ...extra], sql`, `)}
    FROM sel JOIN ${posts} ON ${posts.id} = +sel.id
      LEFT JOIN ${users} ON ${users.id} = ${posts.userId} LEFT JOIN ${apps} ON ${apps.id} = ${posts.appId}`;
  const { sql: text, params } = compile(statement);
  return { text, params, postFields: post.fields, userFields: user.fields, appFields: app.fields, shifted: new Map() };
}

const shapes = new Map<string, Shape>();
function shapeFor(kind: ViewerKind, paged: boolean): Shape {
  const key = `${kind}:${paged}`;
  let shape = shapes.get(key);
  if (!shape) shapes.set(key, (shape = buildShape(kind, paged)));
  return shape;
}

/**
 * The read of the posts whose ids `pageIds` selects (a query with the column `id`, or with
 * `paged` the columns of `pageRow`), plus the originals their reposts embed, each with author,
 * client and the viewer's flags; decode its rows with `decodePostRow`.
 */
export function boundPostsQuery(viewer: ViewerSlot | null, pageIds: SQL | BoundQuery, paged: boolean): BoundQuery {
  const byId = typeof viewer === "number" || viewer instanceof Placeholder;
  const shape = shapeFor(viewer == null ? "anonymous" : byId ? "user" : "token", paged);
  const page = pageIds instanceof BoundQuery ? pageIds.query : compile(pageIds);
  let text = shape.text;
  if (dialect.numberedParams && page.params.length) {
    const n = page.params.length;
    text = shape.shifted.get(n) ?? shiftParams(shape.text, n);
    shape.shifted.set(n, text);
  }
  const params =
    viewer == null ? shape.params : fillPlaceholders(shape.params, byId ? { viewer } : { hash: viewer.tokenHash });
  return new BoundQuery({ sql: `with page as (${page.sql})${text}`, params: [...page.params, ...params] });
}

/** A row of `boundPostsQuery` as a PostView, and whether the page asked for it (else it is an embedded original). */
export function decodePostRow(row: Row): { view: PostView; inPage: boolean } {
  const shape = shapeFor("user", false); // the fields are the same for every shape
  const view: PostView = {
    post: pick(row, shape.postFields) as unknown as PostRecord,
    user: row.u_id == null ? null : (pick(row, shape.userFields) as unknown as UserView),
    app: row.a_clientId == null ? null : (pick(row, shape.appFields) as unknown as AppRef),
    youBookmarked: bool(row.you_bookmarked),
    youReposted: bool(row.you_reposted),
  };
  if (row.page_pid != null) [view.pid, view.pos, view.note] = [Number(row.page_pid), Number(row.page_pos), (row.page_note as string | null) ?? null];
  return { view, inPage: bool(row.in_page) };
}
