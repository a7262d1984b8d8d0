import type { Context } from "hono";
import { assertCleanInput } from "./clean-text";
import { ApiError } from "./errors";

/**
 * Fields of a body sent as JSON, form-urlencoded or multipart (the OAuth token endpoint,
 * presence, report). Files in multipart bodies are left out. Text with a NUL or an unpaired
 * surrogate is a 400 naming its field.
 */
export async function readFields(c: Context): Promise<Record<string, unknown>> {
  const fields = await parseFields(c);
  assertCleanInput(fields);
  return fields;
}

async function parseFields(c: Context): Promise<Record<string, unknown>> {
  const type = (c.req.header("content-type") ?? "").toLowerCase();
  if (type.startsWith("application/json")) {
    const text = await c.req.text();
    if (!text.trim()) return {};
    try {
      const parsed = JSON.parse(text);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
    } catch {
      throw ApiError.badRequest("malformed JSON in request body");
    }
    throw ApiError.badRequest("the JSON body must be an object");
  }
  if (type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data")) {
    try {
      const body = await c.req.parseBody();
      return Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === "string"));
    } catch {
      throw ApiError.badRequest("malformed form body");
    }
  }
  return {};
}

/** A string field or undefined; a non-string value is a 400 naming the field. */
export function stringField(fields: Record<string, unknown>, name: string): string | undefined {
  const v = fields[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (typeof v !== "string") throw ApiError.badRequest(`'${name}' must be a string`);
  return v;
}
