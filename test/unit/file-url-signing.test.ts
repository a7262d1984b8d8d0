import { describe, expect, it } from "vitest";
import { encodeToken, importSigningKey, parseToken, periodExpiry, signGrant, verifyGrant } from "../../src/services/file-url-signing";

describe("file URL tokens", () => {
  it("round-trip a file's and a derived file's grant", () => {
    const sig = "A".repeat(22);
    for (const key of [null, "core_image_200s", "preview.mp3", "a.b.c"]) {
      const grant = { fileId: 123456789, key, expiresAt: 1_963_072_000 };
      expect(parseToken(encodeToken(grant, sig))).toEqual({ ...grant, signature: sig });
    }
    expect(encodeToken({ fileId: 35, key: null, expiresAt: 36 }, sig)).toBe(`z.10.${sig}`);
  });

  it("parse nothing that is not one in shape", () => {
    const sig = "A".repeat(22);
    for (const t of [
      "",
      "not-a-token",
      "1.2",
      `1.2.${sig.slice(1)}`,
      `1.2.${sig}x`,
      `X.2.${sig}`,
      `1.2.${sig}.`,
      `1.2.${sig}.bad key`,
      `1..${sig}`,
      `1.2.${"A".repeat(21)}=`,
    ]) {
      expect(parseToken(t), t).toBeNull();
    }
  });
});

describe("periodExpiry", () => {
  const L = 1000;
  it("ends the period the time falls in, counted from the anchor", () => {
    expect(periodExpiry(5000, 5000, 0, L)).toBe(6000);
    expect(periodExpiry(5000, 5999, 0, L)).toBe(6000);
    expect(periodExpiry(5000, 6000, 0, L)).toBe(7000); // expired at 6000: the next period's
    expect(periodExpiry(5000, 9500, 0, L)).toBe(10000);
    expect(periodExpiry(5000, 100, 0, L)).toBe(6000); // a clock before the anchor
  });
  it("skips to the next period when less than minRemaining is left", () => {
    expect(periodExpiry(5000, 5939, 60, L)).toBe(6000);
    expect(periodExpiry(5000, 5940, 60, L)).toBe(7000);
  });
});

describe("signGrant / verifyGrant", () => {
  it("verifies only the grant, key and content it signed", async () => {
    const key = await importSigningKey("k".repeat(43));
    const grant = { fileId: 7, key: null, expiresAt: 2_000_000_000 };
    const sig = await signGrant(key, grant, "u/1/abc");
    expect(sig).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const token = parseToken(encodeToken(grant, sig))!;
    expect(await verifyGrant(key, token, "u/1/abc")).toBe(true);
    expect(await verifyGrant(key, token, "u/1/replaced")).toBe(false);
    expect(await verifyGrant(await importSigningKey("another secret"), token, "u/1/abc")).toBe(false);
    expect(await verifyGrant(key, { ...token, expiresAt: token.expiresAt + 1 }, "u/1/abc")).toBe(false);
    expect(await verifyGrant(key, { ...token, fileId: 8 }, "u/1/abc")).toBe(false);
    expect(await verifyGrant(key, { ...token, key: "thumb" }, "u/1/abc")).toBe(false);
  });
});
