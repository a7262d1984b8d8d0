// Example responses for the OpenAPI document (shown on /v1/docs): real responses of this server,
// with the origin, ids, secrets and times replaced by readable stand-ins. The OpenAPI lint checks
// each example against its response schema (no-invalid-media-type-examples).

import { SCOPES } from "../config";

/** The client reference objects embed (`source`, a token's `app`). */
export const exampleClientRef = {
  id: "pbx_3Fq9LwZt7XkR2mNv",
  name: "Photo Box",
  url: "https://photobox.example"
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
    html: "<span itemscope itemtype=\"https://schema.example.io/User\"></span>",
    entities: {
      links: [],
      mentions: [],
      tags: []
    },
    avatar_image: {
      url: "https://api.example.com/v1/static/default-avatar.png",
      width: 200,
      height: 200,
      is_default: true
    },
    cover_image: {
      url: "https://api.example.com/v1/static/default-cover.png",
      width: 200,
      height: 200,
      is_default: true
    }
  },
  counts: {
    bookmarks: 0,
    clients: 0,
    followers: 0,
    following: 0,
    posts: 0
  },
  follows_you: false,
  you_follow: false,
  you_muted: false,
  you_blocked: false,
  you_can_follow: false
};

export const exampleToken = {
  app: exampleClientRef,
  scopes: [...SCOPES],
  user: exampleUser,
  storage: {
    available: 10737418240,
    total: 10737418240
  }
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
    html: "<span itemscope itemtype=\"https://schema.example.io/Client\"></span>",
    entities: {
      links: [],
      mentions: [],
      tags: []
    }
  }
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
      user_ids: []
    },
    write: {
      any_user: true,
      immutable: false,
      you: true,
      user_ids: []
    },
    read: {
      any_user: false,
      immutable: false,
      public: true,
      you: true,
      user_ids: []
    }
  },
  counts: {
    messages: 0,
    subscribers: 1
  },
  is_active: true,
  recent_message_id: null,
  you_muted: false,
  you_subscribed: true,
  has_unread: false
};

export const exampleMessage = {
  id: "1",
  channel_id: "1",
  created_at: "2026-03-14T09:26:53Z",
  thread_id: "1",
  content: {
    text: "Hello channel, @alan #news",
    html: "<span itemscope itemtype=\"https://schema.example.io/Message\">Hello channel, <span data-mention-id=\"2\" data-mention-name=\"alan\" itemprop=\"mention\">@alan</span> <span data-tag-name=\"news\" itemprop=\"tag\">#news</span></span>",
    entities: {
      links: [],
      mentions: [
        {
          pos: 15,
          len: 5,
          text: "alan",
          id: "2"
        }
      ],
      tags: [
        {
          pos: 21,
          len: 5,
          text: "news"
        }
      ]
    }
  },
  counts: {
    replies: 0
  },
  source: exampleClientRef,
  user: exampleUser,
  is_sticky: false
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
      is_your_response: false
    },
    {
      text: "Coffee",
      position: 2,
      is_your_response: false
    }
  ],
  poll_token: "example-poll-token",
  source: exampleClientRef,
  user: exampleUser
};

export const examplePollResponse = {
  id: "1",
  prompt: "Tea or coffee?",
  closed_at: "2026-03-14T09:26:53Z",
  poll_token: "example-poll-token",
  options: [
    {
      text: "Tea",
      position: 1
    },
    {
      text: "Coffee",
      position: 2
    }
  ],
  created_at: "2026-03-14T09:26:53Z",
  pagination_id: "1"
};

export const exampleFile = {
  id: "1",
  created_at: "2026-03-14T09:26:53Z",
  kind: "other",
  type: "com.example.upload",
  name: "hello.txt",
  mime_type: "text/plain; charset=utf-8",
  size: 12,
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
  derived_files: {}
};

export const examplePresence = {
  id: "1",
  username: "ada",
  name: "Ada Lovelace",
  avatar_image: "https://api.example.com/v1/static/default-avatar.png",
  presence: "writing a compiler",
  last_seen_at: "2026-03-14T09:26:53Z"
};

export const exampleStats = {
  clients: {
    created: 1,
    public: 1
  },
  days: 1,
  files: {
    created: 0
  },
  messages: {
    created: 0
  },
  polls: {
    created: 0
  },
  posts: {
    created: 0
  },
  users: {
    active: {
      "2026-11-24": 1
    },
    created: 2,
    disabled: 0,
    present: 0
  }
};

/** The entities of the text processor example; the result carries them flat and under `entities`. */
const exampleEntities = {
  links: [
    {
      pos: 17,
      len: 19,
      text: "https://example.com",
      url: "https://example.com"
    }
  ],
  mentions: [
    {
      pos: 6,
      len: 5,
      text: "alan",
      id: "2"
    }
  ],
  tags: [
    {
      pos: 37,
      len: 5,
      text: "news"
    }
  ]
};

export const exampleTextResult = {
  text: "Hello @alan, see https://example.com #news",
  html: "<span itemscope itemtype=\"https://schema.example.io/Post\">Hello <span data-mention-id=\"2\" data-mention-name=\"alan\" itemprop=\"mention\">@alan</span>, see <a href=\"https://example.com\">https://example.com</a> <span data-tag-name=\"news\" itemprop=\"tag\">#news</span></span>",
  entities: exampleEntities,
  ...exampleEntities,
};

export const exampleOperation = {
  id: "514406d5-63e0-4de0-887d-4d5ebed825f4",
  type: "file_delete",
  status: "running",
  created_at: "2026-03-14T09:26:53Z"
};

export const exampleCreatedApp = {
  id: "1",
  name: "Photo Box",
  url: "https://photobox.example",
  client_id: "pbx_3Fq9LwZt7XkR2mNv",
  client_secret: "example-client-secret-shown-once",
  password_grant_secret: "example-password-grant-secret-shown-once"
};
