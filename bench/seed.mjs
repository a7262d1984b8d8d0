// Seeds the benchmark's data set straight into the database (multi-row INSERTs of literal values,
// batched), keeping the invariants the API keeps at write time: counters, thread ids, the message
// search index (D1: FTS5 triggers run on insert; Postgres: a generated column), merged interaction
// groups. `db` is D1 or bench/pg-d1.mjs's D1-like handle, so the SQL is what both accept.
import cliProgress from "cli-progress";

// A group keeps one event per actor (unique index interaction_events_actor): a random actor drawn
// twice for one group is dropped, as the API's writes would refresh it instead.
const ONE_EVENT_PER_ACTOR = " ON CONFLICT (group_id, actor_id) DO NOTHING";

export const SIZES = { users: 10_000, posts: 100_000, channels: 100, messages: 100_000, interactions: 50_000, presence: 10_000 };

const WORDS = (
  "edge worker durable object stream socket latency cache region deploy hono drizzle sqlite query index " +
  "coffee morning garden river mountain music guitar piano novel poem photo camera travel train city night " +
  "open source release bug fix review merge branch test bench rust go python typescript kernel compiler " +
  "weather rain snow sunny cloudy autumn winter spring summer football chess tennis running cycling"
).split(" ");

let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = (arr) => arr[Math.floor(rand() * arr.length)];
const int = (n) => Math.floor(rand() * n);
const sentence = (n) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
const q = (s) => (s === null || s === undefined ? "NULL" : `'${String(s).replace(/'/g, "''")}'`);
const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const ROWS_PER_STATEMENT = 200;
const STATEMENTS_PER_BATCH = 25;

async function insertRows(db, table, columns, count, rowFn, bar) {
  let statements = [];
  let rows = 0;
  const flush = async () => {
    await db.batch(statements);
    bar.increment(rows);
    statements = [];
    rows = 0;
  };
  for (let start = 0; start < count; start += ROWS_PER_STATEMENT) {
    const values = [];
    for (let i = start; i < Math.min(count, start + ROWS_PER_STATEMENT); i++) values.push(`(${rowFn(i).join(",")})`);
    statements.push(
      db.prepare(`INSERT INTO ${table} (${columns.join(",")}) VALUES ${values.join(",")}${table === "interaction_events" ? ONE_EVENT_PER_ACTOR : ""}`),
    );
    rows += values.length;
    if (statements.length === STATEMENTS_PER_BATCH) await flush();
  }
  if (statements.length) await flush();
}

/**
 * Seeds users, follows, posts, channels, messages, interactions and presence. `actorIds` are
 * users created through the API (they can log in); interactions are about `actorIds[0]`.
 */
export async function seedData(db, { appId, actorIds, now }) {
  const bars = new cliProgress.MultiBar(
    { format: " {bar} {percentage}% | {value}/{total} {name}", hideCursor: true, clearOnComplete: false, noTTYOutput: true, notTTYSchedule: 5000 },
    cliProgress.Presets.shades_classic,
  );
  const base = (await db.prepare("SELECT coalesce(max(id), 0) AS m FROM users").first()).m;
  const userId = (i) => base + 1 + i;
  const allUserIds = (n) => (n < SIZES.users ? userId(n) : actorIds[n - SIZES.users]);
  const anyUser = () => allUserIds(int(SIZES.users + actorIds.length));

  let bar = bars.create(SIZES.users, 0, { name: "users" });
  await insertRows(
    db,
    "users",
    ["id", "username", "password_hash", "name", "type", "created_at"],
    SIZES.users,
    (i) => [userId(i), q(`bench_${i}`), q("pbkdf2$1$00$00"), q(`Bench User ${i}`), q(i % 50 === 0 ? "bot" : "human"), now - 86400 * 30],
    bar,
  );

  const followsPerUser = 10;
  bar = bars.create(SIZES.users * followsPerUser, 0, { name: "follows" });
  await insertRows(
    db,
    "follows",
    ["follower_id", "followed_id", "created_at"],
    SIZES.users * followsPerUser,
    (i) => {
      const follower = userId(Math.floor(i / followsPerUser));
      // Distinct targets per follower: a stride walk, skipping oneself.
      let followed = userId((Math.floor(i / followsPerUser) + 1 + (i % followsPerUser) * 997) % SIZES.users);
      if (followed === follower) followed = actorIds[0];
      return [follower, followed, now - 86400 * 20];
    },
    bar,
  );
  // The actors follow 50 users each so their unified streams have content.
  for (const a of actorIds) {
    await db.batch(
      Array.from({ length: 50 }, (_, k) =>
        db.prepare(`INSERT INTO follows (follower_id, followed_id, created_at) VALUES (${a}, ${userId(k * 37)}, ${now - 86400}) ON CONFLICT DO NOTHING`),
      ),
    );
  }

  const postBase = (await db.prepare("SELECT coalesce(max(id), 0) AS m FROM posts").first()).m;
  bar = bars.create(SIZES.posts, 0, { name: "posts" });
  await insertRows(
    db,
    "posts",
    ["id", "user_id", "app_id", "thread_id", "reply_to", "text", "html", "entities", "created_at", "revised_at"],
    SIZES.posts,
    (i) => {
      const id = postBase + 1 + i;
      const replyTo = i > 100 && i % 10 === 0 ? postBase + 1 + int(i) : null;
      const text = sentence(6 + int(20));
      const at = now - (SIZES.posts - i) * 10;
      return [
        id,
        i % 1000 === 0 ? actorIds[(i / 1000) % actorIds.length] : anyUser(),
        appId,
        replyTo ?? id,
        replyTo ?? "NULL",
        q(text),
        q(`<span itemscope itemtype="https://schema.example.io/Post">${esc(text)}</span>`),
        q('{"links":[],"mentions":[],"tags":[]}'),
        at,
        at,
      ];
    },
    bar,
  );

  const channelBase = (await db.prepare("SELECT coalesce(max(id), 0) AS m FROM channels").first()).m;
  const channelIds = Array.from({ length: SIZES.channels }, (_, i) => channelBase + 1 + i);
  bar = bars.create(SIZES.channels, 0, { name: "channels" });
  await insertRows(
    db,
    "channels",
    ["id", "type", "owner_id", "app_id", "read_public", "read_any_user", "write_any_user", "created_at"],
    SIZES.channels,
    (i) => [channelIds[i], q("io.example.core.chat"), anyUser(), appId, 1, 1, 1, now - 86400 * 10],
    bar,
  );

  const messageBase = (await db.prepare("SELECT coalesce(max(id), 0) AS m FROM messages").first()).m;
  bar = bars.create(SIZES.messages, 0, { name: "messages" });
  await insertRows(
    db,
    "messages",
    ["id", "channel_id", "user_id", "app_id", "thread_id", "text", "html", "entities", "created_at"],
    SIZES.messages,
    (i) => {
      const id = messageBase + 1 + i;
      const text = sentence(8 + int(30));
      return [
        id,
        channelIds[i % SIZES.channels],
        anyUser(),
        appId,
        id,
        q(text),
        q(`<span itemscope itemtype="https://schema.example.io/Message">${esc(text)}</span>`),
        q('{"links":[],"mentions":[],"tags":[]}'),
        now - (SIZES.messages - i) * 5,
      ];
    },
    bar,
  );

  // Interactions about every actor (the interactions row rotates their tokens, and each must get
  // a real page): bookmarks, reposts and replies of their posts and follows of them, as merged
  // groups (a group per object per day) with their events; the groups are dealt out in turn.
  const postsOf = new Map();
  for (const actor of actorIds) {
    postsOf.set(
      actor,
      (await db.prepare(`SELECT id FROM posts WHERE user_id = ${actor} ORDER BY id LIMIT 200`).all()).results.map((r) => r.id),
    );
  }
  const groupBase = (await db.prepare("SELECT coalesce(max(id), 0) AS m FROM interaction_groups").first()).m;
  const eventBase = (await db.prepare("SELECT coalesce(max(id), 0) AS m FROM interaction_events").first()).m;
  const eventsPerGroup = 5;
  const groups = SIZES.interactions / eventsPerGroup;
  const actions = ["bookmark", "repost", "reply", "follow"];
  bar = bars.create(SIZES.interactions + groups, 0, { name: "interactions" });
  await insertRows(
    db,
    "interaction_groups",
    ["id", "user_id", "action", "object_id", "latest_event_id", "latest_at"],
    groups,
    (g) => {
      const action = actions[g % actions.length];
      const actor = actorIds[Math.floor(g / actions.length) % actorIds.length];
      const own = postsOf.get(actor);
      return [
        groupBase + 1 + g,
        actor,
        q(action),
        action === "follow" ? actor : own[g % own.length],
        eventBase + (g + 1) * eventsPerGroup,
        now - (groups - g) * 86400 * 2,
      ];
    },
    bar,
  );
  await insertRows(
    db,
    "interaction_events",
    ["id", "group_id", "actor_id", "created_at"],
    SIZES.interactions,
    (e) => {
      const g = Math.floor(e / eventsPerGroup);
      return [eventBase + 1 + e, groupBase + 1 + g, anyUser(), now - (groups - g) * 86400 * 2 - (eventsPerGroup - (e % eventsPerGroup)) * 60];
    },
    bar,
  );

  bar = bars.create(SIZES.presence, 0, { name: "presence" });
  await insertRows(
    db,
    "presence",
    ["user_id", "presence", "last_seen_at", "expires_at"],
    SIZES.presence,
    (i) => [userId(i), q(i % 3 ? "online" : "coding"), now, now + 3600 * 24],
    bar,
  );

  // Counters, as the API would have kept them.
  await db.batch([
    db.prepare(
      `UPDATE users SET followers = (SELECT count(*) FROM follows WHERE followed_id = users.id), following = (SELECT count(*) FROM follows WHERE follower_id = users.id), posts = (SELECT count(*) FROM posts WHERE user_id = users.id) WHERE id > ${base} OR id IN (${actorIds.join(",")})`,
    ),
    db.prepare(`UPDATE posts SET replies = (SELECT count(*) FROM posts r WHERE r.reply_to = posts.id) WHERE id > ${postBase}`),
    db.prepare(
      `UPDATE channels SET messages = (SELECT count(*) FROM messages m WHERE m.channel_id = channels.id), recent_message_id = (SELECT max(id) FROM messages m WHERE m.channel_id = channels.id), last_message_id = (SELECT max(id) FROM messages m WHERE m.channel_id = channels.id) WHERE id > ${channelBase}`,
    ),
  ]);
  bars.stop();
  return {
    postIds: [postBase + 1, postBase + SIZES.posts],
    messageIds: [messageBase + 1, messageBase + SIZES.messages],
    channelIds,
    userIds: [userId(0), userId(SIZES.users - 1)],
  };
}

/**
 * What the API's writes keep beside the rows, derived once after every seed inserted its rows
 * directly (the rules and SQL of the migrations that introduced them, schema/migrations
 * home_timelines and list_pages): home timelines fanned out (merged authors first, config
 * HOME_TIMELINES' thresholds), the explore streams' flags, the inbox's activity key and unread flag.
 */
export async function deriveStoredState(db) {
  const run = (sql) => db.batch([db.prepare(sql)]);
  await run(`INSERT INTO merged_authors (user_id) SELECT id FROM users WHERE followers > 500 OR posts > 1000 ON CONFLICT DO NOTHING`);
  await run(`INSERT INTO home_items (user_id, post_id) SELECT user_id, id FROM posts WHERE true ON CONFLICT DO NOTHING`);
  await run(`INSERT INTO home_items (user_id, post_id) SELECT f.follower_id, p.id FROM follows f JOIN posts p ON p.user_id = f.followed_id
    WHERE f.followed_id NOT IN (SELECT user_id FROM merged_authors) ON CONFLICT DO NOTHING`);
  await run(`UPDATE posts SET is_newcomer = 1 WHERE repost_of IS NULL
    AND (SELECT e.id FROM posts e WHERE e.user_id = posts.user_id AND e.id < posts.id AND e.repost_of IS NULL ORDER BY e.id LIMIT 1 OFFSET 49) IS NULL`);
  await run(`UPDATE posts SET is_conversation = 1 WHERE EXISTS (SELECT 1 FROM posts cr WHERE cr.thread_id = posts.id AND cr.id <> posts.id
    AND cr.user_id <> posts.user_id AND cr.is_deleted = 0)`);
  await run(`UPDATE subscriptions SET activity = coalesce((SELECT coalesce((SELECT am.created_at FROM messages am WHERE am.id = ak.recent_message_id), ak.created_at) * 1048576 + ak.id % 1048576
    FROM channels ak WHERE ak.id = subscriptions.channel_id), 0)`);
  await run(`UPDATE subscriptions SET is_unread = 1 WHERE EXISTS (SELECT 1 FROM channels uc WHERE uc.id = subscriptions.channel_id
    AND uc.recent_message_id IS NOT NULL AND uc.recent_message_id >
      coalesce((SELECT uf.position FROM markers uf WHERE uf.user_id = subscriptions.user_id AND uf.name = 'channel:' || uc.id), -1))`);
}

export { WORDS };
