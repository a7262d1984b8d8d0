import { drizzle } from "drizzle-orm/d1";
import * as schema from "../../schema/tables";

/** The drizzle handle every store takes; one per request, on `c.var.db`. */
export type Db = ReturnType<typeof openDb>;

export function openDb(d1: D1Database) {
  return drizzle(d1, { schema });
}

export { schema };
