import { and, asc, eq, getTableColumns, inArray, lte, ne, sql, type SQL } from "drizzle-orm";
import type { Page } from "../http/pagination";
import type { AppRecord } from "./apps";
import { mixedBatch, runBatch } from "../db/batch";
import { schema, type Db } from "../db";
import { interactionWrites } from "./interactions";
import { pageLimit, pageOrder, pageWhere } from "./page-sql";
import { userViewColumns, type UserRecord, type UserView } from "./users";
import { greatest, inList, jsonRows, lastId } from "../db/dialect";

const { polls, pollOptions, pollResponses, users, apps } = schema;

export type PollRecord = typeof polls.$inferSelect;

export interface PollOption {
  position: number;
  text: string;
  respondents: number;
}

/** A poll with everything its views need, as one viewer sees it. */
export interface LoadedPoll {
  poll: PollRecord;
  /** The creator (with the viewer's relationship flags when loaded for a viewer). */
  user: UserRecord | UserView;
  app: AppRecord | null;
  /** The viewer's chosen positions; null when the viewer never responded (`[]` once cleared). */
  myPositions: number[] | null;
  options: PollOption[];
  /** Users per chosen position, oldest response first: filled only for closed, non-anonymous polls. */
  respondentIds: Map<number, number[]>;
}

const parsePositions = (v: unknown): number[] => {
  const a = typeof v === "string" ? JSON.parse(v) : v;
  return Array.isArray(a) ? a.map(Number) : [];
};

/** `polls.id` is one of `ids`: one bound parameter however many ids (D1 caps parameters per query). */
export const pollIdIn = (ids: number[]): SQL => sql`${polls.id} in ${inList(ids)}`;

/** Polls of `types` only (the token's extended `polls:<type>` scopes); null = every type. */
export const typeFilter = (types: string[] | null): SQL | undefined => (types ? sql`${polls.type} in ${inList(types, "text")}` : undefined);

/** The list filters of the general poll parameters (`include_closed`, `include_private`, `poll_types`, `exclude_poll_types`). */
export interface PollListFilters {
  closed: boolean;
  private: boolean;
  /** Only these types (null: any). */
  types: string[] | null;
  /** None of these types (ignored when `types` is set). */
  excludeTypes: string[];
}

/** WHERE conditions of the list filters at `now` (unix seconds). */
export function listFilterSql(f: PollListFilters, now: number): SQL | undefined {
  return and(
    f.closed ? undefined : sql`${polls.closedAt} > ${now}`,
    f.private ? undefined : eq(polls.isPublic, true),
    f.types ? typeFilter(f.types) : f.excludeTypes.length ? sql`${polls.type} not in ${inList(f.excludeTypes, "text")}` : undefined,
  );
}

/**
 * Loads the polls matching `where` (deleted ones never match) with creator, client, options, the
 * viewer's response and, for closed non-anonymous polls, who chose each option: one round trip
 * (one batch of single-table reads: drizzle's D1 batch maps rows by column name, so joined
 * selections with repeated names cannot go through it). `order`/`limit` page the polls; the
 * per-poll reads reuse the same selection as a subquery, so they cover exactly the polls returned.
 */
export async function loadPolls(
  db: Db,
  where: SQL | undefined,
  opts: { viewerId: number | null; now: number; order?: SQL; limit?: number },
): Promise<LoadedPoll[]> {
  const cond = and(eq(polls.isDeleted, false), where);
  const viewer = opts.viewerId ?? 0;
  let ids = db.select({ id: polls.id }).from(polls).where(cond).$dynamic();
  let main = db
    .select({
      ...getTableColumns(polls),
      // Spelled out: drizzle leaves select-list columns unqualified, and a bare "id" here would be r.id.
      mine: sql<string | null>`(select r.positions from poll_responses r where r.poll_id = "polls"."id" and r.user_id = ${viewer})`,
    })
    .from(polls)
    .where(cond)
    .$dynamic();
  if (opts.order) {
    ids = ids.orderBy(opts.order);
    main = main.orderBy(opts.order);
  }
  if (opts.limit !== undefined) {
    ids = ids.limit(opts.limit);
    main = main.limit(opts.limit);
  }
  const [rows, creators, clients, options, responses] = await db.batch([
    main,
    db
      .select(userViewColumns(opts.viewerId))
      .from(users)
      .where(inArray(users.id, db.select({ id: polls.userId }).from(polls).where(inArray(polls.id, ids)))),
    db
      .select()
      .from(apps)
      .where(inArray(apps.id, db.select({ id: polls.appId }).from(polls).where(inArray(polls.id, ids)))),
    db
      .select({ pollId: pollOptions.pollId, position: pollOptions.position, text: pollOptions.text, respondents: pollOptions.respondents })
      .from(pollOptions)
      .where(inArray(pollOptions.pollId, ids))
      .orderBy(pollOptions.pollId, pollOptions.position),
    db
      .select({ pollId: pollResponses.pollId, userId: pollResponses.userId, positions: pollResponses.positions })
      .from(pollResponses)
      .where(
        inArray(
          pollResponses.pollId,
          db
            .select({ id: polls.id })
            .from(polls)
            .where(and(inArray(polls.id, ids), lte(polls.closedAt, opts.now), eq(polls.isAnonymous, false))),
        ),
      )
      .orderBy(asc(pollResponses.id)),
  ]);
  const userById = new Map(creators.map((u) => [u.id, u as UserView]));
  const appById = new Map(clients.map((a) => [a.id, a]));
  const byPoll = new Map<number, LoadedPoll>();
  const out: LoadedPoll[] = [];
  for (const { mine, ...poll } of rows) {
    const user = userById.get(poll.userId);
    if (!user) continue;
    const p: LoadedPoll = {
      poll,
      user,
      app: appById.get(poll.appId) ?? null,
      myPositions: mine == null ? null : parsePositions(mine),
      options: [],
      respondentIds: new Map(),
    };
    byPoll.set(poll.id, p);
    out.push(p);
  }
  for (const o of options) byPoll.get(o.pollId)?.options.push({ position: o.position, text: o.text, respondents: o.respondents });
  for (const r of responses) {
    const p = byPoll.get(r.pollId);
    if (!p) continue;
    for (const pos of parsePositions(r.positions)) {
      const list = p.respondentIds.get(pos) ?? [];
      list.push(r.userId);
      p.respondentIds.set(pos, list);
    }
  }
  return out;
}

/**
 * What the notice of a poll attached by a raw replacement value needs (not deleted polls by id:
 * token, prompt, closing time; their options in order), as two queries to batch with others.
 */
export const pollNoticeQueries = (db: Db, ids: number[]) =>
  [
    db
      .select({ id: polls.id, pollToken: polls.pollToken, prompt: polls.prompt, closedAt: polls.closedAt, userId: polls.userId })
      .from(polls)
      .where(and(pollIdIn(ids), eq(polls.isDeleted, false))),
    db
      .select({ pollId: pollOptions.pollId, position: pollOptions.position, text: pollOptions.text })
      .from(pollOptions)
      .where(sql`${pollOptions.pollId} in ${inList(ids)}`)
      .orderBy(pollOptions.pollId, pollOptions.position),
  ] as const;

/** Polls by id (any order; the caller restores the requested one), optionally only those the list filters keep. */
export function pollsByIds(db: Db, ids: number[], viewerId: number | null, now: number, filters?: PollListFilters) {
  return ids.length ? loadPolls(db, and(pollIdIn(ids), filters ? listFilterSql(filters, now) : undefined), { viewerId, now }) : Promise.resolve([]);
}

/** One page of the polls a user created, newest first (pagination id = poll id). */
export function pollsByCreator(db: Db, creatorId: number, page: Page, types: string[] | null, now: number, filters: PollListFilters) {
  return loadPolls(db, and(eq(polls.userId, creatorId), pageWhere(polls.id, page), typeFilter(types), listFilterSql(filters, now)), {
    viewerId: creatorId,
    now,
    order: pageOrder(polls.id, page),
    limit: pageLimit(page),
  });
}

export interface ResponseItem {
  /** The response's id: the item's pagination id. */
  id: number;
  createdAt: number;
  poll: PollRecord;
  responder: UserView;
  options: { position: number; text: string }[];
}

/**
 * One page of the (non-empty) responses to a creator's polls, newest first, optionally only to
 * `pollIds`: responses, responders and the polls' options in one round trip.
 */
export async function responsesToCreator(
  db: Db,
  creatorId: number,
  page: Page,
  pollIds: number[] | null,
  types: string[] | null,
  filters: { now: number; list: PollListFilters },
): Promise<ResponseItem[]> {
  const cond = and(
    eq(polls.userId, creatorId),
    eq(polls.isDeleted, false),
    listFilterSql(filters.list, filters.now),
    ne(pollResponses.positions, sql`'[]'`),
    pollIds ? pollIdIn(pollIds) : undefined,
    typeFilter(types),
    pageWhere(pollResponses.id, page),
  );
  const order = pageOrder(pollResponses.id, page);
  const limit = pageLimit(page);
  /** One column of the page's responses, as a subquery. */
  const inPage = (col: typeof pollResponses.pollId | typeof pollResponses.userId) =>
    db.select({ id: col }).from(pollResponses).innerJoin(polls, eq(polls.id, pollResponses.pollId)).where(cond).orderBy(order).limit(limit);
  const [rows, pagePolls, responders, options] = await db.batch([
    db
      .select({ id: pollResponses.id, createdAt: pollResponses.createdAt, pollId: pollResponses.pollId, userId: pollResponses.userId })
      .from(pollResponses)
      .innerJoin(polls, eq(polls.id, pollResponses.pollId))
      .where(cond)
      .orderBy(order)
      .limit(limit),
    db
      .select()
      .from(polls)
      .where(inArray(polls.id, inPage(pollResponses.pollId))),
    db
      .select(userViewColumns(creatorId))
      .from(users)
      .where(inArray(users.id, inPage(pollResponses.userId))),
    db
      .select({ pollId: pollOptions.pollId, position: pollOptions.position, text: pollOptions.text })
      .from(pollOptions)
      .where(inArray(pollOptions.pollId, inPage(pollResponses.pollId)))
      .orderBy(pollOptions.pollId, pollOptions.position),
  ]);
  const pollById = new Map(pagePolls.map((p) => [p.id, p]));
  const userById = new Map(responders.map((u) => [u.id, u as UserView]));
  const byPoll = new Map<number, { position: number; text: string }[]>();
  for (const o of options) {
    const list = byPoll.get(o.pollId) ?? [];
    list.push({ position: o.position, text: o.text });
    byPoll.set(o.pollId, list);
  }
  return rows.flatMap((r) => {
    const poll = pollById.get(r.pollId);
    const responder = userById.get(r.userId);
    return poll && responder ? [{ id: r.id, createdAt: r.createdAt, poll, responder, options: byPoll.get(r.pollId) ?? [] }] : [];
  });
}

export interface NewPoll {
  userId: number;
  appId: number;
  type: string;
  prompt: string;
  isAnonymous: boolean;
  isPublic: boolean;
  maxOptions: number;
  pollToken: string;
  createdAt: number;
  closedAt: number;
  raw: unknown;
}

/** Search facets of a new poll: `raw_type` per raw type; `file` per file named in raw (kept only if it exists). */
export interface PollFacets {
  rawTypes: string[];
  fileIds: number[];
}

/**
 * Creates a poll, its options and its search facets atomically in one batch. The options and
 * facets find the poll's id as the batch's last insert into polls (dialect `lastId`).
 */
export async function createPoll(db: Db, values: NewPoll, options: string[], facets: PollFacets): Promise<PollRecord> {
  const NEW = lastId("polls");
  const facetRows: SQL[] =
    facets.rawTypes.length || facets.fileIds.length
      ? [
          sql`INSERT INTO poll_facets (poll_id, facet, value)
            SELECT ${NEW}, 'raw_type', j.value FROM ${jsonRows(facets.rawTypes, "j", "text")}
            UNION ALL SELECT ${NEW}, 'file', CAST(f.id AS TEXT) FROM files f WHERE f.id IN ${inList(facets.fileIds)} AND f.is_deleted = 0
            ON CONFLICT DO NOTHING`,
        ]
      : [];
  const [[poll]] = await mixedBatch(db, [
    db.insert(polls).values(values).returning(),
    db.insert(pollOptions).values(options.map((text, i) => ({ pollId: NEW, position: i + 1, text }))),
    ...facetRows,
  ]);
  return poll as PollRecord;
}

/**
 * Sets (or, with `[]`, clears) a user's response in one batch: the option counters move off the
 * previous choice and onto the new one with SQL increments, and the response row is replaced (so
 * it gets a new id: the newest response pages first). Every write is guarded by the poll still
 * being open and not deleted at write time. `interaction` records a `poll_response` for the
 * poll's creator (decisions §11) in the same batch.
 */
export async function setResponse(
  db: Db,
  r: { pollId: number; userId: number; positions: number[]; at: number; interaction?: { creatorId: number } },
): Promise<void> {
  const open = sql`exists (select 1 from polls where id = ${r.pollId} and is_deleted = 0 and closed_at > ${r.at})`;
  const positions = JSON.stringify(r.positions);
  await runBatch(db, [
    sql`update poll_options set respondents = ${greatest(sql`respondents - 1`, sql`0`)}
        where poll_id = ${r.pollId} and ${open}
          and position in ${inList(sql`(select positions from poll_responses where poll_id = ${r.pollId} and user_id = ${r.userId})`)}`,
    sql`delete from poll_responses where poll_id = ${r.pollId} and user_id = ${r.userId} and ${open}`,
    sql`insert into poll_responses (poll_id, user_id, positions, created_at)
        select ${r.pollId}, ${r.userId}, ${positions}, ${r.at} where ${open}`,
    sql`update poll_options set respondents = respondents + 1
        where poll_id = ${r.pollId} and ${open} and position in ${inList(positions)}`,
    ...(r.interaction
      ? interactionWrites({ userId: r.interaction.creatorId, action: "poll_response", objectId: r.pollId, actorId: r.userId, at: r.at, when: open })
      : []),
  ]);
}

/** Marks a poll deleted: lookups then answer 404 and lists leave it out. */
export async function deletePoll(db: Db, id: number): Promise<void> {
  await db.update(polls).set({ isDeleted: true }).where(eq(polls.id, id));
}
