/** Schema spec: Users, apps and their tokens, the social graph between users, badges and markers. (See ./columns.ts for the column kinds.) */

import { table, id, int8, int, text, flag, json, createdAt, counter, index, unique } from "./columns";

export const users = table(
  "users",
  {
    id: id(),
    username: text().notNull(),
    passwordHash: text().notNull(),
    name: text(),
    email: text(),
    type: text().enum(["human", "feed", "bot"]).notNull().default("human"),
    locale: text().notNull().default("en_US"),
    timezone: text().notNull().default("UTC"),
    description: json().doc("Profile description as processed text: {text, html, entities}."),
    descriptionMarkdown: text(),
    avatarUrl: text().doc("URL of an uploaded avatar (null: the default image), and its size."),
    avatarWidth: int(),
    avatarHeight: int(),
    coverUrl: text(),
    coverWidth: int(),
    coverHeight: int(),
    badgeId: int8().doc("The badge the user shows (one they hold), or null."),
    verifiedUrl: text().doc("A URL the user proved to own (set through the admin API): `verified` on the User."),
    raw: json(),
    isDisabled: flag(),
    createdAt: createdAt(),
    followers: counter(),
    following: counter(),
    posts: counter(),
    bookmarks: counter(),
    clients: counter(),
    storageUsed: counter().doc("Bytes of file content stored; checked against the quota on upload."),
  },
  {
    indexes: [unique("users_username", ["username"])],
  },
);

export const apps = table(
  "apps",
  {
    id: id(),
    clientId: text().notNull(),
    name: text().notNull(),
    url: text().notNull().default(""),
    clientSecretHash: text().notNull(),
    passwordGrantSecretHash: text().notNull(),
    ownerId: int8(),
    isPublic: flag().default(true),
    logoUrl: text(),
    description: json(),
    posts: counter(),
    createdAt: createdAt(),
    deletedAt: int8(),
  },
  {
    indexes: [unique("apps_client_id", ["clientId"]), index("apps_owner", ["ownerId"])],
  },
);

export const tokens = table(
  "tokens",
  {
    id: id(),
    tokenHash: text().notNull().doc("SHA-256 of the bearer token, hex. The token itself is never stored."),
    appId: int8().notNull(),
    userId: int8().doc("Null for app tokens."),
    scopes: text().notNull().doc("Space-separated scopes, `basic` always included."),
    createdAt: createdAt(),
    lastSeenDay: text().doc("Last day (YYYY-MM-DD) the token was used; lets auth record daily activity once a day."),
  },
  {
    indexes: [unique("tokens_hash", ["tokenHash"]), index("tokens_user", ["userId"]), index("tokens_app", ["appId"])],
  },
);

export const authorizations = table(
  "authorizations",
  {
    userId: int8().notNull(),
    appId: int8().notNull(),
    scopes: text().notNull(),
    createdAt: createdAt(),
  },
  {
    primaryKey: ["userId", "appId"],
    indexes: [index("authorizations_app", ["appId", "userId"])],
    doc: "Scopes a user granted an app: kept when a single token is deleted (api.md, DELETE /token).",
  },
);

export const oauthCodes = table(
  "oauth_codes",
  {
    codeHash: text().primaryKey(),
    appId: int8().notNull(),
    userId: int8().notNull(),
    scopes: text().notNull(),
    redirectUri: text().notNull(),
    expiresAt: int8().notNull(),
  },
  {
    doc: "One-time OAuth authorization codes (authorization_code grant).",
  },
);

export const userActivity = table(
  "user_activity",
  {
    day: text().notNull(),
    userId: int8().notNull(),
  },
  {
    primaryKey: ["day", "userId"],
    doc: "Days on which a user made an authenticated call: the `users.active` map of /sys/stats.",
  },
);

export const idempotencyKeys = table(
  "idempotency_keys",
  {
    scope: text().notNull(),
    key: text().notNull(),
    requestHash: text().notNull(),
    bodyHash: text(),
    status: int(),
    responseType: text(),
    responseBody: text(),
    createdAt: createdAt(),
  },
  {
    primaryKey: ["scope", "key"],
    indexes: [index("idempotency_keys_created", ["createdAt"])],
    doc: "`Idempotency-Key`s of creating requests (src/middleware/idempotency.ts), per caller (`scope`: `user:<id>` or `app:<id>`). A row is claimed before the handler runs (`status` null) and holds the response once it completed; rows older than the window are deleted as the caller claims new ones. `request_hash`: SHA-256 of method, path and query; `body_hash`: of the body, set on completion.",
  },
);

export const follows = table(
  "follows",
  {
    id: id(),
    followerId: int8().notNull(),
    followedId: int8().notNull(),
    createdAt: createdAt(),
  },
  {
    indexes: [
      unique("follows_pair", ["followerId", "followedId"]),
      index("follows_follower", ["followerId", "id"]),
      index("follows_followed", ["followedId", "id"]),
    ],
    doc: "Follows; `id` orders following and follower lists by when the follow happened.",
  },
);

export const userMutes = table(
  "user_mutes",
  {
    userId: int8().notNull(),
    mutedId: int8().notNull(),
    createdAt: createdAt(),
  },
  {
    primaryKey: ["userId", "mutedId"],
  },
);

export const userBlocks = table(
  "user_blocks",
  {
    userId: int8().notNull(),
    blockedId: int8().notNull(),
    createdAt: createdAt(),
  },
  {
    primaryKey: ["userId", "blockedId"],
    indexes: [index("user_blocks_blocked", ["blockedId"])],
  },
);

export const badges = table(
  "badges",
  {
    id: id(),
    name: text().notNull(),
    description: text().notNull().default(""),
    createdAt: createdAt(),
  },
  {
    doc: "Badges users can earn (created through the admin API).",
  },
);

export const userBadges = table(
  "user_badges",
  {
    userId: int8().notNull(),
    badgeId: int8().notNull(),
    awardedAt: int8().notNull(),
  },
  {
    primaryKey: ["userId", "badgeId"],
    indexes: [index("user_badges_awarded", ["userId", "awardedAt"])],
    doc: "Badges awarded to users.",
  },
);

export const markers = table(
  "markers",
  {
    userId: int8().notNull(),
    name: text().notNull(),
    position: int8().notNull(),
    lastReadId: int8().notNull(),
    percentage: int().notNull().default(0),
    version: text().notNull(),
    updatedAt: int8().notNull(),
  },
  {
    primaryKey: ["userId", "name"],
  },
);

export const accountsTables = [
  users,
  apps,
  tokens,
  authorizations,
  oauthCodes,
  userActivity,
  idempotencyKeys,
  follows,
  userMutes,
  userBlocks,
  badges,
  userBadges,
  markers,
];
