import type { Context } from "hono";
import { now } from "../http/time";

/** What every view needs to render objects for this request. */
export interface ViewContext {
  viewerId: number | null;
  schemaBase: string;
  /** Origin for links this API serves (file URLs, stream endpoints). */
  origin: string;
  now: number;
}

export function viewContext(c: Context): ViewContext {
  const auth = c.get("auth") as { user?: { id: number } | null } | null;
  return {
    viewerId: auth?.user?.id ?? null,
    schemaBase: c.env.SCHEMA_BASE,
    origin: c.env.PUBLIC_ORIGIN || new URL(c.req.url).origin,
    now: now(c),
  };
}
