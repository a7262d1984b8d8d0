import { z } from "@hono/zod-openapi";
import { ApiError } from "./errors";

/** Query parameters every paginated list accepts (decisions §2). */
export const pageQuery = {
  count: z.string().optional().openapi({ description: "1..200 newest first, -200..-1 oldest first; default 20" }),
  since_id: z.string().optional().openapi({ description: "Exclusive lower bound (pagination id)" }),
  before_id: z.string().optional().openapi({ description: "Exclusive upper bound (pagination id)" }),
};

/** Special bound values on markable streams, resolved against the stream's marker. */
export const MARKER_BOUNDS = ["last_read", "last_read_inclusive", "marker", "marker_inclusive"] as const;
export type MarkerBound = (typeof MARKER_BOUNDS)[number];

export interface Page {
  /** Items wanted (1..200). */
  limit: number;
  /** false when a negative count asked for the oldest items first. */
  newestFirst: boolean;
  /** Items must have pagination id > sinceId (>= when sinceInclusive). */
  sinceId?: number;
  sinceInclusive?: boolean;
  /** Items must have pagination id < beforeId (<= when beforeInclusive). */
  beforeId?: number;
  beforeInclusive?: boolean;
}

export interface MarkerPositions {
  position: number;
  lastReadId: number;
}

/**
 * Reads count/since_id/before_id. An invalid count is ignored (default 20); a bound that is
 * not an integer is a 400, except the marker values on markable streams.
 */
export function parsePage(q: { count?: string; since_id?: string; before_id?: string }, marker?: MarkerPositions | null): Page {
  const n = q.count !== undefined && /^-?\d+$/.test(q.count) ? Number(q.count) : NaN;
  const valid = Number.isInteger(n) && n !== 0 && Math.abs(n) <= 200;
  const page: Page = { limit: valid ? Math.abs(n) : 20, newestFirst: valid ? n > 0 : true };
  const since = bound("since_id", q.since_id, marker);
  if (since) [page.sinceId, page.sinceInclusive] = since;
  const before = bound("before_id", q.before_id, marker);
  if (before) [page.beforeId, page.beforeInclusive] = before;
  return page;
}

function bound(name: string, value: string | undefined, marker: MarkerPositions | null | undefined): [number, boolean] | undefined {
  if (value === undefined || value === "") return undefined;
  if (/^\d+$/.test(value)) return [Number(value), false];
  if (marker !== undefined && (MARKER_BOUNDS as readonly string[]).includes(value)) {
    if (marker === null) return undefined; // no marker yet: no bound
    const id = value.startsWith("last_read") ? marker.lastReadId : marker.position;
    return [id, value.endsWith("_inclusive")];
  }
  throw ApiError.badRequest(`'${name}' must be an integer id${marker !== undefined ? " or a marker value" : ""}`);
}

/** True when the name is one of the marker bound values. */
export function usesMarker(q: { since_id?: string; before_id?: string }): boolean {
  return [q.since_id, q.before_id].some((v) => v !== undefined && (MARKER_BOUNDS as readonly string[]).includes(v));
}

/**
 * Turns rows fetched with `limit + 1` (in the page's direction) into the page, newest first,
 * with `meta.more`, `min_id` and `max_id`.
 */
export function finishPage<T>(rows: T[], page: Page, paginationId: (row: T) => number | string) {
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows.slice();
  if (!page.newestFirst) items.reverse();
  const meta: { more: boolean; min_id?: string; max_id?: string } = { more };
  if (items.length) {
    meta.max_id = String(paginationId(items[0]));
    meta.min_id = String(paginationId(items[items.length - 1]));
  }
  return { items, meta };
}
