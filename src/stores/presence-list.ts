import { sql } from "drizzle-orm";
import { schema, type RawResult } from "../db";
import { BoundQuery, compile } from "../db/batch";
import { renderPresence } from "../views/presence";
import type { PresenceRecord } from "./presence";

// GET /presence lists every user online: 10,000 rows and 1.9 MB at the bench's size. Reading,
// sorting and rendering them on every request cost 30 times a one-row read, while the list
// changes only when a presence or a listed user's name or avatar is written. So the rendered
// list is kept per isolate with the version it was read at (the sum of `presence_versions`, which
// triggers bump on those writes, read in the same snapshot as the list), and served again while
// the version read alongside the caller's token lookup is the same and no listed status has
// lapsed. A writer's next read always sees its write: the version moves in the write's own
// transaction.

const { presence, presenceVersions, users } = schema;

/** The list's version: read with the token (one round trip) and with every list read (same snapshot). */
let versionQuery: ReturnType<typeof compile> | undefined;
export function presenceVersionQuery(): BoundQuery {
  versionQuery ??= compile(sql`SELECT coalesce(sum(${presenceVersions.version}), 0) AS v FROM ${presenceVersions}`);
  return new BoundQuery(versionQuery, true);
}

/** Per isolate: compiled once on first use, as the version query. */
let listQuery: ReturnType<typeof compile> | undefined;
/** Every live status at `now`, newest update first, with the fields a Presence object shows. */
function onlineList(now: number): BoundQuery {
  listQuery ??= compile(sql`SELECT ${users.id} AS id, ${users.username} AS username, ${users.name} AS name, ${users.avatarUrl} AS avatar,
      ${presence.presence} AS presence, ${presence.lastSeenAt} AS seen, ${presence.expiresAt} AS expires
    FROM ${presence} JOIN ${users} ON ${users.id} = ${presence.userId}
    WHERE ${presence.expiresAt} > ${sql.placeholder("now")} AND ${users.isDisabled} = 0
    ORDER BY ${presence.lastSeenAt} DESC, ${presence.userId} DESC`);
  return new BoundQuery({ sql: listQuery.sql, params: [now] });
}

interface RenderedList {
  version: number;
  origin: string;
  /** The request time it was read at, and when its first status lapses. */
  readAt: number;
  validUntil: number;
  /** The JSON of the `data` array, encoded once. */
  bytes: Uint8Array;
}

/** Per isolate: the last list this isolate rendered, served again while its version and validity hold. */
let cached: RenderedList | undefined;
const encoder = new TextEncoder();

const versionOf = (r: RawResult | undefined) => (r?.results[0] ? Number(r.results[0].v) : undefined);

/** The cached list, if it is still exact at `now` for a reader that saw `version`. */
export function cachedPresenceList(version: RawResult | undefined, origin: string, now: number): Uint8Array | undefined {
  const v = versionOf(version);
  if (!cached || v === undefined || cached.version !== v || cached.origin !== origin) return undefined;
  return now >= cached.readAt && now < cached.validUntil ? cached.bytes : undefined;
}

/** The statements of one read of the list: its version and its rows, in one snapshot. */
export const presenceListReads = (now: number) => [presenceVersionQuery(), onlineList(now)] as const;

/** Renders the rows of `presenceListReads` as the JSON of the `data` array, and keeps it for the next readers. */
export function renderPresenceList([version, list]: readonly RawResult[], origin: string, now: number): Uint8Array {
  let validUntil = Number.POSITIVE_INFINITY;
  const data = list.results.map((r) => {
    validUntil = Math.min(validUntil, Number(r.expires));
    const record: PresenceRecord = {
      userId: Number(r.id),
      username: String(r.username),
      name: r.name as string | null,
      avatarUrl: r.avatar as string | null,
      presence: String(r.presence),
      lastSeenAt: Number(r.seen),
    };
    return renderPresence(record, origin);
  });
  const bytes = encoder.encode(JSON.stringify(data));
  const v = versionOf(version);
  if (v !== undefined) cached = { version: v, origin, readAt: now, validUntil, bytes };
  return bytes;
}
