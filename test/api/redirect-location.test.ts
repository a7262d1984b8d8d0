import { describe, expect, it } from "vitest";
import { call, makeUser } from "../support/client";

// Issue 26: no response header echoes unbounded input. The avatar and cover redirects pass on
// `w` and `h` only; a 28 KB query once made a Location too large for HTTP clients to parse.

describe("GET /users/{id}/avatar and /cover redirects", () => {
  it("carry only w and h in Location, however long the request's query", async () => {
    const user = await makeUser();
    const junk = `x=${"a".repeat(28 * 1024)}&y=1`;
    for (const kind of ["avatar", "cover"]) {
      const plain = await call("GET", `/users/${user.id}/${kind}`);
      expect(plain.status).toBe(302);
      const base = plain.headers.get("location")!;
      const res = await call("GET", `/users/${user.id}/${kind}?w=64&h=32&${junk}`);
      expect(res.status, res.text).toBe(302);
      const location = res.headers.get("location")!;
      expect(location.length).toBeLessThan(base.length + 20);
      const url = new URL(location);
      expect([...url.searchParams.keys()].sort()).toEqual(["h", "w"]);
      expect(url.searchParams.get("w")).toBe("64");
    }
  });

  it("refuses a w or h that is not a number of pixels, naming it", async () => {
    const user = await makeUser();
    const res = await call("GET", `/users/${user.id}/avatar?w=${"9".repeat(30)}`);
    expect(res.status).toBe(400);
    expect(res.body.meta.error_message).toContain("'w'");
  });
});
