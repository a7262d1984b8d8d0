import { describe, expect, it } from "vitest";
import { assertCleanInput, hasBadText } from "../../src/http/clean-text";
import { mentionCandidates } from "../../src/text";

describe("hasBadText", () => {
  it("finds a NUL and unpaired surrogates, not surrogate pairs", () => {
    expect(hasBadText("plain")).toBe(false);
    expect(hasBadText("emoji 😀 and 𝄞")).toBe(false);
    for (const bad of ["a\u0000", "\ud800", "x\udc00y", "😀\ud83d", "\udc00😀"]) expect(hasBadText(bad), JSON.stringify(bad)).toBe(true);
  });
});

describe("assertCleanInput", () => {
  it("names the field by path, keys included, and bounds the depth without recursion", () => {
    expect(() => assertCleanInput({ a: [{ b: "ok" }, { c: "x\u0000" }] })).toThrow("'a.1.c' contains a NUL character or an unpaired surrogate");
    expect(() => assertCleanInput({ ["k\ud800"]: 1 })).toThrow("'k?' contains");
    let deep: unknown = "x";
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(() => assertCleanInput(deep)).toThrow(/nested deeper than 32 levels/);
    expect(() => assertCleanInput({ fine: ["😀", 1, null, true] })).not.toThrow();
  });
});

describe("mentionCandidates", () => {
  it("is linear and stops at the asked maximum", () => {
    const text = Array.from({ length: 100_000 }, (_, i) => `@u${i}`).join(" ");
    const started = performance.now();
    expect(mentionCandidates(text)).toHaveLength(100_000);
    expect(mentionCandidates(text, 101)).toHaveLength(101);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(mentionCandidates("@a @A @b", 10)).toEqual(["a", "b"]);
  });
});
