// A typed client of the API: openapi-fetch over the types in api.d.ts (`npm run client:types`).
// Not part of the Worker; copy this folder into an app and `npm install openapi-fetch`.
import createClient, { type ClientOptions } from "openapi-fetch";
import type { components, operations, paths } from "./api";

export type { components, operations, paths };

/**
 * A client whose paths, parameters, bodies and replies are typed from the OpenAPI document.
 * `baseUrl` is the server's origin (paths start with /v1); `token`, when given, is sent as
 * `Authorization: Bearer`. `options` go to openapi-fetch (e.g. a custom `fetch`).
 *
 * @example
 * const api = createApiClient("https://api.example.com", token);
 * const { data, error } = await api.POST("/v1/posts", { body: { text: "Hello" } });
 */
export function createApiClient(baseUrl: string, token?: string, options: ClientOptions = {}) {
  const headers = new Headers(options.headers as HeadersInit | undefined);
  if (token) headers.set("Authorization", `Bearer ${token}`);
  return createClient<paths>({ ...options, baseUrl, headers });
}
