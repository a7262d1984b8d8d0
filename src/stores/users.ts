import { eq, getTableColumns, Placeholder, sql, SQL } from "drizzle-orm";
import { schema, type Db } from "../db";
import { first, mixedBatch } from "../db/batch";
import { dialect, epochNow, existsFlag, inList } from "../db/dialect";

const { users } = schema;

export type UserRecord = typeof users.$inferSelect;

/** What every read of a user adds to the row: the name of the badge shown, and the live presence. */
export interface UserExtras {
  badgeName: string | null;
  /** The live status (null: offline). */
  presence: string | null;
}

/** A user as seen by a viewer: relationship flags come from the same query. */
export type UserView = UserRecord &
  UserExtras & {
    followsYou: boolean;
    youFollow: boolean;
    youMuted: boolean;
    youBlocked: boolean;
    blocksYou: boolean;
  };

// Qualified by hand: a single-table select renders `${users.id}` as a bare `"id"`, which inside
// these subqueries would name the subquery's own `id` column (follows have one).
// `as`: the alias the users table is joined under (a plain identifier).
const userCol = (as: string, col: string) => sql.raw(`"${as}"."${col}"`);

/**
 * The badge and live presence of the user selected as `users` (or under the alias `as`).
 * Presence is checked against the database clock (stores have no request clock here), as every
 * presence read filters on expiry.
 */
export function userExtraColumns(as = "users") {
  return {
    badgeName: sql<string | null>`(select bn.name from badges bn where bn.id = ${userCol(as, "badge_id")})`,
    presence: sql<
      string | null
    >`(select pr.presence from presence pr where pr.user_id = ${userCol(as, "id")} and pr.expires_at > ${epochNow} and ${userCol(as, "is_disabled")} = 0)`,
  };
}

/** The viewer's relationship flags to the user selected as `users` or `as` (`v`: the viewer's id, or a placeholder for it). */
function relationFlags(v: number | SQL, as = "users") {
  const ref = userCol(as, "id");
  return {
    followsYou: existsFlag(sql`select 1 from follows f where f.follower_id = ${ref} and f.followed_id = ${v}`).mapWith(Boolean),
    youFollow: existsFlag(sql`select 1 from follows f where f.follower_id = ${v} and f.followed_id = ${ref}`).mapWith(Boolean),
    youMuted: existsFlag(sql`select 1 from user_mutes m where m.user_id = ${v} and m.muted_id = ${ref}`).mapWith(Boolean),
    youBlocked: existsFlag(sql`select 1 from user_blocks b where b.user_id = ${v} and b.blocked_id = ${ref}`).mapWith(Boolean),
    blocksYou: existsFlag(sql`select 1 from user_blocks b where b.user_id = ${ref} and b.blocked_id = ${v}`).mapWith(Boolean),
  };
}

/**
 * Who a read is for: a user id, or the user of a bearer token whose lookup rides in the same
 * round trip (`readAlongsideToken`), named by the token's hash.
 */
export type Viewer = number | { tokenHash: string };

/**
 * A viewer in a statement compiled once per shape: a user id's placeholder, or a token whose hash
 * is a placeholder (`{ tokenHash: sql.placeholder("hash") }`); bound per request by name.
 */
export type ViewerSlot = Viewer | Placeholder;

/** The user of the token whose hash is `hash` (the unique token hash). */
const tokenUser = (hash: string): SQL => sql`SELECT vt.user_id FROM tokens vt WHERE vt.token_hash = ${hash}`;

/** The viewer's user id in SQL (a token's viewer: a subquery on the unique token hash). */
export const viewerSql = (v: ViewerSlot | SQL): SQL =>
  v instanceof SQL ? v : typeof v === "number" || v instanceof Placeholder ? sql`${v}` : sql`(${tokenUser(v.tokenHash)})`;

/**
 * A viewer named many times in one statement (five relationship flags per user, two per post):
 * on Postgres a token's viewer is read once, by the CTE `cte` (`viewer`, to put first in the
 * statement's WITH list), and `viewer` names that CTE. Postgres plans every statement afresh and
 * each token subquery was a plan of its own (an interactions page planned about 0.2 ms less with it);
 * SQLite keeps the subqueries (it runs a CTE again at every reference, and D1 counts those rows).
 */
export const sharedViewer = dialect.pick<(v: ViewerSlot) => { cte: SQL | null; viewer: ViewerSlot | SQL }>({
  sqlite: (v) => ({ cte: null, viewer: v }),
  postgres: (v) =>
    typeof v === "number" || v instanceof Placeholder
      ? { cte: null, viewer: v }
      : { cte: sql`viewer AS (${tokenUser(v.tokenHash)})`, viewer: sql`(SELECT vw.user_id FROM viewer vw)` },
});

/** Columns for a user plus badge, presence and the viewer's relationship flags, for embedding in any select. */
export function userViewColumns(viewer: ViewerSlot | SQL | null) {
  return { ...getTableColumns(users), ...userExtraColumns(), ...relationFlags(viewer == null ? 0 : viewerSql(viewer)) };
}

/**
 * The columns of an embedded author joined as `users`, or under the alias `as`, for statements
 * compiled once (`viewer`: a placeholder, or null for an anonymous viewer, whose flags are all
 * constant 0). Secrets (password hash, email) are not selected: no view of an embedded user shows
 * them. Without `presence` (the request does not show it) the presence is not read.
 */
export function embeddedUserColumns(viewer: SQL | null, as = "users", presence = true) {
  const { passwordHash: _hash, email: _email, ...table } = getTableColumns(users);
  const columns = as === "users" ? table : Object.fromEntries(Object.entries(table).map(([key, col]) => [key, userCol(as, col.name).mapWith(col)]));
  const zero = sql<number>`0`.mapWith(Boolean);
  const flags = viewer ? relationFlags(viewer, as) : { followsYou: zero, youFollow: zero, youMuted: zero, youBlocked: zero, blocksYou: zero };
  const extras = userExtraColumns(as);
  return { ...columns, ...extras, ...(presence ? {} : { presence: sql<string | null>`CAST(NULL AS TEXT)` }), ...flags };
}

export function usersByIdsQuery(db: Db, ids: number[], viewerId: number | null) {
  return db
    .select(userViewColumns(viewerId))
    .from(users)
    .where(sql`${users.id} in ${inList(ids)}`);
}

export async function getUser(db: Db, id: number, viewerId: number | null): Promise<UserView | undefined> {
  // Through the batch executor, not the builder's own session: a deferred token check rides in it.
  const [[row]] = await mixedBatch(db, [usersByIdsQuery(db, [id], viewerId)]);
  return row as UserView | undefined;
}

export async function findByUsername(db: Db, username: string): Promise<UserRecord | undefined> {
  return db.select().from(users).where(eq(users.username, username.toLowerCase())).then(first);
}

/** Users named in a text, keyed by lowercase username (one query, one bound parameter, for all mentions). */
export async function usersByUsernames(db: Db, names: string[]): Promise<Map<string, { id: string; username: string }>> {
  const map = new Map<string, { id: string; username: string }>();
  if (!names.length) return map;
  const [rows] = await mixedBatch(db, [
    db
      .select({ id: users.id, username: users.username })
      .from(users)
      .where(
        sql`${users.username} in ${inList(
          names.map((n) => n.toLowerCase()),
          "text",
        )}`,
      ),
  ]);
  for (const r of rows) map.set(r.username, { id: String(r.id), username: r.username });
  return map;
}

export interface NewUser {
  username: string;
  passwordHash: string;
  name?: string | null;
  email?: string | null;
  type?: "human" | "feed" | "bot";
  createdAt: number;
}

/** Creates a user; returns undefined when the username is taken. */
export async function createUser(db: Db, u: NewUser): Promise<UserRecord | undefined> {
  const [row] = await db
    .insert(users)
    .values({ ...u, username: u.username.toLowerCase() })
    .onConflictDoNothing()
    .returning();
  return row;
}

/** One indexed primary-key read (the benchmark's read floor). */
export async function userExists(db: Db, id: number): Promise<boolean> {
  return (await db.select({ id: users.id }).from(users).where(eq(users.id, id)).then(first)) !== undefined;
}
