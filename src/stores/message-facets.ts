import { normalizeTag, type TextResult } from "../text";

// Search facets of messages and posts (one row per value) and what raw attaches.

export type Facet = "mention" | "leading_mention" | "tag" | "url" | "url_domain" | "raw_type";

/** Domain form used for `url_domain` facets and filters: lowercase host without scheme, port or `www.`. */
export function normalizeDomain(input: string): string {
  let h = input
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, "");
  h = h
    .split(/[/?#]/)[0]
    .replace(/^[^@]*@/, "")
    .replace(/:\d*$/, "")
    .replace(/\.$/, "");
  return h.replace(/^www\./, "");
}

/**
 * Search facets of a message (one row per value): mentioned usernames (lowercase; leading ones
 * also as `leading_mention`), tags in matching form, link URLs and their domains, raw types.
 */
export function messageFacets(text: TextResult, raw: unknown): [Facet, string][] {
  const out = new Map<string, [Facet, string]>();
  const add = (f: Facet, v: string) => {
    if (v) out.set(f + "\u0000" + v, [f, v]);
  };
  for (const m of text.entities.mentions) {
    if (!m.id) continue;
    add("mention", m.text.toLowerCase());
    if (m.is_leading) add("leading_mention", m.text.toLowerCase());
  }
  for (const t of text.entities.tags) add("tag", normalizeTag(t.text));
  for (const l of text.entities.links) {
    add("url", l.url);
    try {
      add("url_domain", normalizeDomain(new URL(l.url).hostname));
    } catch {
      add("url_domain", normalizeDomain(l.url));
    }
  }
  if (raw && typeof raw === "object") for (const type of Object.keys(raw)) add("raw_type", type);
  return [...out.values()];
}

/** Raw types whose item attaches a poll: the reference's notice type, and the name our clients used before it. */
const POLL_TYPES = new Set(["io.example.core.poll-notice", "io.example.core.poll"]);
const FILE_KEY = "+io.example.core.file";
const POLL_KEY = "+io.example.core.poll";
const idOf = (v: unknown) => ((typeof v === "number" || typeof v === "string") && /^\d{1,18}$/.test(String(v)) ? Number(v) : null);

/**
 * What raw attaches: the poll of an `io.example.core.poll-notice` (or `io.example.core.poll`) item (`poll_id`, or its
 * `+io.example.core.poll` replacement value) and files named by `file_id` of any item or of a
 * `+io.example.core.file` replacement value.
 */
export function rawAttachments(raw: unknown): { pollId: number | null; fileIds: number[] } {
  let pollId: number | null = null;
  const files = new Set<number>();
  if (!raw || typeof raw !== "object") return { pollId, fileIds: [] };
  for (const [type, items] of Object.entries(raw as Record<string, unknown>)) {
    if (!Array.isArray(items)) continue;
    for (const item of items as Record<string, unknown>[]) {
      if (!item || typeof item !== "object") continue;
      const fileRef = item[FILE_KEY] as Record<string, unknown> | undefined;
      for (const id of [idOf(item.file_id), idOf(fileRef?.file_id)]) if (id != null) files.add(id);
      if (POLL_TYPES.has(type) && pollId == null) {
        pollId = idOf(item.poll_id) ?? idOf((item[POLL_KEY] as Record<string, unknown> | undefined)?.poll_id);
      }
    }
  }
  return { pollId, fileIds: [...files].slice(0, 100) };
}
