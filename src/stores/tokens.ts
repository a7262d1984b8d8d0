import { and, eq, fillPlaceholders, getTableColumns, sql } from "drizzle-orm";
import { schema, type Db, type RawResult } from "../db";
import { dialect } from "../db/dialect";
import { BoundQuery, compile, mixedBatch, runBatch, shiftParams, type Statement } from "../db/batch";
import { reserveRendered, reservedSeq } from "../events/outbox";
import type { StampedEvent } from "../events/publish";
import { type ArrayPart, jsonArrayGroup, jsonArrayValues, pickArray, pickFound } from "../db/compiled";
import type { Query } from "../db/types";
import type { AppRecord } from "./apps";
import { userExtraColumns, type UserExtras, type UserRecord } from "./users";

const { tokens, apps, users, authorizations, userActivity } = schema;

export type TokenRecord = typeof tokens.$inferSelect;

export type TokenRow = { token: TokenRecord; app: AppRecord; user: (UserRecord & UserExtras) | null };

// Every authenticated request runs this read first: compiled once, its ~50 values as one JSON
// array cell decoded by position (the database client's work is per cell: as columns, turning the
// row into an object was a tenth of a token read's cost on D1).
let tokenRead: { query: Query; token: ArrayPart; app: ArrayPart; user: ArrayPart } | undefined;
function compiledTokenRead() {
  if (tokenRead) return tokenRead;
  const row = jsonArrayGroup([getTableColumns(tokens), getTableColumns(apps), { ...getTableColumns(users), ...userExtraColumns() }]);
  const [token, app, user] = row.parts;
  if (user.fields[0][0] !== "id") throw new Error("token read: decodeToken finds the user by its first value");
  const query = compile(sql`SELECT ${row.select} AS token_json
    FROM ${tokens} JOIN ${apps} ON ${apps.id} = ${tokens.appId} LEFT JOIN ${users} ON ${users.id} = ${tokens.userId}
    WHERE ${tokens.tokenHash} = ${sql.placeholder("hash")}`);
  return (tokenRead = { query, token, app, user });
}

/** The token with its app and (for user tokens) user with its badge and presence, in one query. */
export async function findToken(db: Db, tokenHash: string): Promise<TokenRow | undefined> {
  return (await findTokenWith(db, tokenHash, []))[0];
}

/**
 * The token lookup and, in the same round trip (one read snapshot), `alongside` statements that
 * do not depend on the caller; their results follow the token's.
 */
export async function findTokenWith(db: Db, tokenHash: string, alongside: Statement[]): Promise<[TokenRow | undefined, RawResult[]]> {
  const lookup = tokenLookup(tokenHash);
  const only = alongside.length === 1 && alongside[0] instanceof BoundQuery && alongside[0].scalar ? alongside[0] : undefined;
  let result: RawResult;
  let rest: RawResult[];
  if (dialect.batchCostsTransaction && only) {
    // Several statements cost a transaction (BEGIN, COMMIT) there: one scalar rides as a column.
    [result] = await runBatch(db, [withScalar(lookup, only)]);
    rest = [{ results: result.results.length ? [{ v: result.results[0].alongside_v }] : [], changes: 0 }];
  } else {
    [result, ...rest] = await runBatch(db, [lookup, ...alongside]);
  }
  return [decodeToken(result), rest];
}

/** The token lookup (token, app, user) by hash, as one bound statement. */
export function tokenLookup(tokenHash: string): BoundQuery {
  const read = compiledTokenRead();
  return new BoundQuery({ sql: read.query.sql, params: fillPlaceholders(read.query.params, { hash: tokenHash }) });
}

/** The row of a `tokenLookup`, or undefined when the token is unknown. */
export function decodeToken(result: RawResult): TokenRow | undefined {
  const row = result.results[0];
  if (!row) return undefined;
  const read = compiledTokenRead();
  const values = jsonArrayValues(row.token_json) as unknown[];
  return {
    token: pickArray(values, read.token) as unknown as TokenRecord,
    app: pickArray(values, read.app) as unknown as AppRecord,
    user: pickFound(values, read.user) as unknown as (UserRecord & UserExtras) | null,
  };
}

/** Per isolate: the combined statement text per scalar statement (a fixed set of shapes). */
const combined = new Map<string, string>();
/** Postgres: the token lookup with a scalar statement's value as the column `alongside_v`. */
function withScalar(lookup: BoundQuery, scalar: BoundQuery): BoundQuery {
  const key = scalar.query.sql;
  let text = combined.get(key);
  if (text === undefined) {
    text = `SELECT tk.*, (${shiftParams(key, lookup.query.params.length)}) AS alongside_v FROM (${lookup.query.sql}) tk`;
    if (combined.size < 64) combined.set(key, text);
  }
  return new BoundQuery({ sql: text, params: [...lookup.query.params, ...scalar.query.params] });
}

/** Issues a token; a user token also records the user's authorization of the app. */
export async function insertToken(
  db: Db,
  t: { tokenHash: string; appId: number; userId: number | null; scopes: string[]; createdAt: number },
  /** A user token's `token` event (its data does not depend on the insert), written in the same batch. */
  event?: StampedEvent,
): Promise<TokenRecord & { seq?: number }> {
  const insert = db
    .insert(tokens)
    .values({ ...t, scopes: t.scopes.join(" ") })
    .returning();
  if (t.userId == null) return (await insert)[0];
  const [[row], , reserved] = await mixedBatch(db, [
    insert,
    db
      .insert(authorizations)
      .values({ userId: t.userId, appId: t.appId, scopes: t.scopes.join(" "), createdAt: t.createdAt })
      .onConflictDoUpdate({ target: [authorizations.userId, authorizations.appId], set: { scopes: t.scopes.join(" ") } }),
    ...(event ? [reserveRendered(event)] : []),
  ]);
  const seq = reservedSeq(reserved as RawResult | undefined);
  return seq === undefined ? row : { ...row, seq };
}

/** Deletes a token, with its revocation event (rendered before: the token is gone after) in the same batch; the event's sequence. */
export async function deleteToken(db: Db, id: number, event?: StampedEvent): Promise<number | undefined> {
  const results = await runBatch(db, [sql`DELETE FROM tokens WHERE id = ${id}`, ...(event ? [reserveRendered(event)] : [])]);
  return event ? reservedSeq(results[1]) : undefined;
}

/**
 * How far each user's activity day lags the UTC day. Recording a day's activity is a write (once a
 * day per token), so with days that all turn at 00:00 UTC every user active at midnight writes in
 * the same few seconds; a per-user phase spreads those writes over this many seconds.
 */
export const ACTIVITY_SPREAD_SECONDS = 3600;

/** The user's phase: seconds after 00:00 UTC its activity day turns (Fibonacci hashing of the id: neighbours far apart). */
export function activityPhase(userId: number): number {
  return Math.floor(((Math.imul(userId, 0x9e3779b1) >>> 0) / 2 ** 32) * ACTIVITY_SPREAD_SECONDS);
}

/** The day (`YYYY-MM-DD`) a call at `at` (unix seconds) counts as active on for /sys/stats: the UTC day of `at` − phase. */
export function activityDay(userId: number, at: number): string {
  const day = Math.floor((at - activityPhase(userId)) / 86_400);
  // Every request asks; formatting a Date each time was 0.6 % of the Worker's CPU under the mix.
  if (day !== dayMemo.day) dayMemo = { day, text: new Date(day * 86_400_000).toISOString().slice(0, 10) };
  return dayMemo.text;
}
let dayMemo = { day: Number.NaN, text: "" };

// Per isolate by nature: the activity marks this isolate already wrote (token id → day), so that a
// token's next requests, arriving before the write landed, do not write it again.
const activityWritten = new Map<number, string>();
const ACTIVITY_MEMO_MAX = 10_000;

/** Whether a token seen with `lastSeenDay` still needs its activity mark for `day` (and claims it). */
export function claimActivity(tokenId: number, lastSeenDay: string | null, day: string): boolean {
  if (lastSeenDay === day || activityWritten.get(tokenId) === day) return false;
  if (activityWritten.size >= ACTIVITY_MEMO_MAX) activityWritten.clear();
  activityWritten.set(tokenId, day);
  return true;
}

/** Records that a token's user was active on `day` (`activityDay`: once a day per token). */
export async function touchActivity(db: Db, tokenId: number, userId: number, day: string): Promise<void> {
  try {
    await db.batch([
      db
        .update(tokens)
        .set({ lastSeenDay: day })
        .where(and(eq(tokens.id, tokenId))),
      db.insert(userActivity).values({ day, userId }).onConflictDoNothing(),
    ]);
  } catch (e) {
    activityWritten.delete(tokenId); // not written: a later request tries again
    throw e;
  }
}

export const scopeList = (t: TokenRecord) => t.scopes.split(" ").filter(Boolean);

/** Ids of the users who authorized an app (index authorizations_app), oldest authorization first. */
export async function appUserIds(db: Db, appId: number): Promise<number[]> {
  const rows = await db
    .select({ userId: authorizations.userId })
    .from(authorizations)
    .where(eq(authorizations.appId, appId))
    .orderBy(authorizations.createdAt, authorizations.userId);
  return rows.map((r) => r.userId);
}

/** The app's live user tokens with their users, oldest first (one query). */
export async function appUserTokens(db: Db, appId: number) {
  const rows = await db
    .select({ token: tokens, user: users, extras: userExtraColumns() })
    .from(tokens)
    .innerJoin(users, eq(users.id, tokens.userId))
    .where(and(eq(tokens.appId, appId), eq(users.isDisabled, false)))
    .orderBy(tokens.id);
  return rows.map((r) => ({ token: r.token, user: { ...r.user, ...r.extras } }));
}
