import { describe, expect, it } from "vitest";
import { basicClientCredentials, OAuthError } from "../../src/auth/oauth";

// What oauth4webapi and RFC 6749 §2.3.1 send: each part form-urlencoded, then base64 of the UTF-8 bytes.
const encode = (id: string, secret: string) => {
  const form = (s: string) => new URLSearchParams({ x: s }).toString().slice(2);
  const bytes = new TextEncoder().encode(`${form(id)}:${form(secret)}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
};

describe("basicClientCredentials", () => {
  it("decodes form-urlencoded parts, colons, pluses and non-ASCII included", () => {
    expect(basicClientCredentials(encode("a:b", "c d+é%"))).toEqual({ clientId: "a:b", secret: "c d+é%" });
    expect(basicClientCredentials("basic " + btoa("id:"))).toEqual({ clientId: "id", secret: "" });
  });

  it("ignores other schemes and refuses malformed credentials as invalid_client", () => {
    expect(basicClientCredentials(undefined)).toBeUndefined();
    expect(basicClientCredentials("Bearer abc")).toBeUndefined();
    for (const bad of ["Basic !!!", `Basic ${btoa("no-colon")}`, `Basic ${btoa("%zz:x")}`]) {
      const err = (() => {
        try {
          basicClientCredentials(bad);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(OAuthError);
      expect((err as OAuthError).error).toBe("invalid_client");
      expect((err as OAuthError).headers["WWW-Authenticate"]).toBe('Basic realm="api"');
    }
  });
});
