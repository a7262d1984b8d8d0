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
import { PUBLIC } from "../../auth/access";
import { SCOPES } from "../../config";
import { ApiError } from "../../http/errors";
import { openApiDocument } from "../../http/openapi";
import { createRouter, defineRoute } from "../../http/route";
import type { AppEnv } from "../../http/types";
import { viewContext } from "../../views/context";

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

/**
 * Where Swagger UI's OAuth flows come back to: a stable path (not the versioned asset folder), so
 * an app can register it once (`npm run seed` registers its app for this server's origin).
 */
export const OAUTH_REDIRECT_PATH = "/v1/docs/oauth2-redirect.html";

/**
 * A Swagger UI plugin: the filter box also matches an operation's summary, method, path and
 * operationId (Swagger UI's own matches tag names and paths only), every word of the phrase, any
 * case. A tag whose name matches keeps all its operations. `taggedOps` is Swagger UI's Immutable
 * map of tag → {tagDetails, operations}.
 */
const OPS_FILTER_PLUGIN = `window.OpsFilterPlugin = function () {
  function matcher(phrase) {
    var words = String(phrase).toLowerCase().split(/\\s+/).filter(Boolean);
    return function (text) { text = text.toLowerCase(); return words.every(function (w) { return text.indexOf(w) !== -1; }); };
  }
  return { fn: { opsFilter: function (taggedOps, phrase) {
    if (!phrase) return taggedOps;
    var matches = matcher(phrase);
    return taggedOps.map(function (tagObj, tag) {
      if (matches(String(tag))) return tagObj;
      var ops = tagObj.get("operations").filter(function (op) {
        var o = op.get("operation");
        return matches([op.get("method"), op.get("path"), o && o.get("summary"), o && o.get("operationId")].filter(Boolean).join(" "));
      });
      return ops.size ? tagObj.set("operations", ops) : null;
    }).filter(Boolean);
  } } };
};`;

/**
 * Swagger UI's OAuth settings: every scope ticked (so every "Try it out" can work once signed in)
 * and the app's client id prefilled from the page's own `?client_id=` (the link `npm run seed` prints).
 */
const OAUTH_INIT = `window.docsInitOAuth = function () {
  var clientId = new URLSearchParams(location.search).get("client_id");
  window.ui.initOAuth(Object.assign({ scopes: ${JSON.stringify([...SCOPES])} }, clientId ? { clientId: clientId } : {}));
};`;

const PAGE_STYLE = `body{margin:0}.swagger-ui .topbar{display:none}.docs-note{font:14px system-ui,sans-serif;max-width:1460px;margin:0 auto;padding:12px 20px 0;box-sizing:border-box}`;

function referencePage(origin: string) {
  const ui = SwaggerUI({
    url: "/v1/openapi.json",
    baseUrl: ASSET_BASE,
    version: VERSION,
    deepLinking: true,
    filter: true,
    displayOperationId: true,
    // A login (token or OAuth) is kept in the browser's localStorage: it survives a reload.
    persistAuthorization: true,
    plugins: ["OpsFilterPlugin"],
    onComplete: "window.docsInitOAuth",
    // No badge fetched from an outside validator: the page stays offline.
    validatorUrl: "none",
    oauth2RedirectUrl: `${origin}${OAUTH_REDIRECT_PATH}`,
  });
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Edge social network API</title><style>${PAGE_STYLE}</style>
<script>${raw(OPS_FILTER_PLUGIN)}
${raw(OAUTH_INIT)}</script></head>
<body><p class="docs-note">The same document as JSON: <a href="/v1/openapi.json">/v1/openapi.json</a>.
The filter box finds operations by words of their summary or path. To try calls, press <b>Authorize</b> and paste a token, or sign in through
OAuth (authorizationCode: the app's client_id and client_secret) with the app <code>npm run seed</code> printed, or any app registered
without a URL or with this server's origin (redirect URL: <code>${origin}${OAUTH_REDIRECT_PATH}</code>).</p>
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
        path: "/docs/oauth2-redirect.html",
        hide: true,
        tags: ["Docs"],
        summary: "Where the reference page's OAuth sign-in comes back to",
        responses: { 200: { description: "HTML page" } },
      }),
      // Swagger UI's own page, its script taken from the versioned folder.
      (c) => c.html(redirectHtml.replace('src="oauth2-redirect.js"', `src="${ASSET_DIR}/oauth2-redirect.js"`)) as never,
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
