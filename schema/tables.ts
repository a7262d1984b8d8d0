/**
 * The whole data model (D1 / SQLite dialect). Times are unix seconds; ids are integers
 * (rendered as strings by the API). JSON columns hold objects we only ever read whole.
 * Counters on users, posts and channels are kept exact at write time, in the same batch
 * as the write that changes them, so reads never count rows.
 */

import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const createdAt = () => integer("created_at").notNull();
const bool = (name: string) => integer(name, { mode: "boolean" }).notNull().default(false);

export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    username: text("username").notNull(),
    passwordHash: text("password_hash").notNull(),
    name: text("name"),
    email: text("email"),
    type: text("type", { enum: ["human", "feed", "bot"] }).notNull().default("human"),
    locale: text("locale").notNull().default("en_US"),
    timezone: text("timezone").notNull().default("UTC"),
    /** Profile description as processed text: {text, html, entities}. */
    description: text("description", { mode: "json" }),
    descriptionMarkdown: text("description_markdown"),
    /** URL of an uploaded avatar (null: the default image), and its size. */
    avatarUrl: text("avatar_url"),
    avatarWidth: integer("avatar_width"),
    avatarHeight: integer("avatar_height"),
    coverUrl: text("cover_url"),
    coverWidth: integer("cover_width"),
    coverHeight: integer("cover_height"),
    /** The badge the user shows (one they hold), or null. */
    badgeId: integer("badge_id"),
    /** A URL the user proved to own (set through the admin API): `verified` on the User. */
    verifiedUrl: text("verified_url"),
    raw: text("raw", { mode: "json" }),
    isDisabled: bool("is_disabled"),
    createdAt: createdAt(),
    followers: integer("followers").notNull().default(0),
    following: integer("following").notNull().default(0),
    posts: integer("posts").notNull().default(0),
    bookmarks: integer("bookmarks").notNull().default(0),
    clients: integer("clients").notNull().default(0),
    /** Bytes of file content stored; checked against the quota on upload. */
    storageUsed: integer("storage_used").notNull().default(0),
  },
  (t) => [uniqueIndex("users_username").on(t.username)],
);

export const apps = sqliteTable(
  "apps",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    clientId: text("client_id").notNull(),
    name: text("name").notNull(),
    url: text("url").notNull().default(""),
    clientSecretHash: text("client_secret_hash").notNull(),
    passwordGrantSecretHash: text("password_grant_secret_hash").notNull(),
    ownerId: integer("owner_id"),
    isPublic: integer("is_public", { mode: "boolean" }).notNull().default(true),
    logoUrl: text("logo_url"),
    description: text("description", { mode: "json" }),
    posts: integer("posts").notNull().default(0),
    createdAt: createdAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [uniqueIndex("apps_client_id").on(t.clientId), index("apps_owner").on(t.ownerId)],
);

export const tokens = sqliteTable(
  "tokens",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** SHA-256 of the bearer token, hex. The token itself is never stored. */
    tokenHash: text("token_hash").notNull(),
    appId: integer("app_id").notNull(),
    /** Null for app tokens. */
    userId: integer("user_id"),
    /** Space-separated scopes, `basic` always included. */
    scopes: text("scopes").notNull(),
    createdAt: createdAt(),
    /** Last day (YYYY-MM-DD) the token was used; lets auth record daily activity once a day. */
    lastSeenDay: text("last_seen_day"),
  },
  (t) => [uniqueIndex("tokens_hash").on(t.tokenHash), index("tokens_user").on(t.userId), index("tokens_app").on(t.appId)],
);

/** Scopes a user granted an app: kept when a single token is deleted (api.md, DELETE /token). */
export const authorizations = sqliteTable(
  "authorizations",
  {
    userId: integer("user_id").notNull(),
    appId: integer("app_id").notNull(),
    scopes: text("scopes").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.appId] }), index("authorizations_app").on(t.appId, t.userId)],
);

/** One-time OAuth authorization codes (authorization_code grant). */
export const oauthCodes = sqliteTable("oauth_codes", {
  codeHash: text("code_hash").primaryKey(),
  appId: integer("app_id").notNull(),
  userId: integer("user_id").notNull(),
  scopes: text("scopes").notNull(),
  redirectUri: text("redirect_uri").notNull(),
  expiresAt: integer("expires_at").notNull(),
});

/** Days on which a user made an authenticated call: the `users.active` map of /sys/stats. */
export const userActivity = sqliteTable(
  "user_activity",
  { day: text("day").notNull(), userId: integer("user_id").notNull() },
  (t) => [primaryKey({ columns: [t.day, t.userId] })],
);

/**
 * `Idempotency-Key`s of creating requests (src/middleware/idempotency.ts), per caller (`scope`:
 * `user:<id>` or `app:<id>`). A row is claimed before the handler runs (`status` null) and holds
 * the response once it completed; rows older than the window are deleted as the caller claims
 * new ones. `request_hash`: SHA-256 of method, path and query; `body_hash`: of the body, set on
 * completion.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    bodyHash: text("body_hash"),
    status: integer("status"),
    responseType: text("response_type"),
    responseBody: text("response_body"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index("idempotency_keys_created").on(t.createdAt)],
);

export const posts = sqliteTable(
  "posts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id").notNull(),
    appId: integer("app_id").notNull(),
    threadId: integer("thread_id").notNull(),
    replyTo: integer("reply_to"),
    repostOf: integer("repost_of"),
    text: text("text"),
    html: text("html"),
    entities: text("entities", { mode: "json" }),
    isNsfw: bool("is_nsfw"),
    isDeleted: bool("is_deleted"),
    isRevised: bool("is_revised"),
    raw: text("raw", { mode: "json" }),
    createdAt: createdAt(),
    /** When the current version was written (creation or last revision). */
    revisedAt: integer("revised_at"),
    bookmarks: integer("bookmarks").notNull().default(0),
    replies: integer("replies").notNull().default(0),
    reposts: integer("reposts").notNull().default(0),
    threads: integer("threads").notNull().default(0),
    /** Explore `newcomers`: an original post among the first 50 of its author's, set at insert. */
    isNewcomer: bool("is_newcomer"),
    /** Explore `conversations`: a thread root with a live reply by someone else, kept at reply and delete. */
    isConversation: bool("is_conversation"),
  },
  (t) => [
    index("posts_user").on(t.userId, t.id),
    index("posts_thread").on(t.threadId, t.id),
    index("posts_reply_to").on(t.replyTo),
    index("posts_repost_of").on(t.repostOf, t.userId),
    index("posts_user_text").on(t.userId, t.createdAt),
    /** Recent posts (trending, suggested users): ids grow with time, this finds where a window starts. */
    index("posts_created").on(t.createdAt),
    // The explore streams walk these partial indexes newest first: each holds the posts that meet
    // the stream's stored condition, so a page reads about a page (the query repeats each WHERE).
    index("posts_newcomer").on(t.id).where(sql`is_newcomer = 1`),
    index("posts_conversation").on(t.id).where(sql`is_conversation = 1`),
    index("posts_popular").on(t.id).where(sql`replies + reposts + bookmarks >= 3`),
    index("posts_unanswered").on(t.id).where(sql`replies = 0 and reposts = 0 and bookmarks = 0`),
    index("posts_256").on(t.id).where(sql`length(text) = 256`),
  ],
);

/**
 * Revisions and deletions of posts (reposts' removals too: their rows are gone), for polling
 * clients' `meta.revised_ids` / `meta.deleted_ids`. `mark` is the newest post id when the change
 * was made: a poll with `since_id` S missed the changes with mark >= S (made after post S was).
 */
export const postChanges = sqliteTable(
  "post_changes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    postId: integer("post_id").notNull(),
    userId: integer("user_id").notNull(),
    threadId: integer("thread_id").notNull(),
    isRepost: bool("is_repost"),
    isDeletion: bool("is_deletion"),
    mark: integer("mark").notNull(),
  },
  (t) => [index("post_changes_mark").on(t.mark)],
);

/** Earlier versions of a post; `revision` counts from 0. */
export const postRevisions = sqliteTable(
  "post_revisions",
  {
    postId: integer("post_id").notNull(),
    revision: integer("revision").notNull(),
    text: text("text"),
    html: text("html"),
    entities: text("entities", { mode: "json" }),
    isNsfw: bool("is_nsfw"),
    raw: text("raw", { mode: "json" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.postId, t.revision] })],
);

/** Mentions of users in posts, for /users/me/mentions. */
export const postMentions = sqliteTable(
  "post_mentions",
  { postId: integer("post_id").notNull(), userId: integer("user_id").notNull() },
  (t) => [primaryKey({ columns: [t.userId, t.postId] })],
);

/**
 * Home timelines fanned out on write: one row per post per user whose /posts/streams/me shows it
 * (the author, and each follower unless the author is in `merged_authors`). Written with the post,
 * backfilled on follow, cleared on unfollow; the list's other rules are applied when it is read.
 */
export const homeItems = sqliteTable(
  "home_items",
  { userId: integer("user_id").notNull(), postId: integer("post_id").notNull() },
  (t) => [primaryKey({ columns: [t.userId, t.postId] })],
);

/**
 * Authors whose posts are not fanned out to followers (too many followers, or too many posts to
 * backfill on a follow): home timelines merge their posts at read time. Never removed: an author
 * leaves it only with a backfill of every follower, which nothing does.
 */
export const mergedAuthors = sqliteTable("merged_authors", { userId: integer("user_id").primaryKey() });

/** Bookmarks; `id` orders a user's bookmarks (and pages them), newest first. */
export const bookmarks = sqliteTable(
  "bookmarks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id").notNull(),
    postId: integer("post_id").notNull(),
    /** Shown only to the user who bookmarked (up to 128 characters). */
    note: text("note"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("bookmarks_user_post").on(t.userId, t.postId),
    index("bookmarks_user").on(t.userId, t.id),
    index("bookmarks_post").on(t.postId, t.id),
  ],
);

/** Follows; `id` orders following and follower lists by when the follow happened. */
export const follows = sqliteTable(
  "follows",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    followerId: integer("follower_id").notNull(),
    followedId: integer("followed_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("follows_pair").on(t.followerId, t.followedId),
    index("follows_follower").on(t.followerId, t.id),
    index("follows_followed").on(t.followedId, t.id),
  ],
);

export const userMutes = sqliteTable(
  "user_mutes",
  { userId: integer("user_id").notNull(), mutedId: integer("muted_id").notNull(), createdAt: createdAt() },
  (t) => [primaryKey({ columns: [t.userId, t.mutedId] })],
);

export const userBlocks = sqliteTable(
  "user_blocks",
  { userId: integer("user_id").notNull(), blockedId: integer("blocked_id").notNull(), createdAt: createdAt() },
  (t) => [primaryKey({ columns: [t.userId, t.blockedId] }), index("user_blocks_blocked").on(t.blockedId)],
);

export const channels = sqliteTable(
  "channels",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    type: text("type").notNull(),
    ownerId: integer("owner_id").notNull(),
    appId: integer("app_id").notNull(),
    /** Sorted participant ids for private-message channels, so the same group reuses one channel. */
    pmKey: text("pm_key"),
    readPublic: bool("read_public"),
    readAnyUser: bool("read_any_user"),
    writeAnyUser: bool("write_any_user"),
    readImmutable: bool("read_immutable"),
    writeImmutable: bool("write_immutable"),
    fullImmutable: bool("full_immutable"),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    raw: text("raw", { mode: "json" }),
    createdAt: createdAt(),
    messages: integer("messages").notNull().default(0),
    subscribers: integer("subscribers").notNull().default(0),
    recentMessageId: integer("recent_message_id"),
  },
  (t) => [uniqueIndex("channels_pm_key").on(t.pmKey), index("channels_owner").on(t.ownerId),
    index("channels_type").on(t.type),
    // The channel explore streams (GET /channels/streams/explore/{slug}) walk public channels by
    // newest message (`conversations`) or by id (`new`): a page reads about a page of rows.
    index("channels_public_activity").on(t.readPublic, t.recentMessageId),
    index("channels_public_id").on(t.readPublic, t.id),
  ],
);

/** ACL membership: level is 'full', 'write' or 'read' (the owner is implicit). */
export const channelAcl = sqliteTable(
  "channel_acl",
  {
    channelId: integer("channel_id").notNull(),
    userId: integer("user_id").notNull(),
    level: text("level", { enum: ["full", "write", "read"] }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.level, t.userId] }), index("channel_acl_user").on(t.userId, t.channelId)],
);

export const subscriptions = sqliteTable(
  "subscriptions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    channelId: integer("channel_id").notNull(),
    userId: integer("user_id").notNull(),
    createdAt: createdAt(),
    /** The channel's activity key (stores/channel-sql activityKeySql), kept by the message writes: the inbox's order. */
    activity: integer("activity").notNull().default(0),
    /** The channel is unread by the user (stores/channel-sql unreadFlagSql), kept by message and marker writes. */
    isUnread: bool("is_unread"),
  },
  (t) => [
    uniqueIndex("subscriptions_user_channel").on(t.userId, t.channelId),
    index("subscriptions_channel").on(t.channelId),
    /** The inbox: a user's subscriptions, most recently active first, walked a page at a time. */
    index("subscriptions_user_activity").on(t.userId, t.activity, t.channelId),
    /** The inbox's unread counts: a user's unread subscriptions only. */
    index("subscriptions_user_unread").on(t.userId, t.channelId).where(sql`is_unread = 1`),
  ],
);

export const channelMutes = sqliteTable(
  "channel_mutes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    channelId: integer("channel_id").notNull(),
    userId: integer("user_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("channel_mutes_user_channel").on(t.userId, t.channelId), index("channel_mutes_user").on(t.userId, t.id, t.channelId)],
);

export const messages = sqliteTable(
  "messages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    channelId: integer("channel_id").notNull(),
    userId: integer("user_id").notNull(),
    appId: integer("app_id").notNull(),
    threadId: integer("thread_id").notNull(),
    replyTo: integer("reply_to"),
    text: text("text"),
    html: text("html"),
    entities: text("entities", { mode: "json" }),
    isNsfw: bool("is_nsfw"),
    isSticky: bool("is_sticky"),
    isDeleted: bool("is_deleted"),
    /** Who deleted the message when it was not its author (a channel moderator); null otherwise. */
    deletedBy: integer("deleted_by"),
    /** Poll attached through raw `io.example.core.poll`, for search's poll_id filter. */
    pollId: integer("poll_id"),
    raw: text("raw", { mode: "json" }),
    createdAt: createdAt(),
    replies: integer("replies").notNull().default(0),
    /** The newest message id when the message was deleted (as post_changes.mark): polls' `meta.deleted_ids`. */
    deletedMark: integer("deleted_mark"),
  },
  (t) => [
    index("messages_deleted").on(t.channelId, t.deletedMark).where(sql`deleted_mark is not null`),
    index("messages_channel").on(t.channelId, t.id),
    index("messages_thread").on(t.threadId, t.id),
    index("messages_user").on(t.userId, t.id),
    index("messages_reply_to").on(t.replyTo),
    index("messages_sticky").on(t.channelId, t.isSticky, t.id),
  ],
);

/** Search facets of messages, written with the message (one row per value). */
export const messageFacets = sqliteTable(
  "message_facets",
  {
    messageId: integer("message_id").notNull(),
    /** mention | leading_mention | tag | url | url_domain | raw_type | file | file_kind */
    facet: text("facet").notNull(),
    value: text("value").notNull(),
  },
  (t) => [primaryKey({ columns: [t.facet, t.value, t.messageId] }), index("message_facets_message").on(t.messageId)],
);

export const reports = sqliteTable(
  "reports",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    channelId: integer("channel_id").notNull(),
    messageId: integer("message_id").notNull(),
    reporterId: integer("reporter_id").notNull(),
    reason: text("reason", { enum: ["account_type", "nsfw", "soliciting", "user_abuse"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("reports_message").on(t.messageId)],
);

/** Reports of posts (POST /posts/{id}/report): the same reporter, post and reason are stored once. */
export const postReports = sqliteTable(
  "post_reports",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    postId: integer("post_id").notNull(),
    reporterId: integer("reporter_id").notNull(),
    reason: text("reason", { enum: ["account_type", "nsfw", "soliciting", "user_abuse"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("post_reports_once").on(t.postId, t.reporterId, t.reason)],
);

/**
 * Search facets of posts, written with the post (one row per value): what post search filters
 * on and what the tag and explore streams walk (the primary key is their index, newest post last).
 */
export const postFacets = sqliteTable(
  "post_facets",
  {
    postId: integer("post_id").notNull(),
    /** mention | leading_mention | copy_mention | tag | url | url_domain | raw_type | file | file_kind | poll | oembed */
    facet: text("facet").notNull(),
    value: text("value").notNull(),
  },
  (t) => [primaryKey({ columns: [t.facet, t.value, t.postId] }), index("post_facets_post").on(t.postId, t.facet)],
);

/** Badges users can earn (created through the admin API). */
export const badges = sqliteTable("badges", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull(),
  description: text("description").notNull().default(""),
  createdAt: createdAt(),
});

/** Badges awarded to users. */
export const userBadges = sqliteTable(
  "user_badges",
  { userId: integer("user_id").notNull(), badgeId: integer("badge_id").notNull(), awardedAt: integer("awarded_at").notNull() },
  (t) => [primaryKey({ columns: [t.userId, t.badgeId] }), index("user_badges_awarded").on(t.userId, t.awardedAt)],
);

export const polls = sqliteTable(
  "polls",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id").notNull(),
    appId: integer("app_id").notNull(),
    type: text("type").notNull(),
    prompt: text("prompt").notNull(),
    /** Processed prompt {text, html, entities}. */
    content: text("content", { mode: "json" }),
    isAnonymous: bool("is_anonymous"),
    isPublic: bool("is_public"),
    maxOptions: integer("max_options").notNull().default(1),
    pollToken: text("poll_token").notNull(),
    isDeleted: bool("is_deleted"),
    raw: text("raw", { mode: "json" }),
    createdAt: createdAt(),
    closedAt: integer("closed_at").notNull(),
  },
  (t) => [index("polls_user").on(t.userId, t.id)],
);

/** Search facets of polls from their raw (GET /polls/search `raw_types`, `file_id`), written with the poll. */
export const pollFacets = sqliteTable(
  "poll_facets",
  {
    pollId: integer("poll_id").notNull(),
    /** raw_type | file */
    facet: text("facet").notNull(),
    value: text("value").notNull(),
  },
  (t) => [primaryKey({ columns: [t.facet, t.value, t.pollId] }), index("poll_facets_poll").on(t.pollId)],
);

export const pollOptions = sqliteTable(
  "poll_options",
  {
    pollId: integer("poll_id").notNull(),
    position: integer("position").notNull(),
    text: text("text").notNull(),
    respondents: integer("respondents").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.pollId, t.position] })],
);

export const pollResponses = sqliteTable(
  "poll_responses",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    pollId: integer("poll_id").notNull(),
    userId: integer("user_id").notNull(),
    /** JSON array of chosen positions (empty list = response cleared). */
    positions: text("positions", { mode: "json" }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("poll_responses_poll_user").on(t.pollId, t.userId), index("poll_responses_user").on(t.userId, t.id)],
);

export const files = sqliteTable(
  "files",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id").notNull(),
    appId: integer("app_id").notNull(),
    kind: text("kind", { enum: ["audio", "video", "image", "other"] }).notNull().default("other"),
    type: text("type").notNull(),
    name: text("name").notNull(),
    mimeType: text("mime_type"),
    size: integer("size").notNull().default(0),
    sha256: text("sha256"),
    isComplete: bool("is_complete"),
    isPublic: bool("is_public"),
    isDeleted: bool("is_deleted"),
    /** Object key of the content in the R2 bucket. */
    storageKey: text("storage_key"),
    fileToken: text("file_token").notNull(),
    fileTokenRead: text("file_token_read").notNull(),
    /** audio_info / image_info / video_info, whichever applies. */
    mediaInfo: text("media_info", { mode: "json" }),
    raw: text("raw", { mode: "json" }),
    createdAt: createdAt(),
    /** Unused since content URLs are signed (src/services/file-url-signing.ts); kept so a Worker of before that still runs while the migration is applied. */
    urlToken: text("url_token"),
    urlExpiresAt: integer("url_expires_at"),
    /** When the server started making the reserved derived images (src/services/image-derivatives.ts); null when none are being made. */
    derivedPendingSince: integer("derived_pending_since"),
  },
  (t) => [index("files_user").on(t.userId, t.id)],
);

export const derivedFiles = sqliteTable(
  "derived_files",
  {
    fileId: integer("file_id").notNull(),
    key: text("key").notNull(),
    name: text("name").notNull(),
    mimeType: text("mime_type"),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    storageKey: text("storage_key").notNull(),
    imageInfo: text("image_info", { mode: "json" }),
    createdAt: createdAt(),
    /** Unused (see files.urlToken). */
    urlToken: text("url_token"),
    urlExpiresAt: integer("url_expires_at"),
  },
  (t) => [primaryKey({ columns: [t.fileId, t.key] })],
);

export const markers = sqliteTable(
  "markers",
  {
    userId: integer("user_id").notNull(),
    name: text("name").notNull(),
    position: integer("position").notNull(),
    lastReadId: integer("last_read_id").notNull(),
    percentage: integer("percentage").notNull().default(0),
    version: text("version").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.name] })],
);

export const presence = sqliteTable(
  "presence",
  {
    userId: integer("user_id").primaryKey(),
    presence: text("presence").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("presence_expires").on(t.expiresAt)],
);

/**
 * Per-channel presence (PUT /users/me/presence/channels/{id}): like `presence`, one row per user
 * and channel; a status is live while `expires_at` is in the future, `offline` keeps the row with
 * `expires_at = 0` so `last_seen_at` stays known.
 */
export const channelPresence = sqliteTable(
  "channel_presence",
  {
    channelId: integer("channel_id").notNull(),
    userId: integer("user_id").notNull(),
    presence: text("presence").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.userId] }), index("channel_presence_channel_expires").on(t.channelId, t.expiresAt)],
);

/**
 * Change counters of the presence list, one per shard of users (user id % 16), bumped by database
 * triggers on every write to `presence` and on renames, avatar changes and disabling of users
 * (migration presence_versions). A reader that sees the same sum in the same snapshot as a list
 * it cached knows nothing in that list changed; shards keep concurrent Postgres writers of
 * different users from contending for one row.
 */
export const presenceVersions = sqliteTable("presence_versions", {
  shard: integer("shard").primaryKey(),
  version: integer("version").notNull().default(0),
});

/**
 * The key that signs file content URLs when no FILE_URL_SECRET is configured: one row (id 1),
 * generated by the first isolate that needs it (INSERT … ON CONFLICT DO NOTHING, then read back),
 * so a fresh install works with nothing to set (src/services/file-url-signing.ts).
 */
export const fileUrlSecret = sqliteTable("file_url_secret", {
  id: integer("id").primaryKey(),
  secret: text("secret").notNull(),
  createdAt: createdAt(),
});

export const appStreams = sqliteTable(
  "app_streams",
  {
    appId: integer("app_id").notNull(),
    key: text("key").notNull(),
    objectTypes: text("object_types", { mode: "json" }).notNull().$type<string[]>(),
    createdAt: createdAt(),
    /** Creation order among the app's streams (several can share a second). */
    position: integer("position").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.appId, t.key] })],
);

/**
 * Live user-stream subscriptions (decisions §8): the routing index that events are matched
 * against, so delivery never looks at connections that cannot want the event. A row lives as
 * long as its connection; the user's stream Durable Object writes and removes them.
 */
export const streamSubscriptions = sqliteTable(
  "stream_subscriptions",
  {
    /** The subscription_id clients see. */
    id: text("id").primaryKey(),
    connectionId: text("connection_id").notNull(),
    userId: integer("user_id").notNull(),
    /** App of the token that opened the connection (token events go to that app only). */
    appId: integer("app_id").notNull(),
    /** The token that opened the connection: delivery checks it still exists (null on rows made before it was recorded). */
    tokenId: integer("token_id"),
    /** One of STREAM_ENDPOINTS (src/stores/stream-subscriptions.ts) */
    endpoint: text("endpoint").notNull(),
    channelId: integer("channel_id"),
    /** The post of a `/posts/{id}/thread` subscription. */
    targetId: integer("target_id"),
    /** Routing options of the subscription (bits, src/stores/stream-subscriptions.ts: SUBSCRIPTION_FLAGS). */
    flags: integer("flags").notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    index("stream_subscriptions_endpoint_user").on(t.endpoint, t.userId),
    index("stream_subscriptions_channel").on(t.channelId),
    index("stream_subscriptions_connection").on(t.connectionId),
  ],
);

export const operations = sqliteTable(
  "operations",
  {
    id: text("id").primaryKey(),
    type: text("type", { enum: ["file_create", "file_delete"] }).notNull(),
    status: text("status", { enum: ["running", "dead", "completed"] }).notNull(),
    userId: integer("user_id"),
    detail: text("detail", { mode: "json" }),
    createdAt: createdAt(),
    endedAt: integer("ended_at"),
  },
);

/**
 * Interactions are merged at write time: an event joins the newest group for the same
 * (user, action, object) while it is within 24 hours of the group's latest event, so a
 * page read is an indexed range scan that does not grow with the user's history.
 */
export const interactionGroups = sqliteTable(
  "interaction_groups",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** The user the interaction is about (the post's author, the followed user, the poll's creator). */
    userId: integer("user_id").notNull(),
    action: text("action", { enum: ["bookmark", "reply", "repost", "follow", "poll_response"] }).notNull(),
    objectId: integer("object_id").notNull(),
    /** Id of the group's most recent event: the item's pagination_id. */
    latestEventId: integer("latest_event_id").notNull(),
    latestAt: integer("latest_at").notNull(),
  },
  (t) => [
    index("interaction_groups_page").on(t.userId, t.latestEventId),
    /** Pages of some actions only (`filters`/`exclude`): one bounded range scan per action. */
    index("interaction_groups_action_page").on(t.userId, t.action, t.latestEventId),
    index("interaction_groups_object").on(t.userId, t.action, t.objectId, t.latestAt),
  ],
);

export const interactionEvents = sqliteTable(
  "interaction_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    groupId: integer("group_id").notNull(),
    actorId: integer("actor_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    // Covering for the actors of a page: a group's newest events and who they are.
    index("interaction_events_group").on(t.groupId, t.id, t.actorId),
    /** One event per actor and group (its latest): a group's newest events are its newest actors. */
    uniqueIndex("interaction_events_actor").on(t.groupId, t.actorId),
  ],
);


/**
 * The transactional outbox of stream events (docs/streams.md, "Outbox and relay"): a row is written in
 * the same batch/transaction as the data that causes the event, so a committed write always has
 * its event and a failed one has none. `id` is the event's global sequence (commit order: D1
 * serializes writers; on Postgres the insert takes a transaction-scoped advisory lock). `ref`
 * says what to render (type, object id, is_deleted, route) when no rendered `payload` reached
 * the relay (src/objects/stream-relay.ts), which delivers rows in order and trims them.
 */
export const streamOutbox = sqliteTable("stream_outbox", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  type: text("type").notNull(),
  ref: text("ref"),
  payload: text("payload"),
  createdAt: createdAt(),
});
