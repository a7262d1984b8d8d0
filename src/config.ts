/**
 * The limits of api.md "Limits". GET /sys/config reports exactly these values, and every check in
 * the code reads them from here, so the two cannot drift apart.
 */
export const LIMITS = {
  file: { audio_max_size_bytes: 52_428_800, max_size_bytes: 104_857_600 },
  message: { max_length: 2048 },
  post: { max_length: 256, seconds_between_duplicates: 60, seconds_for_revision: 300 },
  rate_limit: {
    anonymous: { reads: 40, read_reset_seconds: 60 },
    authorized: { reads: 5000, read_reset_seconds: 3600, writes: 20, write_reset_seconds: 60 },
    seconds_banned: 600,
  },
  raw: { max_length: 8192 },
  user: { description_max_length: 256, name_max_length: 50, presence_max_length: 100, username_max_length: 20 },
} as const;

/**
 * Home timelines fanned out on write (stores/home-timeline.ts, docs/contract-choices/posts-and-graph.md, "Home timelines"). An author
 * with more followers than `fanoutMaxFollowers`, or more posts than `backfillMaxPosts` when someone
 * follows them, becomes a merged author (for good): their posts are not copied to followers, and
 * each home timeline page reads, per merged author it follows, an index seek and their posts within
 * the page's span (at most `count + 1`). So a post writes at most fanoutMaxFollowers + 1 rows and a
 * follow at most about backfillMaxPosts: kept low because every written row costs the one primary
 * (D1 serialises writes), while a merged author's few rows per read can go to read replicas.
 * Migration home_timelines (0015 on D1, 0012 on Postgres) backfilled existing data with 5,000 for
 * both; authors past the lower thresholds become merged on their next follow.
 */
export const HOME_TIMELINES = { fanoutMaxFollowers: 500, backfillMaxPosts: 1_000 } as const;

/** Further limits the contract names outside /sys/config. */
export const MORE_LIMITS = {
  appStreamsPerApp: 5,
  streamKeyMaxLength: 32,
  pollsReturned: 100,
  filesReturned: 200,
  postsReturned: 200,
  markersPerRequest: 10,
  derivedFilesPerFile: 10,
  fileNameMaxLength: 256,
  derivedFileNameMaxLength: 255,
  presenceLifetimeSeconds: 15 * 60,
  subscriptionsPerConnection: 16,
  connectionsPerStreamKey: 2,
  /** Open user stream sockets per access token (a further upgrade: 429). */
  userStreamSocketsPerToken: 10,
  streamIdleSeconds: 60,
  /** Storage quota per user, reported in GET /token `storage`. */
  storageQuotaBytes: 10 * 1024 * 1024 * 1024,
  /** Nesting of a JSON body (or form value parsed as JSON, e.g. raw): deeper is a 400. */
  jsonDepth: 32,
  /**
   * Distinct `@name`s one text (post, message, profile description, /text/process) may hold, and
   * tags and links: each mention is looked up and notified, each tag and link is a search row.
   */
  mentionsPerText: 100,
  tagsPerText: 100,
  linksPerText: 100,
  /**
   * A text as sent may be this many times its counted limit (markdown link targets are not
   * counted, but processing costs work in every character sent): longer is a 400 before processing.
   */
  sentTextFactor: 4,
  /** Ids (or @usernames) one `ids=` list may name; at most the first 200 (100 polls) found are returned. */
  idsPerRequest: 1000,
} as const;

/**
 * File content URLs (src/services/file-urls.ts): signed, not stored, so their lifetime costs
 * nothing. The reference service's URLs "expire in years"; each file's URLs run in periods of
 * this length from the file's (or derived file's) creation.
 */
export const FILE_URLS = {
  lifetimeSeconds: 2 * 365 * 86_400,
  /** Cache-Control max-age of served content at most: a deleted file's bytes leave browser caches within a day. */
  cacheMaxAgeSeconds: 86_400,
  /** Bytes of the HMAC-SHA256 kept in a URL (128 bits, 22 base64url characters). */
  signatureBytes: 16,
} as const;

/** Raw replacement values (`+io.example.core.file`, `+io.example.core.poll`; src/services/raw-replacements.ts). */
export const RAW_REPLACEMENTS = {
  /** At most this many in one write's raw: each becomes a larger object than the client sent. */
  perWrite: 20,
  /** A file URL put into raw (immutable on posts and messages) stays valid at least this long. */
  urlMinRemainingSeconds: 365 * 86_400,
} as const;

/** `Idempotency-Key` on creating requests (src/middleware/idempotency.ts). */
export const IDEMPOTENCY = {
  /** How long a key is remembered: a retry within it replays the first response. */
  windowSeconds: 24 * 60 * 60,
  keyMaxLength: 255,
  /** A claimed key without a result is reported as "in progress" this long, "interrupted" after. */
  runningSeconds: 5 * 60,
  /** Responses larger than this are not kept (a retry is then told the request completed). */
  maxStoredResponseBytes: 1024 * 1024,
} as const;

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Request body limits, enforced while the body streams in (src/http/body-limit.ts): a declared
 * Content-Length over the limit is a 413 before anything is read, an undeclared one is counted.
 */
export const BODY_LIMITS = {
  /**
   * JSON (and form) bodies: the largest legitimate one is a message (2048 characters) with its
   * `raw` (8192 bytes) or a channel with three 200-user ACL lists and `raw`, even fully
   * `\u`-escaped. Megabytes are never needed.
   */
  json: 128 * KiB,
  /** POST /text/process: one post or message text (2048 characters at most, escaped) and flags. */
  textProcess: 32 * KiB,
  /** Room for the non-file parts of a multipart upload (fields, `raw`, part headers). */
  multipartOverhead: 64 * KiB,
  /** File uploads: the file limit plus the multipart overhead. */
  upload: LIMITS.file.max_size_bytes + 64 * KiB,
  /** A body that sends nothing for this long is refused (a stalled or truncated upload). */
  idleSeconds: 10,
} as const;

/** How uploads are written to R2 (src/services/r2-writer.ts) and read back for media information. */
export const UPLOAD_STREAMING = {
  /** Multipart-upload part size (R2: at least 5 MiB, all but the last the same size); also the in-memory buffer. */
  partBytes: 8 * MiB,
  /** The first bytes of an upload kept in memory for type detection and image dimensions. */
  headBytes: 1 * MiB,
  /** How far into an image its dimensions are looked for when the head is not enough. */
  imageProbeBytes: 16 * MiB,
  /** Largest MP4 `moov` box read for durations and track sizes. */
  mp4MoovMaxBytes: 16 * MiB,
} as const;

/** Poll rules (api.md / decisions §4 and the public service's poll lifecycle). */
export const POLL_LIMITS = {
  promptMaxLength: 256,
  optionMaxLength: 64,
  minOptions: 2,
  maxOptions: 10,
  typeMaxLength: 100,
  /** `duration` in minutes: 1 minute to 2 weeks; `closed_at` likewise from now. */
  minDurationMinutes: 1,
  maxDurationMinutes: 20160,
  /** When neither `duration` nor `closed_at` is given: one day. */
  defaultDurationMinutes: 1440,
} as const;

export const SCOPES = [
  "basic",
  "email",
  "files",
  "follow",
  "messages",
  "public_messages",
  "polls",
  "presence",
  "stream",
  "update_profile",
  "write_post",
] as const;
export type Scope = (typeof SCOPES)[number];
/** Scopes that take the extended form `<scope>:<type>`. */
export const EXTENDABLE_SCOPES: readonly Scope[] = ["messages", "public_messages", "files", "polls"];
