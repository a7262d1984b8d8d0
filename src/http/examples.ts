// Example responses for the OpenAPI document (shown on /v1/docs): real responses of this server,
// with the origin, ids, secrets and times replaced by readable stand-ins. The OpenAPI lint checks
// each example against its response schema (no-invalid-media-type-examples).

import { SCOPES } from "../config";

/** The client reference objects embed (`source`, a token's `app`). */
export const exampleClientRef = {
  id: "pbx_3Fq9LwZt7XkR2mNv",
  name: "Photo Box",
  url: "https://photobox.example",
};

/** A User as another user sees it. */
export const exampleUser = {
  id: "1",
  created_at: "2026-03-14T09:26:53Z",
  username: "ada",
  name: "Ada Lovelace",
  type: "human",
  locale: "en_US",
  timezone: "UTC",
  content: {
    text: "",
    html: '<span itemscope itemtype="https://schema.example.io/User"></span>',
    entities: {
      links: [],
      mentions: [],
      tags: [],
    },
    avatar_image: {
      url: "https://api.example.com/v1/static/default-avatar.png",
      width: 200,
      height: 200,
      is_default: true,
    },
    cover_image: {
      url: "https://api.example.com/v1/static/default-cover.png",
      width: 200,
      height: 200,
      is_default: true,
    },
  },
  counts: {
    bookmarks: 0,
    clients: 0,
    followers: 0,
    following: 0,
    posts: 0,
  },
  follows_you: false,
  you_follow: false,
  you_muted: false,
  you_blocked: false,
  you_can_follow: false,
};

export const exampleToken = {
  app: exampleClientRef,
  scopes: [...SCOPES],
  user: exampleUser,
  storage: {
    available: 10737418240,
    total: 10737418240,
  },
};

export const exampleClient = {
  id: "pbx_3Fq9LwZt7XkR2mNv",
  name: "Photo Box",
  url: "https://photobox.example",
  created_at: "2026-03-14T09:26:53Z",
  logo_image: "https://api.example.com/v1/static/default-logo.png",
  posts: 0,
  content: {
    text: "",
    html: '<span itemscope itemtype="https://schema.example.io/Client"></span>',
    entities: {
      links: [],
      mentions: [],
      tags: [],
    },
  },
};

export const exampleChannel = {
  id: "1",
  type: "com.example.chat",
  created_at: "2026-03-14T09:26:53Z",
  user: exampleUser,
  acl: {
    full: {
      immutable: false,
      you: true,
      user_ids: [],
    },
    write: {
      any_user: true,
      immutable: false,
      you: true,
      user_ids: [],
    },
    read: {
      any_user: false,
      immutable: false,
      public: true,
      you: true,
      user_ids: [],
    },
  },
  counts: {
    messages: 0,
    subscribers: 1,
  },
  is_active: true,
  recent_message_id: null,
  you_muted: false,
  you_subscribed: true,
  has_unread: false,
};

export const exampleMessage = {
  id: "1",
  channel_id: "1",
  created_at: "2026-03-14T09:26:53Z",
  thread_id: "1",
  content: {
    text: "Hello channel, @alan #news",
    html: '<span itemscope itemtype="https://schema.example.io/Message">Hello channel, <span data-mention-id="2" data-mention-name="alan" itemprop="mention">@alan</span> <span data-tag-name="news" itemprop="tag">#news</span></span>',
    entities: {
      links: [],
      mentions: [
        {
          pos: 15,
          len: 5,
          text: "alan",
          id: "2",
        },
      ],
      tags: [
        {
          pos: 21,
          len: 5,
          text: "news",
        },
      ],
    },
  },
  counts: {
    replies: 0,
  },
  source: exampleClientRef,
  user: exampleUser,
  is_sticky: false,
};

export const examplePoll = {
  id: "1",
  created_at: "2026-03-14T09:26:53Z",
  closed_at: "2026-03-14T09:26:53Z",
  type: "com.example.poll",
  prompt: "Tea or coffee?",
  is_anonymous: true,
  is_public: true,
  max_options: 1,
  options: [
    {
      text: "Tea",
      position: 1,
      is_your_response: false,
    },
    {
      text: "Coffee",
      position: 2,
      is_your_response: false,
    },
  ],
  poll_token: "example-poll-token",
  source: exampleClientRef,
  user: exampleUser,
};

export const examplePollResponse = {
  id: "1",
  prompt: "Tea or coffee?",
  closed_at: "2026-03-14T09:26:53Z",
  poll_token: "example-poll-token",
  options: [
    {
      text: "Tea",
      position: 1,
    },
    {
      text: "Coffee",
      position: 2,
    },
  ],
  created_at: "2026-03-14T09:26:53Z",
  pagination_id: "1",
};

export const exampleFile = {
  id: "1",
  created_at: "2026-03-14T09:26:53Z",
  kind: "other",
  type: "com.example.upload",
  name: "hello.txt",
  mime_type: "text/plain; charset=utf-8",
  size: 12,
  total_size: 12,
  sha256: "a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a447",
  is_complete: true,
  is_public: true,
  url: "https://api.example.com/v1/files/content/1.udfowt.cyM-7cZHcSz6O8lFfRyvjh",
  url_expires_at: "2028-03-13T09:26:53Z",
  url_short: "https://api.example.com/v1/f/1-TJMUTg1a",
  file_token: "example-file-token",
  file_token_read: "TJMUTg1aexample-read-token",
  source: exampleClientRef,
  user: exampleUser,
  derived_files: {},
};

export const examplePresence = {
  id: "1",
  username: "ada",
  name: "Ada Lovelace",
  avatar_image: "https://api.example.com/v1/static/default-avatar.png",
  presence: "writing a compiler",
  last_seen_at: "2026-03-14T09:26:53Z",
};

export const exampleStats = {
  clients: {
    created: 1,
    public: 1,
  },
  days: 1,
  files: {
    created: 0,
  },
  messages: {
    created: 0,
  },
  polls: {
    created: 0,
  },
  posts: {
    created: 0,
  },
  users: {
    active: {
      "2026-11-24": 1,
    },
    created: 2,
    disabled: 0,
    present: 0,
  },
};

/** The entities of the text processor example; the result carries them flat and under `entities`. */
const exampleEntities = {
  links: [
    {
      pos: 17,
      len: 19,
      text: "https://example.com",
      url: "https://example.com",
    },
  ],
  mentions: [
    {
      pos: 6,
      len: 5,
      text: "alan",
      id: "2",
    },
  ],
  tags: [
    {
      pos: 37,
      len: 5,
      text: "news",
    },
  ],
};

export const exampleTextResult = {
  text: "Hello @alan, see https://example.com #news",
  html: '<span itemscope itemtype="https://schema.example.io/Post">Hello <span data-mention-id="2" data-mention-name="alan" itemprop="mention">@alan</span>, see <a href="https://example.com">https://example.com</a> <span data-tag-name="news" itemprop="tag">#news</span></span>',
  entities: exampleEntities,
  ...exampleEntities,
};

export const exampleOperation = {
  id: "514406d5-63e0-4de0-887d-4d5ebed825f4",
  type: "file_delete",
  status: "running",
  created_at: "2026-03-14T09:26:53Z",
};

export const exampleCreatedApp = {
  id: "1",
  name: "Photo Box",
  url: "https://photobox.example",
  client_id: "pbx_3Fq9LwZt7XkR2mNv",
  client_secret: "example-client-secret-shown-once",
  password_grant_secret: "example-password-grant-secret-shown-once",
};

/**
 * Request bodies by operationId, as "Try it out" on /v1/docs sends them unedited: each does what
 * its operation's summary says and is safe to send as is (no reply to a post that may not exist,
 * nothing marked NSFW, placeholders where a secret goes). A media type fragment: one `example`, or
 * named `examples` for an operation with several uses. `defineRoute` attaches them to every media
 * type but multipart (a file field has no example), and the OpenAPI lint requires them.
 */
export const requestExamples: Record<string, { example: unknown } | { examples: Record<string, { summary: string; value: unknown }> }> = {
  postOauthAccessToken: {
    examples: {
      password: {
        summary: "password grant: a user token for your own app",
        value: {
          grant_type: "password",
          client_id: "pbx_3Fq9LwZt7XkR2mNv",
          password_grant_secret: "your-password-grant-secret",
          username: "ada",
          password: "your password",
          scope: "basic write_post",
        },
      },
      client_credentials: {
        summary: "client_credentials grant: an app token",
        value: { grant_type: "client_credentials", client_id: "pbx_3Fq9LwZt7XkR2mNv", client_secret: "your-client-secret" },
      },
      authorization_code: {
        summary: "authorization_code grant: the code the consent page sent back",
        value: {
          grant_type: "authorization_code",
          client_id: "pbx_3Fq9LwZt7XkR2mNv",
          client_secret: "your-client-secret",
          code: "the-code-from-the-redirect",
          redirect_uri: "https://photobox.example/callback",
        },
      },
    },
  },
  postOauthAuthenticate: {
    example: {
      client_id: "pbx_3Fq9LwZt7XkR2mNv",
      redirect_uri: "https://photobox.example/callback",
      response_type: "code",
      scope: "basic write_post",
      state: "af0ifjsldkj",
      username: "ada",
      password: "your password",
      decision: "authorize",
      csrf: "the-token-from-the-consent-page",
    },
  },
  postPosts: { example: { text: "Hello from the API reference! #firstpost" } },
  putPostsByPostId: { example: { text: "Hello from the API reference! (revised) #firstpost" } },
  putPostsByPostIdRepost: { example: {} },
  putPostsByPostIdBookmark: { example: { note: "Read this weekend" } },
  postPostsByPostIdReport: { example: { reason: "soliciting" } },
  putUsersMe: { example: { name: "Ada Lovelace", locale: "en_GB", timezone: "Europe/London", content: { text: "Writing the first program. #math" } } },
  patchUsersMe: { example: { content: { text: "Writing the first program. #math" } } },
  postUsersMeAvatar: { example: { from_url: "https://photobox.example/ada-avatar.png" } },
  postUsersMeCover: { example: { from_url: "https://photobox.example/ada-cover.png" } },
  putUsersMePresence: { example: { presence: "writing a compiler" } },
  putUsersMePresenceChannelsByChannelId: { example: { presence: "reading along" } },
  postChannels: { example: { type: "com.example.chat", acl: { read: { public: true }, write: { any_user: true } } } },
  putChannelsByChannelId: { example: { acl: { read: { public: true }, write: { any_user: false, user_ids: ["@alan"] } } } },
  patchChannelsByChannelId: { example: { acl: { read: { public: true } } } },
  putChannelsByChannelIdOwner: { example: { owner_id: "@alan" } },
  postChannelsByChannelIdMessages: { example: { text: "Hello, channel! #news" } },
  postChannelsPmMessages: { example: { text: "Lunch tomorrow?", destinations: ["@alan"] } },
  postMarkers: { example: [{ name: "global", id: "1" }] },
  postPolls: { example: { type: "com.example.poll", prompt: "Tea or coffee?", options: [{ text: "Tea" }, { text: "Coffee" }], duration: 60 } },
  putPollsByPollIdResponse: { example: { positions: [1], poll_token: "example-poll-token" } },
  postStreams: { example: { type: "long_poll", object_types: ["post", "follow"] } },
  putStreamsByStreamKey: { example: { object_types: ["post", "follow", "bookmark"] } },
  patchFilesByFileId: { example: { name: "hello.txt", is_public: true } },
  postTextProcess: { example: { text: "Hello @ada, see https://example.com #news" } },
  postAdminApps: { example: { name: "Photo Box", url: "https://photobox.example" } },
  postAdminUsers: { example: { username: "grace", password: "a long passphrase", name: "Grace Hopper", email: "grace@example.com" } },
  postAdminBadges: { example: { name: "Early adopter", description: "Joined in the first month" } },
  patchAdminUsersByUserId: { example: { verified_url: "https://ada.example" } },
};

/** An error envelope per status, as the server words them (src/http/errors.ts): shown with each operation's errors. */
export const errorExamples: Record<string, { meta: Record<string, unknown> }> = {
  400: { meta: { code: 400, error_message: "Bad Request: 'text' is required" } },
  401: { meta: { code: 401, error_message: "Unauthorized: a valid access token is required" } },
  403: { meta: { code: 403, error_message: "Forbidden: this endpoint requires the 'write_post' scope" } },
  404: { meta: { code: 404, error_message: "Not Found: no such object" } },
  405: { meta: { code: 405, error_message: "Method Not Allowed" } },
  409: { meta: { code: 409, error_message: "Conflict: 'Idempotency-Key' was already used for a different request (method, path or query); use a new key" } },
  413: { meta: { code: 413, error_message: "Payload Too Large: the request body is larger than this endpoint accepts (131072 bytes)" } },
  415: { meta: { code: 415, error_message: "Unsupported Media Type: this endpoint takes a JSON body with 'Content-Type: application/json'" } },
  429: { meta: { code: 429, error_message: "Too Many Requests: rate limit exceeded; banned for 600 more seconds", retry_in: 600 } },
  500: { meta: { code: 500, error_message: "Internal Server Error", error_id: "9b2f4c1e-5a7d-4e8b-b0c3-1f2e3d4c5b6a" } },
  507: { meta: { code: 507, error_message: "Insufficient Storage: the storage quota is exceeded" } },
  default: { meta: { code: 401, error_message: "Unauthorized: a valid access token is required" } },
};

/** Error replies that are not the plain envelope, by operationId and status: the token endpoint speaks OAuth's errors. */
export const operationErrorExamples: Record<string, Record<string, unknown>> = {
  postOauthAccessToken: {
    400: {
      error: "invalid_grant",
      error_description: "'code' is unknown, expired, used or issued for another 'redirect_uri'",
      meta: { code: 400, error_message: "Bad Request: 'code' is unknown, expired, used or issued for another 'redirect_uri'" },
    },
    401: {
      error: "invalid_client",
      error_description: "unknown 'client_id' or wrong 'client_secret'",
      meta: { code: 401, error_message: "Unauthorized: unknown 'client_id' or wrong 'client_secret'" },
    },
  },
};
