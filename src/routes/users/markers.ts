import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { BoundQuery } from "../../db/batch";
import { currentUser, userToken } from "../../auth/access";
import { MORE_LIMITS } from "../../config";
import { publish } from "../../events/publish";
import { eventContext } from "../../views/context";
import { addMeta, ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { parsePage, usesMarker, type Page } from "../../http/pagination";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { now } from "../../http/time";
import type { AppEnv } from "../../http/types";
import type { Row } from "../../stores/channel-sql";
import { getMarker, listMarkers, MARKER_NAME, markerSql, readMarker, setMarkers, type MarkerInput } from "../../stores/markers";
import { renderMarker, renderMarkerMeta } from "../../views/marker";

const MarkerSchema = z
  .object({
    name: z.string(),
    id: z.string(),
    last_read_id: z.string(),
    percentage: z.number(),
    updated_at: z.string(),
    version: z.string(),
  })
  .openapi("Marker");

const exampleMarker = { name: "channel:12", id: "245", last_read_id: "245", percentage: 0, updated_at: "2026-03-14T09:26:53Z", version: "b3f1c2d4e5" };

/** `1`/`true` on, `0`/`false`/absent off; anything else is a 400 naming the parameter. */
function resetFlag(v: string | undefined): boolean {
  if (v === undefined || v === "" || v === "0" || v === "false") return false;
  if (v === "1" || v === "true") return true;
  throw ApiError.badRequest("'reset_read_id' must be 1 or true (or 0 or false)");
}

/** Validates the body: a JSON array of 1..10 marker inputs. */
function parseInputs(body: unknown): MarkerInput[] {
  if (!Array.isArray(body)) throw ApiError.badRequest("the body must be a JSON array of markers");
  const list: unknown[] = body;
  if (!list.length) throw ApiError.badRequest("the body must list at least one marker");
  const max = MORE_LIMITS.markersPerRequest;
  if (list.length > max) throw ApiError.badRequest(`the body lists ${list.length} markers; at most ${max} may be set in one request`);
  return list.map((item, i) => {
    const at = list.length > 1 ? ` (marker ${i + 1})` : "";
    if (!item || typeof item !== "object" || Array.isArray(item)) throw ApiError.badRequest(`marker ${i + 1} must be an object with 'id' and 'name'`);
    const { id, name, percentage } = item as Record<string, unknown>;
    if (name === undefined || name === null) throw ApiError.badRequest(`'name'${at} is required`);
    if (typeof name !== "string") throw ApiError.badRequest(`'name'${at} must be a string`);
    if (!MARKER_NAME.test(name)) {
      throw ApiError.badRequest(`'name'${at} '${name.slice(0, 64)}' is not a marker; use global, personal, mentions or channel:{id}`);
    }
    if (id === undefined || id === null) throw ApiError.badRequest(`'id'${at} is required`);
    const idOk = ((typeof id === "string" && /^\d{1,16}$/.test(id)) || typeof id === "number") && Number.isSafeInteger(Number(id)) && Number(id) >= 0;
    if (!idOk) throw ApiError.badRequest(`'id'${at} must be an integer id as a string`);
    let pct = 0;
    if (percentage !== undefined && percentage !== null) {
      const n = typeof percentage === "string" && /^\d{1,3}$/.test(percentage) ? Number(percentage) : percentage;
      if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 100) {
        throw ApiError.badRequest(`'percentage'${at} must be an integer from 1 to 100`);
      }
      pct = n;
    }
    return { name, position: Number(id), percentage: pct };
  });
}

/** `name` of GET /markers: one or more marker names, comma-separated. */
function parseNames(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const names = [...new Set(v.split(","))];
  const bad = names.find((n) => !MARKER_NAME.test(n));
  if (bad !== undefined) throw ApiError.badRequest(`'name' '${bad.slice(0, 64)}' is not a marker; use global, personal, mentions or channel:{id}`);
  return names;
}

const ConnectionId = z
  .string()
  .regex(/^[0-9a-f]{32}$/, { message: "must be a user stream connection id" })
  .optional()
  .openapi({ description: "The caller's own user stream connection: every other connection of the user gets the `marker` events" });

export const markerRoutes = createRouter()
  .openapi(
    defineRoute(userToken(), {
      method: "get",
      path: "/markers",
      tags: ["Stream markers"],
      summary: "The caller's markers",
      description:
        "Every marker the user has set, by name; `name` (comma-separated) narrows to those names. Markers never set are left out. " +
        "A marker moved with POST /markers reaches the user's user stream connections live as a `marker` event.",
      request: {
        query: z.object({ name: z.string().optional().openapi({ description: "Marker names, e.g. `personal` or `personal,channel:12`" }) }),
      },
      responses: { 200: Envelope(z.array(MarkerSchema), "Marker objects, by name", [exampleMarker]), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const names = parseNames(c.req.valid("query").name);
      return ok(c, (await listMarkers(c.var.db, currentUser(c).id, names)).map(renderMarker));
    },
  )
  .openapi(
    defineRoute(userToken(), {
      method: "post",
      path: "/markers",
      tags: ["Stream markers"],
      summary: "Set stream markers (at most 10 per request, all or none)",
      description:
        "Body: a JSON array of `{id, name, percentage?}`. Names: `global`, `personal`, `mentions`, `channel:{id}` (a channel " +
        "the caller cannot read → 403; an unknown name → 400). `id` becomes the marker's position; `last_read_id` only moves " +
        "forward unless `reset_read_id=1` (or `true`). Every update gets a new opaque `version`. Each updated marker is sent as a " +
        "`marker` event to the user's user stream connections (but `connection_id`, the caller's own).",
      request: {
        query: z.object({
          reset_read_id: z.string().optional().openapi({ description: "1 or true: `last_read_id` takes `id` even backwards" }),
          connection_id: ConnectionId,
        }),
        body: {
          content: {
            "application/json": {
              // Checked by parseInputs, whose messages name the marker and field at fault.
              schema: z.any().openapi({ description: "JSON array of up to 10 `{id (integer as a string), name, percentage? (1..100)}`" }),
            },
          },
          required: true,
        },
      },
      responses: { 200: Envelope(z.array(MarkerSchema), "The updated markers", [exampleMarker]), ...errors(400, 401, 403, 415) },
    }),
    async (c) => {
      const user = currentUser(c);
      const reset = resetFlag(c.req.query("reset_read_id"));
      const inputs = parseInputs(c.req.valid("json"));
      const route = { actorId: user.id, exceptConnectionId: c.req.valid("query").connection_id };
      const result = await setMarkers(c.var.db, user.id, inputs, reset, now(c), { origin: eventContext(c).origin, route });
      if (!result.ok) throw ApiError.forbidden("'name' names a channel you cannot read");
      const markers = result.markers.map(renderMarker);
      publish(c, ...result.markers.map((m, i) => ({ type: "marker" as const, data: markers[i], route, seq: result.seqs.get(m.name) })));
      return ok(c, markers);
    },
  );

type PageParams = { count?: string; since_id?: string; before_id?: string };

export interface MarkableStream {
  page: Page;
  /** The marker read to run in the same batch as the page (undefined when already read or none). */
  read: BoundQuery | undefined;
  /** Sets `meta.marker` from the rows of `read` (or the marker read up front); call on success only. */
  done(rows?: Row[]): void;
}

/**
 * The page of a markable stream (decisions §2, §6) and its `meta.marker`. `name` is the stream's
 * marker, or null for a stream that has none (then this is plain `parsePage`). The marker is read
 * in the page's own batch (`read`); only when `since_id`/`before_id` use a marker value does it
 * take one indexed read before the page, since the bound depends on it. Without a user (no token,
 * or an app token) there is no marker: marker values set no bound and `meta.marker` is `{name}`.
 */
export async function markableStream(c: Context<AppEnv>, q: PageParams, name: string | null): Promise<MarkableStream> {
  if (name == null) return { page: parsePage(q), read: undefined, done: () => {} };
  const userId = c.var.auth?.user?.id ?? null;
  const setMeta = (m: ReturnType<typeof readMarker>) => addMeta(c, { marker: renderMarkerMeta(name, m) });
  if (userId == null) return { page: parsePage(q, null), read: undefined, done: () => setMeta(null) };
  if (usesMarker(q)) {
    const marker = await getMarker(c.var.db, userId, name);
    const page = parsePage(q, marker && { position: marker.position, lastReadId: marker.lastReadId });
    return { page, read: undefined, done: () => setMeta(marker) };
  }
  return { page: parsePage(q, null), read: markerSql(userId, name), done: (rows) => setMeta(readMarker(rows?.[0])) };
}
