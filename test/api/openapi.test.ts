import { describe, expect, it } from "vitest";
import { actor, call } from "../support/client";

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

  it("gives every JSON or form request body an example that is safe to send unedited, and every error an example", async () => {
    const { ops } = await operations();
    const bodies = ops.filter((o) => o.op.requestBody);
    expect(bodies.length).toBeGreaterThanOrEqual(30);
    for (const { key, op } of bodies) {
      for (const [type, media] of Object.entries(op.requestBody.content as Record<string, any>)) {
        if (type === "multipart/form-data") continue;
        expect(media.example ?? media.examples, `${key} ${type}`).toBeDefined();
        const examples = media.examples ? Object.values(media.examples).map((e: any) => e.value) : [media.example];
        for (const ex of examples) expect(JSON.stringify(ex), key).not.toMatch(/"(reply_to|is_nsfw)":(?!false)/);
      }
      for (const [status, res] of Object.entries(op.responses as Record<string, any>)) {
        if (/^[45]\d\d$|^default$/.test(status) && res.content?.["application/json"])
          expect(res.content["application/json"].example, `${key} ${status}`).toBeDefined();
      }
    }
    const post = ops.find((o) => o.key === "POST /v1/posts")!.op;
    expect(post.requestBody.content["application/json"].example).toEqual({ text: expect.stringMatching(/\S/) });
    expect(post.responses[400].content["application/json"].example.meta.error_message).toMatch(/^Bad Request: '\w+'/);
    // The example does what the summary says: sent as is, it creates the post.
    const { body } = await call("POST", "/posts", { token: (await actor("write_post")).token, json: post.requestBody.content["application/json"].example });
    expect(body.meta.code).toBe(201);
    expect(body.data.content.text).toBe(post.requestBody.content["application/json"].example.text);
  });

  it("lists its tags in a newcomer's order, each described, OAuth first and Admin last", async () => {
    const { doc, ops } = await operations();
    const names = doc.tags.map((t: { name: string }) => t.name);
    expect(names[0]).toBe("OAuth");
    expect(names.at(-1)).toBe("Admin");
    expect(names.indexOf("Posts")).toBeLessThan(names.indexOf("Users"));
    expect(names.indexOf("Users")).toBeLessThan(names.indexOf("Channels"));
    expect(names.indexOf("Messages")).toBeLessThan(names.indexOf("App streams"));
    expect(names.indexOf("App streams")).toBeLessThan(names.indexOf("Files"));
    for (const t of doc.tags) expect(t.description, t.name).toMatch(/\S/);
    for (const { key, op } of ops) for (const tag of op.tags) expect(names, key).toContain(tag);
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
    // OAuth comes back to a path that does not change with Swagger UI's version; the login is kept.
    expect(page.text).toContain("oauth2RedirectUrl: 'http://api.test/v1/docs/oauth2-redirect.html'");
    expect(page.text).toContain("persistAuthorization: true");
    const redirect = await call("GET", "/docs/oauth2-redirect.html");
    expect(redirect.status).toBe(200);
    const script = /src="([^"]+)"/.exec(redirect.text)![1];
    expect((await call("GET", `http://api.test${script}`)).text).toContain("swaggerUIRedirectOauth2");
  });
});
