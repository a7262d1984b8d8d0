import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { SwaggerUI } from "@hono/swagger-ui";
import { html, raw } from "hono/html";
import swaggerPackage from "swagger-ui-dist/package.json";
// Swagger UI's files, imported as text modules (wrangler.toml [[rules]]): the Worker serves them
// itself, so the reference page needs no CDN and works offline.
import bundleJs from "swagger-ui-dist/swagger-ui-bundle.js";
import css from "swagger-ui-dist/swagger-ui.css";
import redirectHtml from "swagger-ui-dist/oauth2-redirect.html";
import redirectJs from "swagger-ui-dist/oauth2-redirect.js";
import { PUBLIC } from "../auth/access";
import { ApiError } from "../http/errors";
import { openApiDocument } from "../http/openapi";
import { createRouter, defineRoute } from "../http/route";
import type { AppEnv } from "../http/types";
import { viewContext } from "../views/context";

const VERSION = swaggerPackage.version;
/** Versioned, so the files can be cached for good: a new Swagger UI is a new path. */
const ASSET_BASE = "/v1/docs/assets";
const ASSET_DIR = `${ASSET_BASE}/swagger-ui-dist@${VERSION}`;
const ASSETS: Record<string, { body: string; type: string }> = {
  "swagger-ui-bundle.js": { body: bundleJs, type: "text/javascript; charset=utf-8" },
  "swagger-ui.css": { body: css, type: "text/css; charset=utf-8" },
  "oauth2-redirect.html": { body: redirectHtml, type: "text/html; charset=utf-8" },
  "oauth2-redirect.js": { body: redirectJs, type: "text/javascript; charset=utf-8" },
};

const PAGE_STYLE = `body{margin:0}.swagger-ui .topbar{display:none}.docs-note{font:14px system-ui,sans-serif;max-width:1460px;margin:0 auto;padding:12px 20px 0;box-sizing:border-box}`;

function referencePage(origin: string) {
  const ui = SwaggerUI({
    url: "/v1/openapi.json",
    baseUrl: ASSET_BASE,
    version: VERSION,
    deepLinking: true,
    filter: true,
    displayOperationId: true,
    // No badge fetched from an outside validator: the page stays offline.
    validatorUrl: "none",
    oauth2RedirectUrl: `${origin}${ASSET_DIR}/oauth2-redirect.html`,
  });
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Edge social network API</title><style>${PAGE_STYLE}</style></head>
<body><p class="docs-note">The same document as JSON: <a href="/v1/openapi.json">/v1/openapi.json</a>.
To try calls, press <b>Authorize</b> and paste a token, or sign in through OAuth with an app registered without a URL or with this server's origin.</p>
${raw(ui)}</body></html>`;
}

/**
 * The OpenAPI document (`/v1/openapi.json`) and the reference page that renders it (`/v1/docs`,
 * Swagger UI). The document is built from `app`, the application whose routes it describes.
 */
export function docsRoutes(app: OpenAPIHono<AppEnv>) {
  return createRouter()
    .openapi(
      defineRoute(PUBLIC, {
        method: "get",
        path: "/openapi.json",
        hide: true,
        tags: ["Docs"],
        summary: "This document",
        responses: { 200: { description: "OpenAPI 3.1 document" } },
      }),
      (c) => c.json(openApiDocument(app, viewContext(c).origin, c.env.BENCH_FLOORS === "1")) as never,
    )
    .openapi(
      defineRoute(PUBLIC, {
        method: "get",
        path: "/docs",
        hide: true,
        tags: ["Docs"],
        summary: "The API reference page",
        responses: { 200: { description: "HTML page" } },
      }),
      (c) => c.html(referencePage(viewContext(c).origin)) as never,
    )
    .openapi(
      defineRoute(PUBLIC, {
        method: "get",
        path: "/docs/assets/{version}/{name}",
        hide: true,
        tags: ["Docs"],
        summary: "Swagger UI's files",
        request: { params: z.object({ version: z.string(), name: z.string() }) },
        responses: { 200: { description: "A file of Swagger UI" } },
      }),
      (c) => {
        const { version, name } = c.req.valid("param");
        const asset = version === `swagger-ui-dist@${VERSION}` ? ASSETS[name] : undefined;
        if (!asset) throw ApiError.notFound("no such file");
        return c.body(asset.body, 200, { "Content-Type": asset.type, "Cache-Control": "public, max-age=31536000, immutable" }) as never;
      },
    );
}
