import { sql, type SQL } from "drizzle-orm";
import { isolateValue } from "../db/batch";
import { dialect } from "../db/dialect";
import type { AppRef } from "./posts";

// Per isolate: the clients (apps) that posts and messages embed, by app id, so that a page's
// render on D1 does not read an `apps` row per item (a primary-key row D1 counts, and four values
// per item through the database client). A client's id, name and url never change once created; only
// its deletion does (rendered `[REMOVED]`), so an entry is trusted for APP_REF_TTL_MS and then
// read again with the next page that embeds it. The isolate that deletes an app remembers the
// deletion at once; others show it within the TTL (docs/contract-choices/README.md).

/** How long a remembered client is trusted, in ms. */
export const APP_REF_TTL_MS = 60_000;
/** Most clients remembered; the list of their ids rides in every render statement as one value. */
export const APP_REFS_MAX = 256;

interface Entry {
  ref: AppRef;
  until: number;
}
const entries = new Map<number, Entry>();
/** The fresh ids as the statement's value, rebuilt when the set changes or an entry expires. */
let listed: { text: string; until: number } | undefined;
/** When a full memory may next look for entries to drop (at most once a second). */
let nextSweep = 0;

/**
 * Remembers the client an `apps` row read for app `id` (a render that found it). A deletion is
 * final: a read that started before it (or ran on a lagging replica) does not undo it. Entries are
 * never dropped while a statement that listed them may still be decoding: when full, only those
 * expired for a further TTL go, and a new client is not remembered if none has.
 */
export function rememberApp(id: number, ref: AppRef, nowMs = Date.now()): void {
  const known = entries.get(id);
  if (known) {
    if (known.ref.deletedAt != null && ref.deletedAt == null) return;
    if (known.until <= nowMs) listed = undefined; // listed again
    known.ref = ref;
    known.until = nowMs + APP_REF_TTL_MS;
    return;
  }
  if (entries.size >= APP_REFS_MAX) {
    if (nowMs < nextSweep) return;
    nextSweep = nowMs + 1000;
    for (const [old, e] of entries) if (e.until + APP_REF_TTL_MS <= nowMs) entries.delete(old);
    if (entries.size >= APP_REFS_MAX) return;
  }
  entries.set(id, { ref, until: nowMs + APP_REF_TTL_MS });
  listed = undefined;
}

/** The remembered client of app `id`, fresh or not: a render left it out only if it was listed fresh. */
export function rememberedApp(id: number): AppRef | null {
  return entries.get(id)?.ref ?? null;
}

/** App `id` was deleted here (`ref` with its `deletedAt`): this isolate shows it `[REMOVED]` from now on. */
export function rememberDeletedApp(id: number, ref: AppRef, nowMs = Date.now()): void {
  entries.set(id, { ref, until: nowMs + APP_REF_TTL_MS });
  listed = undefined;
}

/** The ids of the fresh remembered clients as the value `knownAppsProbe` binds: `,1,5,` (found with instr, which reads no rows). */
export function knownAppIds(nowMs = Date.now()): string {
  if (listed && nowMs < listed.until) return listed.text;
  const ids: number[] = [];
  let until = Number.POSITIVE_INFINITY;
  for (const [id, e] of entries) {
    if (e.until <= nowMs) continue;
    ids.push(id);
    until = Math.min(until, e.until);
  }
  const text = ids.length ? `,${ids.join(",")},` : "";
  listed = { text, until };
  return text;
}

/** Whether renders leave known clients out (D1); Postgres joins every client. */
const LEFT_OUT = dialect.backend === "d1";

/** The fresh remembered clients' ids, bound into each statement when it runs (`knownAppIds`). */
const knownApps = isolateValue("knownApps", () => knownAppIds());

/**
 * The app id to join `apps` on for a render: on D1, `appId`, or NULL (no row read) when the
 * isolate knows its client fresh; the render then takes the client from `rememberedApp`. Postgres
 * joins every client: it counts no rows, and the condition cost more planning than the join.
 */
export function knownAppsProbe(appId: SQL): SQL {
  return LEFT_OUT ? sql`CASE WHEN instr(${knownApps}, ',' || ${appId} || ',') > 0 THEN NULL ELSE ${appId} END` : appId;
}

/**
 * The client a render gives app `appId`: the `apps` row it read (remembered), or when the
 * statement left it out, the remembered one.
 */
export function renderedApp(appId: number | null, read: AppRef | null): AppRef | null {
  if (appId == null || !LEFT_OUT) return read;
  if (read) {
    rememberApp(appId, read);
    return read;
  }
  return rememberedApp(appId);
}

/** Clears every entry (tests). */
export function clearAppRefs(): void {
  entries.clear();
  listed = undefined;
  nextSweep = 0;
}
