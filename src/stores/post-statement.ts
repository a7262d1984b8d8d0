import { getTableColumns, Placeholder, sql, type Column, type SQL } from "drizzle-orm";
import { schema, type Row } from "../db";
import { dialect, existsFlag, unindexed } from "../db/dialect";
import { bindParams, BoundQuery, compile, placeholder, shiftParams } from "../db/batch";
import { type ArrayPart, jsonArrayGroup, jsonArrayValues, pickArray, pickFound } from "../db/compiled";
import type { AppRef, PostRecord, PostView } from "./posts";
import { knownAppsProbe, renderedApp } from "./app-refs";
import { embeddedUserColumns, sharedViewer, viewerSql, type UserView, type ViewerSlot } from "./users";

// The statement that reads posts with everything a Post object embeds, compiled once per shape
// (anonymous or not, paged or not) and bound per request: building it through drizzle on every
// request, and mapping its rows through drizzle's generic mapper, cost more than the database
// read itself (docs/benchmark.md, "Statements built once"). The page of ids is a CTE: a list's comes compiled
// per shape (post-lists.ts `listPageQuery`), others are compiled per request.

const { posts, apps } = schema;

interface Shape {
  /** The statement after `WITH page AS (…)`, with `$n` numbered from 1 on Postgres. */
  text: string;
  params: unknown[];
  /** The page row's post (with flags), author, client and page place in the array cell `post_json`. */
  row: Parts<4>;
  /** The post (with flags), author and client of the original a repost embeds: SQLite's array cell `original_json` (null without one), Postgres's row of its own. */
  original: Parts<3>;
  /** The post group without its two flags, and the flags' positions (the same in `row` and `original`). */
  post: PostGroup;
  /** Postgres: the text with its parameters renumbered after a page of n parameters. */
  shifted: Map<number, string>;
}

type Parts<N extends number> = ArrayPart[] & { length: N };

const bool = (v: unknown) => v === 1 || v === true || v === "1";

type ViewerKind = "anonymous" | "user" | "token";

/** The columns of `table` as joined under the alias `as`, each decoded as its column. */
function columnsAs<T extends Record<string, Column>>(table: T, as: string): Record<keyof T, SQL> {
  return Object.fromEntries(Object.entries(table).map(([key, col]) => [key, sql.raw(`"${as}"."${col.name}"`).mapWith(col)])) as Record<keyof T, SQL>;
}

/**
 * The values of one post joined as `t.post` with its author (`t.user`) and client (`t.app`): the
 * viewer's relationship flags to the author, and the viewer's bookmark and repost flags.
 */
function postParts(viewer: SQL | null, t: { post: string; user: string; app: string }, presence: boolean) {
  const flag = (q: SQL) => (viewer ? q : sql`0`);
  const id = sql.raw(`"${t.post}"."id"`);
  const { clientId, name, url, deletedAt } = columnsAs(getTableColumns(apps), t.app);
  return {
    post: columnsAs(getTableColumns(posts), t.post),
    user: embeddedUserColumns(viewer, t.user, presence),
    app: { clientId, name, url, deletedAt },
    flags: {
      // Read by position (`PostGroup`), not through a decoder.
      youBookmarked: flag(existsFlag(sql`select 1 from bookmarks yb where yb.user_id = ${viewer} and yb.post_id = ${id}`)),
      youReposted: flag(existsFlag(sql`select 1 from posts yr where yr.repost_of = ${id} and yr.user_id = ${viewer}`)),
    },
  };
}

function buildShape(kind: ViewerKind, paged: boolean, presence: boolean, carried: boolean): Shape {
  // A token's viewer (named seven times a post): on Postgres, read once in the CTE `viewer`, after the page's.
  const token = kind === "token" ? sharedViewer({ tokenHash: sql.placeholder("hash") as unknown as string }) : undefined;
  const viewer = kind === "anonymous" ? null : kind === "user" ? placeholder("viewer") : viewerSql(token!.viewer);
  const r = postParts(viewer, { post: "p", user: "u", app: "a" }, presence);
  // A carried page (SQLite) is the posts themselves, named `p`, with their place.
  const at = carried ? "p" : "pg";
  const page = paged
    ? { pid: sql.raw(`${at}.pid`), pos: sql.raw(`${at}.pos`), note: sql.raw(`${at}.note`) }
    : { pid: sql`CAST(NULL AS BIGINT)`, pos: sql`CAST(NULL AS BIGINT)`, note: sql`CAST(NULL AS TEXT)` };
  // Clients the isolate knows are not joined (app-refs.ts): their columns come back null.
  const appOf = (post: string) => knownAppsProbe(sql.raw(`${post}.app_id`));
  const joins = sql`LEFT JOIN users u ON u.id = p.user_id LEFT JOIN apps a ON a.id = ${appOf("p")}`;
  const postFrom = sql`JOIN posts p ON p.id = ${unindexed(sql`pg.id`)} ${joins}`;
  // The page row's ~60 values as one JSON array cell rather than as columns: the database client's
  // work is per cell (D1's turns each into a property, value by value), and it was the Worker's
  // largest CPU cost under the benchmark mix (docs/benchmark.md, "Post render rows").
  const row = jsonArrayGroup([{ ...r.post, ...r.flags }, r.user, r.app, page]);
  const firstKey = (part: ArrayPart) => part.fields[0][0];
  if (firstKey(row.parts[1]) !== "id" || firstKey(row.parts[2]) !== "clientId") throw new Error("post render: decodePost reads presence from the first value");
  const statement = dialect.pick({
    postgres: () => originalsAsRows(row.select, paged, postFrom),
    sqlite: () => originalsSideBySide(row.select, viewer, presence, carried ? sql`page p ${joins}` : sql`page pg ${postFrom}`, appOf("o")),
  })();
  const { sql: text, params } = compile(token?.cte ? sql`, ${token.cte}${statement}` : statement);
  // The original's fields are the page row's but the page's place (decoded by `shape.original`).
  return { text, params, row: row.parts as Parts<4>, original: row.parts.slice(0, 3) as Parts<3>, post: postGroup(row.parts[0]), shifted: new Map() };
}

/**
 * Postgres: the originals the page's reposts embed as rows of their own after the page's (`o` true),
 * read by the same joins and flags. Postgres plans the statement on every request (the driver's
 * unnamed statements), and planning cost more than running it; side by side, the original's own
 * posts, author, client, badge and seven flags were a second set to plan (medians of interleaved
 * warm runs: a one-post render planned in 1.24 → 0.87 ms and parsed in 0.47 → 0.28 ms; a home page's
 * render, 0.4 ms less planning).
 */
function originalsAsRows(rowSelect: SQL, paged: boolean, postFrom: SQL): SQL {
  const place = paged ? sql`, pg0.pid, pg0.pos, pg0.note` : sql``;
  const noPlace = paged ? sql`, NULL, NULL, NULL` : sql``;
  return sql` SELECT ${rowSelect} AS post_json, pg.o AS original_row
    FROM (SELECT pg0.id${place}, false AS o FROM page pg0
      UNION ALL SELECT ro.repost_of${noPlace}, true FROM page pg1 JOIN posts ro ON ro.id = pg1.id WHERE ro.repost_of IS NOT NULL) pg
      ${postFrom}`;
}

/**
 * SQLite: one row per page row, the post and, for a repost, the original it embeds side by side. The
 * page is read once (SQLite runs a CTE's query again at every reference, and D1 counts every row
 * each run reads: a UNION of the page's and the originals' rows cost ~5 rows a post).
 * `+pg.id`: SQLite must drive from the page and probe posts by primary key; left free, D1 chose
 * to walk all of posts and probe an automatic index on the page for the home timelines'
 * compound page (20,000 rows read for a page of 20). A carried page (`carriedPageRow`) is the
 * posts themselves: the walk read each post's row, and reading it again cost a row a post.
 */
function originalsSideBySide(rowSelect: SQL, viewer: SQL | null, presence: boolean, from: SQL, originalApp: SQL): SQL {
  const o = postParts(viewer, { post: "o", user: "ou", app: "oa" }, presence);
  const original = jsonArrayGroup([{ ...o.post, ...o.flags }, o.user, o.app], sql`o.id IS NOT NULL`);
  return sql` SELECT ${rowSelect} AS post_json, ${original.select} AS original_json
    FROM ${from}
      LEFT JOIN posts o ON o.id = p.repost_of LEFT JOIN users ou ON ou.id = o.user_id LEFT JOIN apps oa ON oa.id = ${originalApp}`;
}

/** Per isolate: the post render compiled once per shape (viewer kind, paged or not, carried or not). */
const shapes = new Map<string, Shape>();
function shapeFor(kind: ViewerKind, paged: boolean, presence: boolean, carried = false): Shape {
  const key = `${kind}:${paged}:${presence}:${carried}`;
  let shape = shapes.get(key);
  if (!shape) shapes.set(key, (shape = buildShape(kind, paged, presence, carried)));
  return shape;
}

/**
 * The read of the posts whose ids `pageIds` selects (a query with the column `id`, or with
 * `paged` the columns of `pageRow`, or with `carried` too (SQLite) those of `carriedPageRow`),
 * plus the originals their reposts embed, each with author, client and the viewer's flags; decode
 * its rows with `decodePostRow`.
 */
export function boundPostsQuery(viewer: ViewerSlot | null, pageIds: SQL | BoundQuery, paged: boolean, presence = true, carried = false): BoundQuery {
  if (carried && !paged) throw new Error("post render: only a list's page carries its posts");
  const byId = typeof viewer === "number" || viewer instanceof Placeholder;
  const shape = shapeFor(viewer == null ? "anonymous" : byId ? "user" : "token", paged, presence, carried);
  const page = pageIds instanceof BoundQuery ? pageIds.query : compile(pageIds);
  let text = shape.text;
  if (dialect.numberedParams && page.params.length) {
    const n = page.params.length;
    text = shape.shifted.get(n) ?? shiftParams(shape.text, n);
    shape.shifted.set(n, text);
  }
  const params = bindParams(shape.params, viewer == null ? {} : byId ? { viewer } : { hash: viewer.tokenHash });
  // A page compiled once per shape makes one text per shape: its plan is kept (src/db/pg-plans.ts)
  // unless the page says its plan depends on its values.
  const keepPlan = pageIds instanceof BoundQuery && pageIds.query.keepPlan !== false;
  return new BoundQuery({ sql: `with page as (${page.sql})${text}`, params: [...page.params, ...params], keepPlan });
}

/**
 * A row of `boundPostsQuery`: the page's post (with its place) and the original it embeds when it is
 * a repost, or (Postgres, `original_row`) only an original a repost of the page embeds.
 */
export function decodePostRow(row: Row): { view: PostView | null; original: PostView | null } {
  const shape = shapeFor("user", false, true); // the fields are the same for every shape
  const r = jsonArrayValues(row.post_json) as unknown[];
  if (bool(row.original_row)) return { view: null, original: decodePost(r, shape.original, shape.post) };
  const view = decodePost(r, shape.row, shape.post);
  const [, , , page] = shape.row;
  const pid = r[page.from];
  if (pid != null) [view.pid, view.pos, view.note] = [Number(pid), Number(r[page.from + 1]), (r[page.from + 2] as string | null) ?? null];
  const o = jsonArrayValues(row.original_json);
  return { view, original: o && decodePost(o, shape.original, shape.post) };
}

/**
 * The post group of a shape without its two flags, and the flags' positions: the record is picked
 * without them rather than copied without them (the copy was 3 % of the Worker's CPU under the
 * benchmark mix).
 */
interface PostGroup {
  record: ArrayPart;
  bookmarked: number;
  reposted: number;
}
function postGroup(part: ArrayPart): PostGroup {
  const at = (key: string) => part.from + part.fields.findIndex(([k]) => k === key);
  const record = { fields: part.fields.filter(([k]) => k !== "youBookmarked" && k !== "youReposted"), from: part.from };
  // The record's fields are read by position from `from`: the flags must come after them.
  if (record.fields.some(([k], i) => part.fields[i][0] !== k)) throw new Error("post render: the flags must follow the post's columns");
  return { record, bookmarked: at("youBookmarked"), reposted: at("youReposted") };
}

/**
 * The post, author and client at `parts` of an array cell; author and client null when their
 * first value (id, client id) is: the join found none, or (client) the isolate knows it.
 */
function decodePost(values: unknown[], [, user, app]: ArrayPart[], g: PostGroup): PostView {
  const post = pickArray(values, g.record) as unknown as PostRecord;
  return {
    post,
    user: pickFound(values, user) as unknown as UserView | null,
    app: renderedApp(post.appId, pickFound(values, app) as unknown as AppRef | null),
    youBookmarked: bool(values[g.bookmarked]),
    youReposted: bool(values[g.reposted]),
  };
}
