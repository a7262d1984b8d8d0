// RSS 2.0 documents of the feed endpoints (routes/feeds/rss.ts). Every text goes through `xml()`:
// markup in a post's HTML is escaped character data (what RSS readers expect in <description>),
// never raw XML, and characters XML 1.0 forbids are dropped.

/** Where an item links: the request's `uri_template`, or the default for the item's kind. */
export interface LinkParts {
  post_id?: string;
  channel_id?: string;
  message_id?: string;
  username?: string;
  user_id?: string;
}

export interface RssItem {
  title: string;
  link: string;
  /** Stable and unique per object (not a link: a template need not name the object). */
  guid: string;
  /** Unix seconds. */
  pubDate: number;
  /** HTML, escaped into the element. */
  description: string;
  creator?: string;
}

export interface RssChannel {
  title: string;
  /** The same list as the JSON API serves it. */
  link: string;
  description: string;
  /** The feed's own URL (atom:link rel="self"). */
  self: string;
}

export const RSS_CONTENT_TYPE = "application/rss+xml; charset=utf-8";

/** Escapes text for XML character data and attribute values; drops characters XML 1.0 forbids. */
export function xml(s: string): string {
  return s
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/** RFC 822 date (RSS 2.0's pubDate), e.g. `Fri, 20 Nov 2026 18:14:12 GMT`. */
export const rfc822 = (seconds: number) => new Date(seconds * 1000).toUTCString();

/** Fills a link template's `{post_id}`, `{channel_id}`, `{message_id}`, `{username}`, `{user_id}` (URL-encoded). */
export function fillTemplate(template: string, parts: LinkParts): string {
  return template.replace(/\{(post_id|channel_id|message_id|username|user_id)\}/g, (_, name: keyof LinkParts) => encodeURIComponent(parts[name] ?? ""));
}

/** A one-line title from an item's text: its first line, at most `max` characters. */
export function titleOf(prefix: string, text: string, max = 80): string {
  const line = text.split("\n", 1)[0].trim();
  const short = [...line].length > max ? [...line].slice(0, max - 1).join("") + "…" : line;
  return short ? `${prefix}: ${short}` : prefix;
}

/** The RSS 2.0 document of a feed. */
export function renderRss(ch: RssChannel, items: RssItem[], now: number): string {
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">',
    "<channel>",
    `<title>${xml(ch.title)}</title>`,
    `<link>${xml(ch.link)}</link>`,
    `<description>${xml(ch.description)}</description>`,
    `<atom:link href="${xml(ch.self)}" rel="self" type="application/rss+xml"/>`,
    `<lastBuildDate>${rfc822(items.length ? Math.max(...items.map((i) => i.pubDate)) : now)}</lastBuildDate>`,
    "<docs>https://www.rssboard.org/rss-specification</docs>",
  ];
  for (const i of items) {
    out.push(
      "<item>",
      `<title>${xml(i.title)}</title>`,
      `<link>${xml(i.link)}</link>`,
      `<guid isPermaLink="false">${xml(i.guid)}</guid>`,
      `<pubDate>${rfc822(i.pubDate)}</pubDate>`,
      ...(i.creator ? [`<dc:creator>${xml(i.creator)}</dc:creator>`] : []),
      `<description>${xml(i.description)}</description>`,
      "</item>",
    );
  }
  out.push("</channel>", "</rss>");
  return out.join("\n");
}
