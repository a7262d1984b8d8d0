// Text processing (decisions §5): markdown links, bare links, mentions and tags; positions and
// lengths in Unicode code points; html with schema attributes. Pure logic, no I/O.
//
// Work is done on UTF-16 offsets of the processed text and converted to code points once at the
// end. Every regex is compiled at module load; sticky (`y`) ones are positioned with lastIndex.
import { LIMITS } from "../config";
import { findBareLinks, markdownTarget } from "./links";

export interface LinkEntity {
  pos: number;
  len: number;
  text: string;
  url: string;
  title?: string;
  amended_len?: number;
}
export interface MentionEntity {
  pos: number;
  len: number;
  text: string;
  id: string;
  is_leading?: true;
  is_copy?: true;
}
export interface TagEntity {
  pos: number;
  len: number;
  text: string;
}
export interface Entities {
  links: LinkEntity[];
  mentions: MentionEntity[];
  tags: TagEntity[];
}
export interface TextResult {
  text: string;
  html: string;
  entities: Entities;
  length: number /* code points counted toward the limit */;
}
export interface TextOptions {
  parseLinks?: boolean; // default true  (client flag entities.parse_links=0 turns off bare links)
  parseMarkdownLinks?: boolean; // default true  (entities.parse_markdown_links=0)
  schemaBase: string; // e.g. "https://schema.example.io"
  itemType: "Post" | "Message" | "User" | "Client" | "Poll"; // the itemtype suffix in the html wrapper
  users: ReadonlyMap<string, { id: string; username: string }>; // keyed by lowercase username: only these become mentions
}

export const POST_MAX_LENGTH = LIMITS.post.max_length;
export const MESSAGE_MAX_LENGTH = LIMITS.message.max_length;

// ---------------------------------------------------------------------------------------------
// Character rules

/** `@name`: 1–20 of a-z 0-9 _ (matched case-insensitively), not running on into more name
 * characters, Latin letters or marks (`@aliceìnheiro`), an `@` (`@a@b.com`) or `://` (`@http://`). */
const MENTION_AT = /@([A-Za-z0-9_]{1,20})(?![A-Za-z0-9_])(?![@\uFF20\p{Script=Latin}\p{M}]|:\/\/)/uy;
/** What may not come right before a mention's `@`: Latin letters and digits (e-mail-like), `_`, and
 * `! # $ % & * @`. Other scripts are allowed, since CJK text has no spaces (`の@name`). */
const MENTION_BAD_BEFORE = /[0-9_!#$%&*@\uFF20\p{Script=Latin}]/uy;

/** Tag characters: letters of any script with their marks, decimal digits, `_`, emoji (with
 * modifiers, variation selectors, ZWJ/ZWNJ, flags, tag sequences) and the few word-internal marks
 * that some scripts use inside words (Catalan middle dot, Hebrew maqaf/geresh/gershayim, Tibetan
 * tsheg, Japanese ditto/iteration marks, wave dashes, katakana middle dot and sound marks). */
const TAG_CHAR =
  "\\p{L}\\p{M}\\p{Nd}_\\u200C\\u200D\\uFE0E\\uFE0F\\p{Extended_Pictographic}\\p{Emoji_Modifier}" +
  "\\p{Regional_Indicator}\\u{E0020}-\\u{E007F}\\u00B7\\u05BE\\u05F3\\u05F4\\u0F0B\\u0F0C\\u3003\\u301C" +
  "\\u309B\\u309C\\u30A0\\u30FB\\uFF5E\\uA67E";
const TAG_AT = new RegExp(`#[${TAG_CHAR}]+`, "uy");
/** A tag needs a letter or an emoji: all-digit (and digits-and-`_`) tags are not tags. */
const TAG_HAS_LETTER = /[\p{L}\p{Extended_Pictographic}\p{Regional_Indicator}]/u;
/** What may not come right before a tag's `#`: a letter, mark, digit, `_` or `&` (but an emoji's
 * variation selector may). */
const TAG_BAD_BEFORE = /(?![\uFE0E\uFE0F])[\p{L}\p{M}\p{Nd}_&]/uy;

/** Characters before the first word: anything but letters, digits and `@`. */
const NON_WORD_RUN = /[^\p{L}\p{N}@]*/uy;
const SPACE_RUN = /\s*/y;
const AT_OR_HASH = /[@#]/g;

const MARKDOWN_LINK = /\[([^[\]\n]+)\]\(\s*((?:[^\s()<>"]|\([^\s()<>"]*\))+)(?:\s+"([^"\n]*)")?\s*\)/g;
const NOT_BLANK = /\S/;
const TAG_NORMALIZE = /_/g;

const ESCAPE_TEST = /[&<>"'\r\n]/;
const ESCAPE_ALL = /[&<>"'\n]|\r\n?/g;
const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "\n": "<br>",
  "\r": "<br>",
  "\r\n": "<br>",
};
const escapeChar = (c: string): string => ESCAPES[c];
const ATTR_TEST = /[&<>"']/;
const ATTR_ALL = /[&<>"']/g;

/** Text for html: `& < > " '` escaped, newlines (`\n`, `\r\n`, `\r`) as `<br>`. */
export function escapeHtml(s: string): string {
  return ESCAPE_TEST.test(s) ? s.replace(ESCAPE_ALL, escapeChar) : s;
}

/** Attribute value for html: `& < > " '` escaped. */
export function escapeAttr(s: string): string {
  return ATTR_TEST.test(s) ? s.replace(ATTR_ALL, escapeChar) : s;
}

/** Tag matching form: lowercase, '_' removed. */
export function normalizeTag(tag: string): string {
  return tag.toLowerCase().replace(TAG_NORMALIZE, "");
}

/** Code-point length of a string. */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Offset of the code point that ends right before UTF-16 offset `i` (i > 0). */
function prevCodePointAt(s: string, i: number): number {
  if (i >= 2) {
    const c = s.charCodeAt(i - 1);
    if (c >= 0xdc00 && c <= 0xdfff) {
      const h = s.charCodeAt(i - 2);
      if (h >= 0xd800 && h <= 0xdbff) return i - 2;
    }
  }
  return i - 1;
}

/** End offset of a mention starting at `i` (`s[i] === "@"`), or -1; the name is s[i+1, end). */
function mentionEndAt(s: string, i: number): number {
  if (i > 0) {
    MENTION_BAD_BEFORE.lastIndex = prevCodePointAt(s, i);
    if (MENTION_BAD_BEFORE.test(s)) return -1;
  }
  MENTION_AT.lastIndex = i;
  return MENTION_AT.test(s) ? MENTION_AT.lastIndex : -1;
}

/** End offset of a tag starting at `i` (`s[i] === "#"`), or -1; the tag is s[i+1, end). */
function tagEndAt(s: string, i: number): number {
  if (i > 0) {
    TAG_BAD_BEFORE.lastIndex = prevCodePointAt(s, i);
    if (TAG_BAD_BEFORE.test(s)) return -1;
  }
  TAG_AT.lastIndex = i;
  if (!TAG_AT.test(s)) return -1;
  const end = TAG_AT.lastIndex;
  // Not a tag when glued to another `#` or to `://` (`#http://…`).
  const next = s.charCodeAt(end);
  if (next === 35 /* # */ || (next === 58 /* : */ && s.startsWith("//", end + 1))) return -1;
  return end;
}

/**
 * Lowercased usernames that look like @mentions in the text, so the caller can look them up in ONE
 * query before processText; at most `max` (the scan stops there, so a caller that asks for one
 * more than its limit learns the text is over it without reading the rest). Linear in the text.
 */
export function mentionCandidates(text: string, max = Infinity): string[] {
  const names = new Set<string>();
  let i = text.indexOf("@");
  while (i >= 0 && names.size < max) {
    const end = mentionEndAt(text, i);
    if (end > 0) {
      names.add(text.slice(i + 1, end).toLowerCase());
      i = text.indexOf("@", end);
    } else {
      i = text.indexOf("@", i + 1);
    }
  }
  return [...names];
}

/** End of the leading part of `s`: punctuation, spaces, symbols and @mentions before the first word. */
function leadingEnd(s: string): number {
  let p = 0;
  for (;;) {
    NON_WORD_RUN.lastIndex = p;
    NON_WORD_RUN.test(s);
    p = NON_WORD_RUN.lastIndex;
    if (s.charCodeAt(p) !== 64 /* @ */) return p;
    const end = mentionEndAt(s, p);
    p = end > 0 ? end : p + 1;
  }
}

// ---------------------------------------------------------------------------------------------

const KIND_LINK = 0;
const KIND_MENTION = 1;
const KIND_TAG = 2;
type Kind = typeof KIND_LINK | typeof KIND_MENTION | typeof KIND_TAG;

/** An entity in UTF-16 offsets of the processed text. `occ` is the end of the region it owns
 * (a markdown link owns its ` [host]` suffix too). One class, so every span has the same shape. */
class Span {
  constructor(
    readonly kind: Kind,
    readonly start: number,
    readonly end: number,
    readonly occ: number,
    /** Link text, the user's username, or the tag. */
    readonly text: string,
    /** Link url, or the user's id. */
    readonly ref: string,
    readonly title: string | undefined = undefined,
    readonly markdown = false,
    readonly leading = false,
    readonly copy = false,
  ) {}
}

/** Rewrites markdown links; returns the new text and its link spans (sorted). */
function rewriteMarkdown(text: string, spans: Span[]): string {
  if (!text.includes("](")) return text;
  let out = "";
  let last = 0;
  MARKDOWN_LINK.lastIndex = 0;
  for (let m = MARKDOWN_LINK.exec(text); m; m = MARKDOWN_LINK.exec(text)) {
    const anchor = m[1];
    if (!NOT_BLANK.test(anchor)) continue;
    const target = markdownTarget(m[2]);
    if (!target) continue;
    out += text.slice(last, m.index);
    last = m.index + m[0].length;
    const start = out.length;
    out += anchor;
    const end = out.length;
    if (anchor.trim().toLowerCase() !== target.host) out += " [" + target.host + "]";
    spans.push(new Span(KIND_LINK, start, end, out.length, anchor, target.url, m[3], true));
  }
  return last === 0 ? text : out + text.slice(last);
}

/** Adds bare links that do not overlap the markdown links in `spans` (both sorted). */
function mergeBareLinks(text: string, spans: Span[]): Span[] {
  const found = findBareLinks(text, spans);
  if (found.length === 0) return spans;
  const merged: Span[] = [];
  let k = 0;
  for (const f of found) {
    while (k < spans.length && spans[k].occ <= f.start) merged.push(spans[k++]);
    if (k < spans.length && spans[k].start < f.end) continue; // overlaps a markdown link
    merged.push(new Span(KIND_LINK, f.start, f.end, f.end, f.raw, f.url));
  }
  while (k < spans.length) merged.push(spans[k++]);
  return merged;
}

/** Mentions and tags outside the link spans. */
function findMentionsAndTags(text: string, links: Span[], users: TextOptions["users"]): Span[] {
  const found: Span[] = [];
  if (!text.includes("@") && !text.includes("#")) return found;
  let lead = -1; // computed on the first mention
  let lastCopyEnd = -1;
  let k = 0;
  AT_OR_HASH.lastIndex = 0;
  for (let m = AT_OR_HASH.exec(text); m; m = AT_OR_HASH.exec(text)) {
    const i = m.index;
    while (k < links.length && links[k].occ <= i) k++;
    const nextLink = k < links.length ? links[k].start : text.length;
    if (i >= nextLink) {
      AT_OR_HASH.lastIndex = links[k].occ; // inside a link
      continue;
    }
    if (text.charCodeAt(i) === 64 /* @ */) {
      const end = mentionEndAt(text, i);
      if (end < 0 || end > nextLink) continue;
      AT_OR_HASH.lastIndex = end;
      const user = users.get(text.slice(i + 1, end).toLowerCase());
      if (!user) continue;
      if (lead < 0) lead = leadingEnd(text);
      let copy = false;
      if (i > 0 && text.charCodeAt(i - 1) === 47 /* / */) copy = true;
      else if (lastCopyEnd >= 0) {
        SPACE_RUN.lastIndex = lastCopyEnd;
        SPACE_RUN.test(text);
        copy = SPACE_RUN.lastIndex === i;
      }
      lastCopyEnd = copy ? end : -1;
      found.push(new Span(KIND_MENTION, i, end, end, user.username, user.id, undefined, false, i < lead, copy));
    } else {
      const end = tagEndAt(text, i);
      if (end < 0 || end > nextLink) continue;
      const tag = text.slice(i + 1, end);
      if (!TAG_HAS_LETTER.test(tag)) continue;
      AT_OR_HASH.lastIndex = end;
      found.push(new Span(KIND_TAG, i, end, end, tag, ""));
    }
  }
  return found;
}

/** Entities, html and counted length of a post's or message's text (decisions §5). The caller
 * compares `length` with POST_MAX_LENGTH / MESSAGE_MAX_LENGTH. */
export function processText(text: string, opts: TextOptions): TextResult {
  let spans: Span[] = [];
  const out = opts.parseMarkdownLinks === false ? text : rewriteMarkdown(text, spans);
  if (opts.parseLinks !== false) spans = mergeBareLinks(out, spans);
  const words = findMentionsAndTags(out, spans, opts.users);
  if (words.length > 0) {
    // Merge the two sorted, non-overlapping lists.
    const all: Span[] = [];
    let a = 0;
    let b = 0;
    while (a < spans.length || b < words.length) {
      if (b >= words.length || (a < spans.length && spans[a].start < words[b].start)) all.push(spans[a++]);
      else all.push(words[b++]);
    }
    spans = all;
  }

  const links: LinkEntity[] = [];
  const mentions: MentionEntity[] = [];
  const tags: TagEntity[] = [];
  let html = `<span itemscope itemtype="${escapeAttr(opts.schemaBase)}/${opts.itemType}">`;
  let suffixes = 0; // code points of the ` [host]` suffixes, not counted toward the length

  // UTF-16 offset → code point offset, walking forward only.
  const astral = hasSurrogates(out);
  let u = 0;
  let cp = 0;
  const toCp = (to: number): number => {
    if (!astral) return to;
    while (u < to) {
      const c = out.charCodeAt(u);
      if (!(c >= 0xdc00 && c <= 0xdfff && u > 0 && (out.charCodeAt(u - 1) & 0xfc00) === 0xd800)) cp++;
      u++;
    }
    return cp;
  };

  let last = 0;
  for (const s of spans) {
    if (s.start > last) html += escapeHtml(out.slice(last, s.start));
    const pos = toCp(s.start);
    const len = toCp(s.end) - pos;
    if (s.kind === KIND_LINK) {
      const e: LinkEntity = { pos, len, text: s.text, url: s.ref };
      html += `<a href="${escapeAttr(s.ref)}"`;
      if (s.title !== undefined) {
        e.title = s.title;
        html += ` title="${escapeAttr(s.title)}"`;
      }
      html += `>${escapeHtml(s.text)}</a>`;
      if (s.markdown) {
        const amended = toCp(s.occ) - pos;
        e.amended_len = amended;
        suffixes += amended - len;
        if (s.occ > s.end) html += escapeHtml(out.slice(s.end, s.occ));
      }
      links.push(e);
    } else if (s.kind === KIND_MENTION) {
      const e: MentionEntity = { pos, len, text: s.text, id: s.ref };
      if (s.leading) e.is_leading = true;
      if (s.copy) e.is_copy = true;
      mentions.push(e);
      const name = escapeAttr(s.text);
      html += `<span data-mention-id="${escapeAttr(s.ref)}" data-mention-name="${name}" itemprop="mention">@${name}</span>`;
    } else {
      tags.push({ pos, len, text: s.text });
      const tag = escapeAttr(s.text);
      html += `<span data-tag-name="${tag}" itemprop="tag">#${tag}</span>`;
    }
    last = s.occ;
  }
  if (last < out.length) html += escapeHtml(last === 0 ? out : out.slice(last));
  html += "</span>";

  return { text: out, html, entities: { links, mentions, tags }, length: toCp(out.length) - suffixes };
}

const SURROGATE = /[\uD800-\uDFFF]/;
function hasSurrogates(s: string): boolean {
  return SURROGATE.test(s);
}

const OBJECT_ID = "{object_id}";
const HREF = /<a href="([^"]*)"/g;

/** Replace `{object_id}` inside link URLs (entities and html) with the new object's id, on create. */
export function withObjectId(result: TextResult, id: string): TextResult {
  if (!result.entities.links.some((l) => l.url.includes(OBJECT_ID))) return result;
  const value = encodeURIComponent(id);
  const links = result.entities.links.map((l) => (l.url.includes(OBJECT_ID) ? { ...l, url: l.url.replaceAll(OBJECT_ID, value) } : l));
  const attrValue = escapeAttr(value);
  const html = result.html.replace(HREF, (tag: string, href: string) =>
    href.includes(OBJECT_ID) ? `<a href="${href.replaceAll(OBJECT_ID, attrValue)}"` : tag,
  );
  return { ...result, html, entities: { ...result.entities, links } };
}
