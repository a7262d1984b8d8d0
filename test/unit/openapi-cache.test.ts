import { OpenAPIHono } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/http/openapi";

// The document is kept per origin, and the origin is the request's Host: a client sending many
// Hosts must not grow the isolate's memory without bound.
describe("openApiDocument()", () => {
  it("keeps a few documents, the oldest forgotten first", () => {
    const app = new OpenAPIHono();
    const first = openApiDocument(app as never, "http://h0.test", false);
    expect(openApiDocument(app as never, "http://h0.test", false)).toBe(first);
    let last: object = first;
    for (let i = 1; i <= 50; i++) last = openApiDocument(app as never, `http://h${i}.test`, false);
    expect(openApiDocument(app as never, "http://h50.test", false)).toBe(last);
    expect(openApiDocument(app as never, "http://h0.test", false)).not.toBe(first);
  });
});
