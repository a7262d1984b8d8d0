// Things a developer or an operator meets first: the health endpoint and trailing slashes.
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/config";
import { actor, call, randomIp } from "../support/client";

const { anonymous } = LIMITS.rate_limit;

describe("GET /v1/health", () => {
  it("answers 200 with status ok in the envelope, uncached, without a database call", async () => {
    const res = await call("GET", "/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { code: 200 }, data: { status: "ok" } });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    // Test mode reports the request's database round trips; the probe makes none.
    expect(res.headers.get("x-debug-db-calls") ?? "0").toBe("0");
  });

  it("answers HEAD with 200 and no body", async () => {
    const res = await call("HEAD", "/health");
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
  });

  it("is not rate limited: many more anonymous probes than the read limit from one IP", async () => {
    const ip = randomIp();
    const headers = { "CF-Connecting-IP": ip };
    for (let i = 0; i < anonymous.reads + 20; i++) {
      const res = await call("GET", "/health", { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    }
    // The probes used none of the IP's bucket: its first counted read still has the whole limit.
    const config = await call("GET", "/sys/config", { headers });
    expect(config.status).toBe(200);
    expect(config.headers.get("x-ratelimit-remaining")).toBe(String(anonymous.reads - 1));
  });

  it("reads no token: an unknown one does not make it fail", async () => {
    expect((await call("GET", "/health", { token: "no-such-token" })).status).toBe(200);
  });

  it("is in the OpenAPI document", async () => {
    const doc = await call("GET", "/openapi.json");
    expect(doc.body.paths["/v1/health"].get.summary).toMatch(/health/i);
  });
});

describe("trailing slashes", () => {
  it("reach the same route: GET /v1/token/ answers like /v1/token", async () => {
    const { token, user } = await actor();
    const plain = await call("GET", "/token", { token });
    const slashed = await call("GET", "/token/", { token });
    expect(plain.status).toBe(200);
    expect(slashed.status).toBe(200);
    expect(slashed.body.data.user.id).toBe(user.id);
    expect(slashed.body).toEqual(plain.body);
    expect((await call("GET", "/sys/config/")).status).toBe(200);
  });

  it("keep request bodies: POST /v1/text/process/ processes its JSON body", async () => {
    const { token } = await actor();
    const res = await call("POST", "/text/process/", { token, json: { text: "hi #tag" } });
    expect(res.status).toBe(200);
    expect(res.body.data.tags.map((t: { text: string }) => t.text)).toEqual(["tag"]);
  });

  it("on an unknown path is a 404", async () => {
    const res = await call("GET", "/no/such/route/");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ meta: { code: 404, error_message: expect.stringContaining("Not Found") } });
  });

  it("with a wrong method is a 405 that lists the methods, not the one used", async () => {
    const res = await call("PATCH", "/token/");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, DELETE");
    expect(res.body.meta.error_message).toBe("Method Not Allowed: PATCH is not allowed here; use GET, DELETE");
  });

  it("never give a 405 that allows the method it refuses, on any documented GET path", async () => {
    const doc = await call("GET", "/openapi.json");
    const paths = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>)
      .filter(([, ops]) => "get" in ops)
      .map(([p]) => p.replace(/\{[^}]+\}/g, "1"));
    expect(paths.length).toBeGreaterThan(20);
    for (const p of paths) {
      const res = await call("GET", `http://api.test${p}/`);
      expect(res.status, p).not.toBe(405);
    }
  });
});
