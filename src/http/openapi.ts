import type { OpenAPIHono } from "@hono/zod-openapi";
import { SCOPES } from "../config";
import { SCOPE_TEXT } from "../auth/oauth";
import type { AppEnv } from "./types";

const DESCRIPTION = `A social network over HTTP: users, OAuth 2 apps and tokens, posts and the social graph, channels and
private messages, polls, read markers, interactions, presence, files, and live app and user streams over WebSockets.

**Responses.** Every JSON response is an envelope \`{"meta": {"code", …}, "data"}\` whose \`meta.code\` equals the HTTP
status. Errors are \`{"meta": {"code", "error_message"}}\`; \`error_message\` starts with the reason phrase and names the
field at fault. A 500 carries \`error_id\` (also in the server log). Send \`X-Pretty-Json: 1\` for indented JSON.

**Tokens.** Send \`Authorization: Bearer <token>\` (or \`?access_token=\`). User tokens come from the OAuth 2 flows
(authorization code or implicit through \`/v1/oauth/authenticate\`, or the password grant at
\`/v1/oauth/access_token\`); app tokens from the client-credentials grant. A token that is sent but unknown or deleted
is a 401 on every endpoint, even one that needs none. \`X-OAuth-Scopes\` lists the token's scopes. Operations whose
\`security\` includes \`{}\` take a token but do not need one: with it they answer for that user.

**Rate limits.** Anonymous reads: 40 per minute per IP; reads with a token: 5000 per hour per token; writes: 20 per
minute. Responses carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`; hitting a limit is a
429 and a 600-second ban (\`Retry-After\`).

**Pagination.** Lists take \`before_id\`, \`since_id\` and \`count\` and answer \`meta.min_id\`, \`meta.max_id\` and
\`meta.more\`. Post streams and a channel's messages asked with \`since_id\` also answer \`meta.deleted_ids\` and
\`meta.revised_ids\` (when not empty): what changed after \`since_id\` was created (dynamic polling).

**Streams.** Writes emit events to app streams (\`/v1/app\`, app tokens) and user streams (\`/v1/user\`, user tokens)
over WebSockets; each operation says what it emits.

The server's \`x-access\` extension on each operation states the access rule it enforces.`;

/**
 * The tags in the order a newcomer needs them (Swagger UI shows them in this order): getting a
 * token, posting, people, channels and messages, live streams, files, the rest, admin last.
 * Every tag an operation uses must be listed here (the OpenAPI lint's operation-tag-defined).
 */
export const TAGS: { name: string; description: string }[] = [
  { name: "OAuth", description: "Get a token: the consent page for people, the token endpoint for apps and scripts." },
  { name: "Token", description: "What the current token is: its user, app, scopes and storage." },
  { name: "Posts", description: "Create, read, revise, delete, repost and bookmark posts." },
  { name: "Post streams", description: "Timelines: the personal, global and explore streams, a user's posts, mentions and bookmarks, tags, threads." },
  { name: "Post search", description: "Find posts by text, tags, mentions and more." },
  { name: "Interactions", description: "What people did with a post, or with the caller's posts, polls and account: reposts, bookmarks, follows, replies." },
  { name: "Report", description: "Report a post for moderation." },
  { name: "Users", description: "Look up users, follow, mute and block them." },
  { name: "Profile", description: "The caller's own profile: name, text, locale, avatar and cover images." },
  { name: "Presence", description: "Who is online, and what the caller is doing." },
  { name: "Clients", description: "Apps (clients): their public pages, and the calling app's users and tokens." },
  { name: "Badges", description: "Badges users can show on their profile." },
  { name: "Channels", description: "Channels with their access lists: create, change, subscribe." },
  { name: "Messages", description: "Messages in channels, and private messages." },
  { name: "Message search", description: "Find messages in the channels the caller can read." },
  { name: "Channel muting", description: "Mute and unmute channels." },
  { name: "Stream markers", description: "Where the caller stopped reading a stream or channel." },
  { name: "Polls", description: "Create polls, respond, and see the results." },
  { name: "App streams", description: "An app's live streams of events (app token), read over a WebSocket." },
  { name: "User streams", description: "A user's live stream of events (user token) over a WebSocket, and its subscriptions." },
  { name: "Files", description: "Upload files, share them, read their contents." },
  { name: "Feeds", description: "RSS feeds of tagged posts, a user's posts, searches and a channel's messages; oEmbed of posts and files." },
  { name: "Text", description: "See how post and message text is processed into entities and HTML." },
  { name: "Static", description: "The server's static files: default images." },
  { name: "System", description: "This server's health, limits, statistics and long-running operations." },
  { name: "Admin", description: "For the operator only, with the server's ADMIN_TOKEN: apps, users, badges." },
];

/** The document's static parts; the OAuth URLs depend on the origin the document is served from. */
function documentConfig(origin: string) {
  return {
    openapi: "3.1.0",
    info: {
      title: "Edge social network API",
      version: "1",
      description: DESCRIPTION,
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: origin, description: "This server" }],
    tags: TAGS,
  };
}

function securitySchemes(origin: string) {
  const scopes = Object.fromEntries(SCOPES.map((s) => [s, SCOPE_TEXT[s]]));
  return {
    bearer: { type: "http", scheme: "bearer", description: "A user or app token from `/v1/oauth/access_token` or the OAuth flows." },
    oauth2: {
      type: "oauth2",
      description: "The app's `redirect_uri` must be on the app's registered URL's origin (any origin when it registered none).",
      flows: {
        authorizationCode: { authorizationUrl: `${origin}/v1/oauth/authenticate`, tokenUrl: `${origin}/v1/oauth/access_token`, scopes },
        implicit: { authorizationUrl: `${origin}/v1/oauth/authenticate`, scopes },
      },
    },
    admin: { type: "http", scheme: "bearer", description: "The server's `ADMIN_TOKEN` (a secret set by the operator)." },
  };
}

const BENCH_PREFIX = "/v1/sys/bench/";
/** Per isolate: generated documents by origin and variant (see openApiDocument). */
const cache = new Map<string, object>();
/** Documents kept per isolate: one per origin and variant, and the origin is the request's Host. */
const DOCUMENTS_KEPT = 4;

/**
 * The OpenAPI document of every mounted route, for the origin it is served from. The benchmark's
 * floor routes are listed only when this Worker serves them (`BENCH_FLOORS = "1"`). Built once per
 * isolate and variant: generating it walks every route's schemas.
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>, origin: string, benchServed: boolean): object {
  const key = `${origin} ${benchServed}`;
  let doc = cache.get(key);
  if (!doc) {
    const generated = app.getOpenAPI31Document(documentConfig(origin) as Parameters<typeof app.getOpenAPI31Document>[0]);
    const paths = Object.fromEntries(Object.entries(generated.paths ?? {}).filter(([p]) => benchServed || !p.startsWith(BENCH_PREFIX)));
    const components = { ...generated.components, securitySchemes: securitySchemes(origin) };
    doc = { ...generated, paths, components };
    // Bounded: each Host a client sends would otherwise keep a whole document for the isolate's life.
    if (cache.size >= DOCUMENTS_KEPT) cache.delete(cache.keys().next().value!);
    cache.set(key, doc);
  }
  return doc;
}
