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

const encoder = new TextEncoder();
/** Whole 200 bodies of cached renderings, for requests with nothing to add to `meta`. */
const plainBodies = new WeakMap<Uint8Array, Uint8Array<ArrayBuffer>>();

/**
 * A 200 envelope whose `data` is JSON already encoded (a cached rendering): the same bytes
 * `ok(c, data)` would send, without encoding the data again (nor, when `meta` has nothing but
 * the code, copying it again).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function okEncoded(c: Context, data: Uint8Array): any {
  const extra = c.get("extraMeta") as Meta | undefined;
  const plain = !extra || Object.keys(extra).length === 0;
  let body = plain ? plainBodies.get(data) : undefined;
  if (!body) {
    const head = encoder.encode(`{"meta":${JSON.stringify({ code: 200, ...extra })},"data":`);
    body = new Uint8Array(head.length + data.length + 1);
    body.set(head);
    body.set(data, head.length);
    body[body.length - 1] = 0x7d; // }
    if (plain) plainBodies.set(data, body);
  }
  return c.body(body, 200, { "content-type": "application/json" });
}
