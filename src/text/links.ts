// Link detection: bare links (linkify-it with the full TLD list) and markdown links.
// Everything is built once (at module load, or the http validator on first use); nothing compiles per call.
import LinkifyIt, { type FullRule, type SchemaRules } from "linkify-it";
import tlds from "tlds";

/** Schemes allowed for links; a bare link without one gets `http://`. */
export const LINK_SCHEMES: ReadonlySet<string> = new Set(["http", "https", "ftp", "gopher"]);

const TLDS: ReadonlySet<string> = new Set(tlds.map((t) => t.toLowerCase()));

// linkify-it's own http validator (`//` + auth + host + port + path, from its compiled sources),
// built once on first use and run with a sticky regex instead of slice + test + match.
let httpTail: RegExp | undefined;
const httpSchema: FullRule = {
  validate(text: string, pos: number, self: LinkifyIt): number {
    const re = (httpTail ??= new RegExp("\\/\\/" + self.re.src_auth + self.re.src_host_port_strict + self.re.src_path, "iy"));
    re.lastIndex = pos;
    return re.test(text) ? re.lastIndex - pos : 0;
  },
};

export const linkify = new LinkifyIt(
  // Our schemes only (no `mailto:`, no protocol-relative `//`).
  {
    "http:": httpSchema,
    "https:": httpSchema,
    "ftp:": httpSchema,
    "gopher:": httpSchema,
    "mailto:": null,
    "//": null,
  } as unknown as SchemaRules,
  // No e-mail or bare-IP detection: only links with our schemes and host names with a known TLD.
  { fuzzyLink: true, fuzzyEmail: false, fuzzyIP: false },
).tlds(tlds);

/** Separators for links: what linkify-it takes as space or control (Z, Cc), plus format characters
 * (bidi controls, zero-width space, word joiner, BOM) that it would take as letters. A link never
 * spans one, so each run between them is matched on its own: linkify-it's cost grows with the text
 * after each link, and a run's start or end is the same boundary for it as a space. */
function isSeparator(c: number): boolean {
  if (c <= 0x20) return true;
  if (c < 0x7f) return false;
  if (c <= 0xa0) return true;
  if (c < 0x1680) return false;
  return (
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200b) ||
    c === 0x200e ||
    c === 0x200f ||
    (c >= 0x2028 && c <= 0x202f) ||
    c === 0x205f ||
    c === 0x2060 ||
    (c >= 0x2066 && c <= 0x2069) ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

// Trailing punctuation that ends a sentence rather than a link.
const TRAILING_PUNCT = /[.,:;!?]+$/;
const SCHEME_PREFIX = /^([A-Za-z][A-Za-z0-9+.-]*):(?!\d)/;
// After the scheme's `//` (or at the start of a link without scheme): optional user info, then the host.
const HOST = /^(?:[^@/?#\s]*@)?(\[[^\]\s/]*\]|[^/?#:\s]+)/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
// Host names: ASCII letters, digits, `.` and `-`, or any non-ASCII (IDN; linkify-it has already
// vetted bare hosts, this mainly keeps ASCII punctuation out of markdown link hosts).
const HOST_CHARS = /^(?:[A-Za-z0-9.-]|[^\x00-\x7f])+$/;
const NON_ASCII = /[^\x00-\x7f]/;
const PUNYCODE_PREFIX = /^xn--/i;

/** A link found in a text, offsets in UTF-16 units of that text. */
export interface FoundLink {
  start: number;
  end: number;
  raw: string;
  url: string;
}

/** True if `host` is a domain ending in a known TLD whose labels are well formed. */
function isKnownTldHost(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  let from = 0;
  let label = "";
  for (;;) {
    const dot = host.indexOf(".", from);
    label = dot < 0 ? host.slice(from) : host.slice(from, dot);
    if (label.length === 0 || label.length > 63) return false;
    if (label.charCodeAt(0) === 45 /* - */ || label.charCodeAt(label.length - 1) === 45) return false;
    if (PUNYCODE_PREFIX.test(label) && NON_ASCII.test(label)) return false; // not valid punycode
    if (dot < 0) break;
    from = dot + 1;
  }
  return from > 0 && TLDS.has(label.toLowerCase()) && HOST_CHARS.test(host);
}

/** Host part of a link (scheme, if any, already removed and `//` skipped), or "" if none. */
function hostOf(afterScheme: string): string {
  const m = HOST.exec(afterScheme);
  return m ? m[1] : "";
}

const BEYOND_LATIN1 = /[^\x00-\xff]/;

/**
 * text.slice(from, to), rebuilt character by character when it is all ASCII: a slice of a text
 * with characters beyond Latin-1 is a two-byte string to V8, and linkify-it's regexes run about
 * twice as slow on those.
 */
function compactAscii(text: string, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to; i++) {
    if (text.charCodeAt(i) > 0x7f) return text.slice(from, to);
    s += text[i];
  }
  return s;
}

/**
 * Bare links in `text`, sorted by position. `text` is the processed text (markdown links already
 * rewritten, `skip` their sorted regions); callers drop links that still overlap those regions.
 */
export function findBareLinks(text: string, skip: ReadonlyArray<{ start: number; occ: number }>): FoundLink[] {
  const out: FoundLink[] = [];
  // Every link we keep has a dot (a known TLD, or an IPv4 address): only runs with one are matched.
  let p = 0;
  let k = 0;
  const twoByte = BEYOND_LATIN1.test(text);
  for (let dot = text.indexOf("."); dot >= 0; dot = text.indexOf(".", p)) {
    // A dot inside a markdown link (anchor or ` [host]`) cannot start a link that would be kept.
    while (k < skip.length && skip[k].occ <= dot) k++;
    if (k < skip.length && skip[k].start <= dot) {
      p = skip[k].occ;
      continue;
    }
    let from = dot;
    while (from > p && !isSeparator(text.charCodeAt(from - 1))) from--;
    // Glued to the end of a markdown link: keep its last character as context for linkify-it.
    if (from > 0 && from === p && !isSeparator(text.charCodeAt(from - 1))) from--;
    let to = dot + 1;
    while (to < text.length && !isSeparator(text.charCodeAt(to))) to++;
    p = to;
    if (to - from < 4) continue;
    const matches = linkify.match(twoByte ? compactAscii(text, from, to) : text.slice(from, to));
    if (matches) for (const m of matches) addLink(text, from + m.index, m.raw, m.schema, out);
  }
  return out;
}

function addLink(text: string, start: number, raw: string, schema: string, out: FoundLink[]): void {
  // Not a link when glued to a tag or mention sign (`#example.com`, `@http://…`).
  if (start > 0) {
    const before = text.charCodeAt(start - 1);
    if (before === 35 /* # */ || before === 64 /* @ */ || before === 0xff03 || before === 0xff20) return;
  }
  const trail = TRAILING_PUNCT.exec(raw);
  if (trail) raw = raw.slice(0, trail.index);
  const end = start + raw.length;
  // `name.example.com@host` is an e-mail address, not a link.
  const after = text.charCodeAt(end);
  if (after === 64 || after === 0xff20) return;
  let url: string;
  if (schema) {
    // Our schemes are all followed by `//` (see httpSchema).
    const host = hostOf(raw.slice(schema.length + 2));
    if (!(IPV4.test(host) || isKnownTldHost(host))) return;
    url = raw;
  } else {
    if (!isKnownTldHost(hostOf(raw))) return;
    url = "http://" + raw;
  }
  out.push({ start, end, raw, url });
}

/** A markdown link target: the href to use and the host to show, or null if not acceptable. */
export function markdownTarget(target: string): { url: string; host: string } | null {
  const scheme = SCHEME_PREFIX.exec(target);
  if (scheme) {
    if (!LINK_SCHEMES.has(scheme[1].toLowerCase())) return null;
    const rest = target.slice(scheme[0].length);
    if (!rest.startsWith("//")) return null;
    const host = hostOf(rest.slice(2));
    if (!host) return null;
    if (!(host.charCodeAt(0) === 91 /* [ IPv6 */ || HOST_CHARS.test(host))) return null;
    return { url: target, host: host.toLowerCase() };
  }
  const host = hostOf(target);
  if (!isKnownTldHost(host)) return null;
  return { url: "http://" + target, host: host.toLowerCase() };
}
