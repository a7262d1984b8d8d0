// The typed client (client/): its committed types must be what the served OpenAPI document
// generates, and calls through it must work. `npm run typecheck` compiles this file against those
// types, so a path, parameter or field the document does not have fails the typecheck.
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import committed from "../../client/api.d.ts?raw";
import { createApiClient } from "../../client";
import { BASE, makeApp, makeUser } from "../support/client";

const ORIGIN = new URL(BASE).origin;
const viaWorker = { fetch: (request: Request) => SELF.fetch(request) };

/** Where two texts first differ, line by line (a whole-file diff is too long to read in a failure). */
function firstDifference(committedText: string, generatedText: string): string | undefined {
  const a = committedText.split("\n");
  const b = generatedText.split("\n");
  const i = a.findIndex((line, n) => line !== b[n]);
  const at = i >= 0 ? i : a.length < b.length ? a.length : -1;
  return at < 0 ? undefined : `line ${at + 1}: committed ${JSON.stringify(a[at]?.trim())}, generated ${JSON.stringify(b[at]?.trim())}`;
}

describe("typed client (openapi-typescript + openapi-fetch)", () => {
  it("has committed types equal to those generated from the served /v1/openapi.json (else run `npm run client:types`)", async () => {
    const doc = await (await SELF.fetch(`${BASE}/openapi.json`)).text();
    // Generated in Node (vitest.config.ts), where openapi-typescript runs.
    const generated = await (await env.CLIENT_TYPES.fetch("http://client-types/", { method: "POST", body: doc })).text();
    expect(generated).toContain("export interface paths");
    expect(firstDifference(committed.replace(/\r\n/g, "\n"), generated), "client/api.d.ts is stale: run `npm run client:types`").toBeUndefined();
  });

  it("gets a token, creates a post and reads it back, typed", async () => {
    const app = await makeApp();
    const user = await makeUser();
    const anonymous = createApiClient(ORIGIN, undefined, viaWorker);
    const { data: tokenReply, error: tokenError } = await anonymous.POST("/v1/oauth/access_token", {
      body: {
        grant_type: "password",
        client_id: app.client_id,
        password_grant_secret: app.password_grant_secret,
        username: user.username,
        password: user.password,
        scope: "write_post",
      },
    });
    expect(tokenError).toBeUndefined();
    const api = createApiClient(ORIGIN, tokenReply!.access_token, viaWorker);

    const created = await api.POST("/v1/posts", { body: { text: "Typed hello" } });
    expect(created.response.status).toBe(201);
    const postId: string = created.data!.data.id;
    const read = await api.GET("/v1/posts/{post_id}", { params: { path: { post_id: postId }, query: { include_counts: "0" } } });
    expect(read.data?.data.content?.text).toBe("Typed hello");
    expect(read.data?.data.counts).toBeUndefined();

    // Errors are typed as the envelope.
    const missing = await api.GET("/v1/posts/{post_id}", { params: { path: { post_id: "999999999" } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.meta.code).toBe(404);
  });
});

/** Never called: what the types must refuse (an unused @ts-expect-error fails the typecheck). */
// biome-ignore lint/suspicious/noExportsInTest: exported so the never-called function is not an unused local
export function refusedByTheTypes(api: ReturnType<typeof createApiClient>) {
  // @ts-expect-error: no such path
  void api.GET("/v1/no-such-path");
  // @ts-expect-error: post_id is required
  void api.GET("/v1/posts/{post_id}", { params: { path: {} } });
  // @ts-expect-error: text is required in a new post
  void api.POST("/v1/posts", { body: { is_nsfw: true } });
}
