// The documentation's references resolve inside the repository: every relative link (and #anchor) in
// README.md and docs/**/*.md names a file (and heading) that exists, every `docs/….md` a source file
// names exists, and every section a comment cites as "decisions §N" is a section of docs/decisions.md.
// Files are read through Vite's glob imports, which run in Node when the test is built, so the
// Workers pool needs no file system.
/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";

const ROOT = "../../";
const strip = (files: Record<string, string>) => Object.fromEntries(Object.entries(files).map(([k, v]) => [k.slice(ROOT.length), v]));

const sources = strip(import.meta.glob<string>("../../src/**/*.ts", { query: "?raw", import: "default", eager: true }));
const docs = strip(import.meta.glob<string>(["../../README.md", "../../docs/**/*.md"], { query: "?raw", import: "default", eager: true }));
// Every file of the repository, by path (not loaded: a link only needs its target to exist).
const allFiles = new Set(
  Object.keys(import.meta.glob(["../../**/*", "!../../node_modules/**", "!../../.wrangler/**", "!../../bench/results/**"])).map((k) => k.slice(ROOT.length)),
);

/** Markdown without fenced code blocks and inline code spans, where link syntax is only an example. */
function prose(md: string): string {
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/(`+)[^`]*?\1/g, "");
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors a markdown file offers: its headings (duplicates numbered as GitHub does) and `<a id>`s. */
function anchorsOf(md: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, text] of prose(md).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(text);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  for (const [, id] of md.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

/** `a/b/../c.md` → `a/c.md`; null when it climbs out of the repository. */
function normalize(path: string): string | null {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (!out.length) return null;
      out.pop();
    } else out.push(part);
  }
  return out.join("/");
}

const dirOf = (file: string) => file.split("/").slice(0, -1).join("/");

/** Every relative link of a markdown file that does not resolve, as `target: why`. */
function brokenLinks(file: string, md: string): string[] {
  const broken: string[] = [];
  for (const [, raw] of prose(md).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) continue; // http:, https:, mailto:
    const [pathPart, anchor] = raw.split("#", 2) as [string, string | undefined];
    const target = pathPart === "" ? file : normalize(`${dirOf(file)}/${decodeURIComponent(pathPart)}`);
    if (target === null) {
      broken.push(`${raw}: outside the repository`);
      continue;
    }
    const isDir = [...allFiles].some((f) => f.startsWith(`${target}/`));
    if (!allFiles.has(target) && !isDir) {
      broken.push(`${raw}: no file ${target}`);
      continue;
    }
    if (anchor === undefined) continue;
    const text = docs[target];
    if (text === undefined) broken.push(`${raw}: an anchor into a file that is not markdown`);
    else if (!anchorsOf(text).has(anchor)) broken.push(`${raw}: no heading #${anchor} in ${target}`);
  }
  return broken;
}

/** The section numbers of docs/decisions.md ("## 8. Streams" → "8"). */
const decisionSections = new Set([...(docs["docs/decisions.md"] ?? "").matchAll(/^## (\d+(?:\.\d+)*)\. /gm)].map((m) => m[1]));

/**
 * Every "§N" in a source file, with what it cites. A citation is `<source> §N`, or a list
 * `<source> §N, §M`; the source is an RFC (`RFC 6749 §2.3.1`, outside the repository by nature)
 * or `decisions` / `docs/decisions.md`. A "§" that is not part of such a citation is reported
 * with source null.
 */
function citations(text: string): { source: string | null; section: string }[] {
  const found: { source: string | null; section: string }[] = [];
  const covered = new Set<number>();
  const citation = /(RFC \d+|docs\/decisions\.md|decisions)\s+((?:§\d+(?:\.\d+)*(?:,\s*)?)+)/g;
  for (const m of text.matchAll(citation)) {
    const start = m.index! + m[0].length - m[2].length;
    for (const s of m[2].matchAll(/§(\d+(?:\.\d+)*)/g)) {
      covered.add(start + s.index!);
      found.push({ source: m[1].startsWith("RFC") ? m[1] : "decisions", section: s[1] });
    }
  }
  for (const s of text.matchAll(/§\s*(\S*)/g)) if (!covered.has(s.index!)) found.push({ source: null, section: s[1] });
  return found;
}

describe("documentation references", () => {
  it("reads the repository's files", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(100);
    expect(docs["README.md"]).toBeDefined();
    expect(decisionSections.size).toBeGreaterThanOrEqual(11);
    expect(allFiles.has("package.json")).toBe(true);
  });

  it("every relative link in README.md and docs/ resolves, anchors included", () => {
    const broken = Object.entries(docs).flatMap(([file, md]) => brokenLinks(file, md).map((b) => `${file}: ${b}`));
    expect(broken).toEqual([]);
  });

  it("every 'decisions §N' under src/ is a section of docs/decisions.md, and every § is such a citation or an RFC's", () => {
    const bad = Object.entries(sources).flatMap(([file, text]) =>
      citations(text)
        .filter((c) => c.source === null || (c.source === "decisions" && !decisionSections.has(c.section)))
        .map((c) => `${file}: ${c.source ?? "uncited"} §${c.section}`),
    );
    expect(bad).toEqual([]);
  });

  it("every docs/….md path named under src/ exists", () => {
    const missing = Object.entries(sources).flatMap(([file, text]) =>
      [...text.matchAll(/\bdocs\/[\w./-]*?\.md\b/g)]
        .map((m) => m[0])
        .filter((p) => !(p in docs))
        .map((p) => `${file}: ${p}`),
    );
    expect(missing).toEqual([]);
  });

  it("checks what it says it checks", () => {
    expect(slug("Which plan (CPU per request)")).toBe("which-plan-cpu-per-request");
    expect(slug("8. Streams")).toBe("8-streams");
    expect(citations("see decisions §2, §6 and RFC 6749 §4.1.1, §4.2.1; decisions §99; api.md §3")).toEqual([
      { source: "decisions", section: "2" },
      { source: "decisions", section: "6" },
      { source: "RFC 6749", section: "4.1.1" },
      { source: "RFC 6749", section: "4.2.1" },
      { source: "decisions", section: "99" },
      { source: null, section: "3" },
    ]);
    expect(brokenLinks("docs/x.md", "[a](missing.md) [b](architecture.md#nowhere) `[c](ignored.md)` [d](../README.md#documentation)")).toEqual([
      "missing.md: no file docs/missing.md",
      "architecture.md#nowhere: no heading #nowhere in docs/architecture.md",
    ]);
  });
});
