import { describe, expect, it } from "vitest";
import { call } from "../helpers";

const METHODS = ["get", "put", "post", "delete", "patch"];

async function operations() {
  const doc = (await call("GET", "/openapi.json")).body;
  const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, op })),
  );
  return { doc, ops };
}

describe("GET /v1/openapi.json", () => {
  it("names every operation once, with a stable operationId from its method and path", async () => {
    const { ops } = await operations();
    expect(ops.length).toBeGreaterThan(50);
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ops.find((o) => o.key === "GET /v1/users/{user_id}/presence")?.op.operationId).toBe("getUsersByUserIdPresence");
    for (const id of ids) expect(id).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
  });

  it("states who may call each operation: optional token, required token and scope, admin, none", async () => {
    const { ops } = await operations();
    const security = (key: string) => ops.find((o) => o.key === key)!.op.security;
    expect(security("GET /v1/sys/config")).toEqual([{}, { bearer: [] }, { oauth2: [] }]);
    expect(security("GET /v1/token")).toEqual([{ bearer: [] }, { oauth2: [] }]);
    expect(security("POST /v1/admin/users")).toEqual([{ admin: [] }]);
    expect(security("POST /v1/oauth/access_token")).toEqual([]);
    for (const { op } of ops) expect(op.security).toBeDefined();
  });

  it("lists the 429 with the rate-limit headers on every rate-limited operation", async () => {
    const { doc, ops } = await operations();
    for (const { key, op } of ops) {
      if (key.startsWith("GET /v1/health") || key.includes("/v1/admin/")) {
        expect(op.responses[429], key).toBeUndefined();
        continue;
      }
      expect(Object.keys(op.responses[429].headers), key).toEqual(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]);
    }
    expect(doc.components.headers["Retry-After"].schema).toEqual({ type: "integer", minimum: 0 });
  });

  it("has a description, an MIT license, and an oauth2 scheme with this server's endpoints", async () => {
    const { doc } = await operations();
    expect(doc.info.description).toContain("Rate limits");
    expect(doc.info.license).toEqual({ name: "MIT", identifier: "MIT" });
    const oauth2 = doc.components.securitySchemes.oauth2;
    expect(oauth2.flows.authorizationCode.authorizationUrl).toBe("http://api.test/v1/oauth/authenticate");
    expect(oauth2.flows.authorizationCode.tokenUrl).toBe("http://api.test/v1/oauth/access_token");
    expect(oauth2.flows.implicit.scopes.write_post).toContain("posts");
  });

  it("leaves out the benchmark routes this Worker does not serve", async () => {
    const { ops } = await operations();
    expect(ops.filter((o) => o.path.startsWith("/v1/sys/bench/"))).toEqual([]);
    expect((await call("GET", "/sys/bench/constant")).status).toBe(404);
  });
});

describe("GET /v1/docs", () => {
  it("serves the reference page and Swagger UI's files itself, no CDN", async () => {
    const page = await call("GET", "/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.text).toContain("url: '/v1/openapi.json'");
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).filter((u) => /\.(js|css)$/.test(u));
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      expect(asset).toMatch(/^\/v1\/docs\/assets\/swagger-ui-dist@[\d.]+\//);
      const res = await call("GET", `http://api.test${asset}`);
      expect(res.status).toBe(200);
      expect(res.text.length).toBeGreaterThan(100_000);
      expect(res.headers.get("cache-control")).toContain("immutable");
    }
    expect((await call("GET", "/docs/assets/swagger-ui-dist@0.0.1/swagger-ui.css")).status).toBe(404);
  });
});
