// The layering the architecture doc promises, checked on the source text: only src/db/ knows which
// database a deployment runs on (everything else goes through the SqlDialect of src/db/dialect), and
// no two modules import each other's values in a circle. Files are read through Vite's glob
// imports (see doc-links.test.ts), so the Workers pool needs no file system.
/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";

const sources = Object.entries(import.meta.glob<string>("../../src/**/*.ts", { query: "?raw", import: "default", eager: true })).map(([path, text]) => ({
  path: path.slice("../../".length),
  text,
}));

describe("source layers", () => {
  it("reads the sources", () => {
    expect(sources.length).toBeGreaterThan(100);
  });

  it("asks which database it runs on only inside src/db/", () => {
    const asking = sources
      .filter((f) => !f.path.startsWith("src/db/") && !f.path.endsWith(".d.ts"))
      .filter((f) => /\bisPostgres\b|\bBACKEND\b|\bDB_BACKEND\b[^:]/.test(f.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")))
      .map((f) => f.path);
    expect(asking).toEqual([]);
  });

  it("has no import circle (type-only imports aside)", () => {
    const paths = new Set(sources.map((f) => f.path));
    const resolve = (from: string, spec: string) => {
      const parts = from.split("/").slice(0, -1);
      for (const seg of spec.split("/")) {
        if (seg === "..") parts.pop();
        else if (seg !== ".") parts.push(seg);
      }
      const base = parts.join("/");
      return [`${base}.ts`, `${base}/index.ts`].find((p) => paths.has(p));
    };
    const edges = new Map<string, string[]>();
    for (const f of sources) {
      const deps: string[] = [];
      for (const m of f.text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+"(\.[^"]+)"/gms)) {
        const to = resolve(f.path, m[1]);
        if (to) deps.push(to);
      }
      edges.set(f.path, deps);
    }
    // Depth-first search for a back edge: the first circle found, as a path.
    const state = new Map<string, "open" | "done">();
    const circles: string[][] = [];
    const visit = (node: string, trail: string[]) => {
      state.set(node, "open");
      for (const next of edges.get(node) ?? []) {
        if (state.get(next) === "open") circles.push([...trail.slice(trail.indexOf(next)), next]);
        else if (!state.has(next)) visit(next, [...trail, next]);
      }
      state.set(node, "done");
    };
    for (const node of edges.keys()) if (!state.has(node)) visit(node, [node]);
    expect(circles).toEqual([]);
  });
});
