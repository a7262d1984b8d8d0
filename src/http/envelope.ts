import type { Context } from "hono";

export type Meta = Record<string, unknown>;

/**
 * A success envelope `{meta: {code, ...}, data}`. Returns `any` because route handlers are typed
 * against their OpenAPI response schemas, which document the same shape.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function ok(c: Context, data: unknown, meta: Meta = {}, status: 200 | 201 | 202 = 200): any {
  const extra = c.get("extraMeta") as Meta | undefined;
  return c.json({ meta: { code: status, ...extra, ...meta }, data }, status);
}

/** Adds fields to `meta` of whatever envelope this request ends up returning. */
export function addMeta(c: Context, fields: Meta): void {
  c.set("extraMeta", { ...(c.get("extraMeta") as Meta | undefined), ...fields });
}
