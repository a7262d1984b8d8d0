// The mixed benchmark's data set (bench/mix.mjs drives it), straight into the database like
// bench/seed.mjs: users each with their own token, Zipf-skewed follows and authorship, posts with
// replies, reposts, mentions and tags, channel messages, bookmarks, and the interactions all that
// would have produced — with the counters, thread ids, facets and mention rows the API keeps.
import { createHash, randomBytes } from "node:crypto";
import { WORDS } from "./seed.mjs";

// A group keeps one event per actor (unique index interaction_events_actor): a random actor drawn
// twice for one group is dropped, as the API's writes would refresh it instead.
const ONE_EVENT_PER_ACTOR = " ON CONFLICT (group_id, actor_id) DO NOTHING";

export const MIX_SIZES = { users: 1_000, follows: 54_000, posts: 50_000, channels: 50, messages: 30_000, bookmarks: 20_000 };
/** Share of posts that are replies, reposts; of written posts with a mention, a tag. */
const SHARE = { reply: 0.15, repost: 0.1, mention: 0.1, tag: 0.2 };
export const TAGS = [
  "music",
  "chess",
  "coffee",
  "rust",
  "garden",
  "travel",
  "release",
  "football",
  "photo",
  "rain",
  "poem",
  "kernel",
  "cycling",
  "winter",
  "review",
  "novel",
  "piano",
  "city",
  "camera",
  "tennis",
];

// Deterministic: the same data set every run.
// (mulberry32: integer arithmetic, so no precision loss turns it into a short cycle.)
let state = 7;
const rand = () => {
  let t = (state = (state + 0x6d2b79f5) | 0);
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const int = (n) => Math.floor(rand() * n);
const sentence = (n) => Array.from({ length: n }, () => WORDS[int(WORDS.length)]).join(" ");
const q = (s) => (s === null || s === undefined ? "NULL" : `'${String(s).replace(/'/g, "''")}'`);
const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A sampler of ranks 0..n-1 with P(rank k) ∝ 1/(k+1)^s (a Zipf law), by inverse CDF. */
export function zipf(n, s, random = Math.random) {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / (k + 1) ** s;
  return () => {
    const x = random() * sum;
    let lo = 0,
      hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

async function insert(db, table, columns, rows) {
  const PER_STATEMENT = 100,
    PER_BATCH = 20;
  let batch = [];
  for (let i = 0; i < rows.length; i += PER_STATEMENT) {
    const values = rows
      .slice(i, i + PER_STATEMENT)
      .map((r) => `(${r.join(",")})`)
      .join(",");
    batch.push(db.prepare(`INSERT INTO ${table} (${columns.join(",")}) VALUES ${values}${table === "interaction_events" ? ONE_EVENT_PER_ACTOR : ""}`));
    if (batch.length === PER_BATCH) await db.batch(batch), (batch = []);
  }
  if (batch.length) await db.batch(batch);
}

const maxId = async (db, table) => (await db.prepare(`SELECT coalesce(max(id), 0) AS m FROM ${table}`).first()).m;

/**
 * Seeds the mix's data set. Returns what the driver needs: users (id, username, token) in order of
 * popularity (rank 0 is the most followed and most prolific), post ids newest first, the ids of
 * replies (thread roots to read), channel ids by popularity, and the sizes and time taken.
 */
export async function seedMix(db, { appId, now, scope }) {
  const t0 = performance.now();
  const userBase = await maxId(db, "users");
  const users = Array.from({ length: MIX_SIZES.users }, (_, i) => ({
    id: userBase + 1 + i,
    username: `mix_${i}`,
    token: `mix-${i}-${randomBytes(12).toString("hex")}`,
  }));
  const rankOf = zipf(MIX_SIZES.users, 1.0, rand); // popularity: who is followed, who writes, who is mentioned
  const day = new Date(now * 1000).toISOString().slice(0, 10);

  await insert(
    db,
    "users",
    ["id", "username", "password_hash", "name", "type", "created_at"],
    users.map((u, i) => [u.id, q(u.username), q("pbkdf2$1$00$00"), q(`Mix User ${i}`), q("human"), now - 86400 * 60]),
  );
  // Tokens are stored as their SHA-256; last_seen_day today so the first request writes no activity.
  await insert(
    db,
    "tokens",
    ["token_hash", "app_id", "user_id", "scopes", "created_at", "last_seen_day"],
    users.map((u) => [q(createHash("sha256").update(u.token).digest("hex")), appId, u.id, q(scope), now - 86400, q(day)]),
  );
  await insert(
    db,
    "authorizations",
    ["user_id", "app_id", "scopes", "created_at"],
    users.map((u) => [u.id, appId, q(scope), now - 86400]),
  );

  // Follows: each user follows 54 on average (between 5 and ~100), targets drawn by popularity.
  const follows = new Set();
  const followRows = [];
  const followEvents = []; // [followed, follower, at]
  for (let f = 0; followRows.length < MIX_SIZES.follows; f = (f + 1) % MIX_SIZES.users) {
    const follower = f;
    const target = rankOf();
    const key = follower * 100_000 + target;
    if (target === follower || follows.has(key)) continue;
    if (int(100) > 54 + (follower % 47) - 23) continue; // uneven follow counts per user
    follows.add(key);
    const at = now - 86400 * 30 + int(86400 * 29);
    followRows.push([users[follower].id, users[target].id, at]);
    followEvents.push([target, follower, at]);
  }
  await insert(db, "follows", ["follower_id", "followed_id", "created_at"], followRows);

  // Posts, oldest first, one every ~50 s up to now; authors by popularity.
  const postBase = await maxId(db, "posts");
  const posts = []; // {id, author, thread, repostOf}
  const originals = [];
  const postRows = [],
    mentionRows = [],
    facetRows = [];
  const events = []; // [aboutUser, action, objectId, actor, at]
  for (let i = 0; i < MIX_SIZES.posts; i++) {
    const id = postBase + 1 + i;
    const author = rankOf();
    const at = now - (MIX_SIZES.posts - i) * 50;
    const r = rand();
    // Targets of replies and reposts: recent posts more than old ones.
    const target =
      originals.length > 50 ? originals[originals.length - 1 - Math.min(originals.length - 1, Math.floor(Math.abs(Math.log(rand() + 1e-9)) * 300))] : null;
    if (target && r < SHARE.repost && target.author !== author) {
      posts.push({ id, author, thread: id, repostOf: target.id });
      postRows.push([id, users[author].id, appId, id, "NULL", target.id, "NULL", "NULL", "NULL", at, at]);
      events.push([target.author, "repost", target.id, author, at]);
      continue;
    }
    const replyTo = target && r < SHARE.repost + SHARE.reply ? target : null;
    let text = sentence(6 + int(18));
    let html = esc(text);
    const mentions = [],
      tags = [];
    if (rand() < SHARE.mention) {
      const m = users[rankOf()];
      const pos = [...text].length + 1;
      text += ` @${m.username}`;
      html += ` <span data-mention-id="${m.id}" data-mention-name="${m.username}" itemprop="mention">@${m.username}</span>`;
      mentions.push({ pos, len: m.username.length + 1, text: m.username, id: String(m.id) });
      mentionRows.push([id, m.id]);
      facetRows.push([id, q("mention"), q(m.username)]);
    }
    if (rand() < SHARE.tag) {
      const tag = TAGS[Math.min(TAGS.length - 1, Math.floor(Math.abs(Math.log(rand() + 1e-9)) * 4))];
      const pos = [...text].length + 1;
      text += ` #${tag}`;
      html += ` <span data-tag-name="${tag}" itemprop="tag">#${tag}</span>`;
      tags.push({ pos, len: tag.length + 1, text: tag });
      facetRows.push([id, q("tag"), q(tag)]);
    }
    const post = { id, author, thread: replyTo ? replyTo.thread : id, repostOf: null };
    posts.push(post), originals.push(post);
    if (replyTo) events.push([replyTo.author, "reply", replyTo.id, author, at]);
    postRows.push([
      id,
      users[author].id,
      appId,
      post.thread,
      replyTo ? replyTo.id : "NULL",
      "NULL",
      q(text),
      q(`<span itemscope itemtype="https://schema.example.io/Post">${html}</span>`),
      q(JSON.stringify({ links: [], mentions, tags })),
      at,
      at,
    ]);
  }
  await insert(
    db,
    "posts",
    ["id", "user_id", "app_id", "thread_id", "reply_to", "repost_of", "text", "html", "entities", "created_at", "revised_at"],
    postRows,
  );
  await insert(db, "post_mentions", ["post_id", "user_id"], mentionRows);
  await insert(db, "post_facets", ["post_id", "facet", "value"], facetRows);

  // Bookmarks: bookmarkers by popularity of activity, posts mostly recent.
  const bookmarked = new Set();
  const bookmarkRows = [];
  while (bookmarkRows.length < MIX_SIZES.bookmarks) {
    const u = int(MIX_SIZES.users);
    const p = originals[originals.length - 1 - Math.min(originals.length - 1, Math.floor(Math.abs(Math.log(rand() + 1e-9)) * 2000))];
    if (bookmarked.has(u * 1e7 + p.id)) continue;
    bookmarked.add(u * 1e7 + p.id);
    const at = now - int(86400 * 20);
    bookmarkRows.push([users[u].id, p.id, at]);
    events.push([p.author, "bookmark", p.id, u, at]);
  }
  await insert(db, "bookmarks", ["user_id", "post_id", "created_at"], bookmarkRows);

  // Channels (popular ones get most messages) and their messages.
  const channelBase = await maxId(db, "channels");
  const channelIds = Array.from({ length: MIX_SIZES.channels }, (_, i) => channelBase + 1 + i);
  await insert(
    db,
    "channels",
    ["id", "type", "owner_id", "app_id", "read_public", "read_any_user", "write_any_user", "created_at"],
    channelIds.map((id, i) => [id, q("io.example.core.chat"), users[i].id, appId, 1, 1, 1, now - 86400 * 30]),
  );
  const channelOf = zipf(MIX_SIZES.channels, 1.0, rand);
  const messageBase = await maxId(db, "messages");
  const messageRows = [];
  for (let i = 0; i < MIX_SIZES.messages; i++) {
    const id = messageBase + 1 + i;
    const text = sentence(6 + int(24));
    messageRows.push([
      id,
      channelIds[channelOf()],
      users[rankOf()].id,
      appId,
      id,
      q(text),
      q(`<span itemscope itemtype="https://schema.example.io/Message">${esc(text)}</span>`),
      q('{"links":[],"mentions":[],"tags":[]}'),
      now - (MIX_SIZES.messages - i) * 80,
    ]);
  }
  await insert(db, "messages", ["id", "channel_id", "user_id", "app_id", "thread_id", "text", "html", "entities", "created_at"], messageRows);

  // Interactions as the writes above would have merged them: a group per (user, action, object),
  // follows grouped per followed user and day; the group's latest event is its page position.
  for (const [target, follower, at] of followEvents) events.push([target, "follow", users[target].id, follower, at]);
  events.sort((a, b) => a[4] - b[4]);
  const groups = new Map();
  for (const e of events) {
    const key = `${e[0]} ${e[1]} ${e[2]}${e[1] === "follow" ? ` ${Math.floor(e[4] / 86400)}` : ""}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { about: e[0], action: e[1], object: e[2], events: [] }));
    g.events.push(e);
  }
  const groupBase = await maxId(db, "interaction_groups");
  let eventId = await maxId(db, "interaction_events");
  const groupRows = [],
    eventRows = [];
  let gid = groupBase;
  for (const g of [...groups.values()].sort((a, b) => a.events.at(-1)[4] - b.events.at(-1)[4])) {
    gid++;
    for (const e of g.events) eventRows.push([++eventId, gid, users[e[3]].id, e[4]]);
    groupRows.push([gid, users[g.about].id, q(g.action), g.object, eventId, g.events.at(-1)[4]]);
  }
  await insert(db, "interaction_groups", ["id", "user_id", "action", "object_id", "latest_event_id", "latest_at"], groupRows);
  await insert(db, "interaction_events", ["id", "group_id", "actor_id", "created_at"], eventRows);

  // Counters, as the API would have kept them.
  const [u0, u1] = [users[0].id, users.at(-1).id];
  const [p0, p1] = [postBase + 1, postBase + MIX_SIZES.posts];
  await db.batch([
    db.prepare(`UPDATE users SET followers = (SELECT count(*) FROM follows WHERE followed_id = users.id), following = (SELECT count(*) FROM follows WHERE follower_id = users.id),
      posts = (SELECT count(*) FROM posts WHERE user_id = users.id), bookmarks = (SELECT count(*) FROM bookmarks WHERE user_id = users.id) WHERE id BETWEEN ${u0} AND ${u1}`),
    db.prepare(`UPDATE posts SET replies = (SELECT count(*) FROM posts r WHERE r.reply_to = posts.id), reposts = (SELECT count(*) FROM posts r WHERE r.repost_of = posts.id),
      bookmarks = (SELECT count(*) FROM bookmarks b WHERE b.post_id = posts.id) WHERE id BETWEEN ${p0} AND ${p1}`),
    db.prepare(
      `UPDATE channels SET messages = (SELECT count(*) FROM messages m WHERE m.channel_id = channels.id), recent_message_id = (SELECT max(id) FROM messages m WHERE m.channel_id = channels.id), last_message_id = (SELECT max(id) FROM messages m WHERE m.channel_id = channels.id) WHERE id > ${channelBase}`,
    ),
  ]);

  const sizes = {
    users: users.length,
    follows: followRows.length,
    posts: posts.length,
    replies: originals.filter((p) => p.thread !== p.id).length,
    reposts: posts.length - originals.length,
    mentions: mentionRows.length,
    tagged: facetRows.length - mentionRows.length,
    channels: channelIds.length,
    messages: messageRows.length,
    bookmarks: bookmarkRows.length,
    interaction_groups: groupRows.length,
    interaction_events: eventRows.length,
    max_followers: Math.max(...countBy(followEvents.map((e) => e[0]))),
    median_followers: median(countBy(followEvents.map((e) => e[0]))),
  };
  return {
    users: users.map(({ id, username, token }) => ({ id, username, token })),
    postIds: posts.map((p) => p.id).reverse(),
    originalIds: originals.map((p) => p.id).reverse(),
    threadPostIds: originals
      .filter((p) => p.thread !== p.id)
      .map((p) => p.id)
      .reverse(),
    channelIds,
    tags: TAGS,
    sizes,
    seconds: +((performance.now() - t0) / 1000).toFixed(1),
  };
}

function countBy(list) {
  const m = new Map();
  for (const x of list) m.set(x, (m.get(x) ?? 0) + 1);
  return [...m.values()];
}
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
