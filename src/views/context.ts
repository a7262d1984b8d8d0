import type { Context } from "hono";
import { DEFAULT_SHAPE, shapeOf, type Shape } from "../http/params";
import { now } from "../http/time";

/** What every view needs to render objects for this request. */
export interface ViewContext {
  viewerId: number | null;
  schemaBase: string;
  /** Origin for links this API serves (file URLs, stream endpoints). */
  origin: string;
  now: number;
  /** How users and posts are rendered (the general parameters); absent: the defaults. */
  shape?: Shape;
}

/** Per request: its view, built again only when its `auth` changes (set after the first call). */
const views = new WeakMap<Context, { auth: unknown; view: ViewContext }>();

/**
 * The view of this request, built once per request (and `auth`): handlers and renderers ask for it
 * per item, and building it parses the URL and the query (6 % of a page of posts by id, once per post).
 */
export function viewContext(c: Context): ViewContext {
  const auth = c.get("auth") as { user?: { id: number } | null } | null;
  const kept = views.get(c);
  if (kept && kept.auth === auth) return kept.view;
  const view: ViewContext = {
    viewerId: auth?.user?.id ?? null,
    schemaBase: c.env.SCHEMA_BASE,
    origin: c.env.PUBLIC_ORIGIN || new URL(c.req.url).origin,
    now: now(c),
    shape: shapeOf(c.req.query()),
  };
  views.set(c, { auth, view });
  return view;
}

/**
 * The context events are rendered in: for no particular viewer and with the default rendering,
 * whatever the request that caused them asked for its own response (decisions §8).
 */
export function eventContext(c: Context): ViewContext {
  return { ...viewContext(c), viewerId: null, shape: undefined };
}

/** The shape of a view context (the defaults when it has none). */
export const shapeOfView = (view: ViewContext): Shape => view.shape ?? DEFAULT_SHAPE;
