import { MORE_LIMITS } from "../config";
import { ApiError, printable } from "./errors";

// Text is one thing on both backends: Postgres refuses U+0000 in text and lone UTF-16 surrogates
// (they have no UTF-8 form), while SQLite would store them. Every text the API stores or searches
// is therefore refused with a 400 naming its field when it holds either, before any work is done.

/** A fast pre-test: a NUL or any surrogate (most text has neither). */
const SUSPECT = /[\u0000\uD800-\uDFFF]/;
/** NUL, or a surrogate that is not half of a pair (in `u` mode a pair is one code point, not `\p{Cs}`). */
const BAD = /[\u0000\p{Cs}]/u;

/** Whether `s` holds a NUL character or an unpaired surrogate. */
export const hasBadText = (s: string): boolean => SUSPECT.test(s) && BAD.test(s);

/** The 400 for a field whose text holds a NUL or an unpaired surrogate. */
export const badTextError = (field: string) => ApiError.badRequest(`'${field}' contains a NUL character or an unpaired surrogate`);

/**
 * Checks every string (values and keys, at any depth) of a parsed input: a NUL or an unpaired
 * surrogate is a 400 naming its field by path (e.g. `'raw.io.example.note.0.text'`), and nesting
 * deeper than `MORE_LIMITS.jsonDepth` is a 400 too (so no later step recurses without bound).
 * Iterative: a hostile depth cannot overflow the stack here.
 */
export function assertCleanInput(value: unknown, root?: string): void {
  const stack: { v: unknown; path: readonly string[] }[] = [{ v: value, path: root ? [root] : [] }];
  const name = (path: readonly string[]) => path.join(".") || "body";
  while (stack.length) {
    const { v, path } = stack.pop()!;
    if (typeof v === "string") {
      if (hasBadText(v)) throw badTextError(name(path));
      continue;
    }
    if (!v || typeof v !== "object") continue;
    if (path.length >= MORE_LIMITS.jsonDepth) throw ApiError.badRequest(`'${name(path)}' is nested deeper than ${MORE_LIMITS.jsonDepth} levels`);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], path: [...path, String(i)] });
      continue;
    }
    for (const [k, item] of Object.entries(v)) {
      if (hasBadText(k)) throw badTextError(name([...path, printable(k)]));
      stack.push({ v: item, path: [...path, k] });
    }
  }
}

/**
 * Query parameters: a NUL (`%00`) in a name or value is a 400 naming the parameter. (Percent-encoded
 * surrogates are not UTF-8, so they decode to U+FFFD and cannot reach a handler.)
 */
export function assertCleanQuery(url: string): void {
  const q = url.indexOf("?");
  if (q < 0 || !url.includes("%00", q)) return;
  for (const [name, value] of new URL(url).searchParams) {
    if (hasBadText(name) || hasBadText(value)) throw badTextError(printable(name));
  }
}
