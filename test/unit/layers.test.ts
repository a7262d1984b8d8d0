// The layering the architecture doc promises, checked on the source text: only src/db/ knows which
// database a deployment runs on (everything else goes through the SqlDialect of src/db/dialect), and
// no file under src/ is over the size the project keeps files to. Files are read through Vite's glob
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
});
