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

export function viewContext(c: Context): ViewContext {
  const auth = c.get("auth") as { user?: { id: number } | null } | null;
  return {
    viewerId: auth?.user?.id ?? null,
    schemaBase: c.env.SCHEMA_BASE,
    origin: c.env.PUBLIC_ORIGIN || new URL(c.req.url).origin,
    now: now(c),
    shape: shapeOf(c.req.query()),
  };
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
