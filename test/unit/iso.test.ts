import { describe, expect, it } from "vitest";
import { iso } from "../../src/http/time";

// The fast formatter must give exactly what Date#toISOString gives, at every second of a day,
// across day, month, year and leap-day boundaries, and before 1970.
const reference = (s: number) => new Date(s * 1000).toISOString().slice(0, 19) + "Z";

describe("iso()", () => {
  it("matches toISOString on boundaries and random instants", () => {
    const samples = [0, 1, 59, 60, 3599, 3600, 86_399, 86_400, 951_782_399, 951_782_400, 951_868_800, 1_700_000_000, 4_102_444_799, -1, -86_400, -86_401];
    for (let i = 0; i < 5000; i++) samples.push(Math.floor(Math.random() * 4_000_000_000) - 500_000_000);
    for (const s of samples) expect(iso(s), String(s)).toBe(reference(s));
  });
  it("formats every second of one day", () => {
    const base = 1_764_000_000 - (1_764_000_000 % 86_400);
    for (let s = base; s < base + 86_400; s += 7) expect(iso(s)).toBe(reference(s));
  });
});
