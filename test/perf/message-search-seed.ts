import { env } from "cloudflare:test";
import { expect } from "vitest";
import { actor } from "../support/client";
import { DB } from "../support/db";

// Seeds a large message data set straight into D1 for the search benchmark: Zipf-distributed
// words, tags, NSFW flags, public channels and private-message channels of one searching user.

export const MESSAGES = 100_000;
const PUBLIC_CHANNELS = 100;
export const PM_CHANNELS = 200;
const USERS = 500;
const VOCABULARY = 20_000;
const WORDS_PER_MESSAGE = [6, 18];
const CHUNK = 500;

// Deterministic pseudo-random numbers (mulberry32).
let seed = 42;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

// Words that porter stemming leaves alone (consonant-vowel syllables ending in a, o or u), distinct per rank.
const C = "bdfgklmnprtvz";
const V = "aou";
export const word = (rank: number) => {
  let n = rank;
  let w = "";
  do {
    w += C[n % C.length] + V[Math.floor(n / C.length) % V.length];
    n = Math.floor(n / (C.length * V.length));
  } while (n > 0);
  return w + "x" + "aou"[rank % 3];
};
const cumulative: number[] = [];
{
  let s = 0;
  for (let r = 1; r <= VOCABULARY; r++) cumulative.push((s += 1 / r));
}
const zipfRank = () => {
  const x = rand() * cumulative[cumulative.length - 1];
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
};

export async function seedMessages() {
  const counts = new Map<number, number>();
  const searcher = await actor("messages");
  let publicIds: number[] = [];
  const me = Number(searcher.user.id);
  const run = Date.now().toString(36);
  const t0 = Date.now();
  await DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO users (username, password_hash, type, created_at)
     SELECT 'p' || ? || '_' || i, 'x', CASE i % 10 WHEN 0 THEN 'bot' WHEN 1 THEN 'feed' ELSE 'human' END, 0 FROM n`,
  )
    .bind(USERS, run)
    .run();
  const firstUser = (await DB.prepare("SELECT min(id) AS id FROM users WHERE username LIKE ?").bind(`p${run}_%`).first<{ id: number }>())!.id;
  const channelStart = (await DB.prepare("SELECT coalesce(max(id), 0) AS id FROM channels").first<{ id: number }>())!.id + 1;
  await DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
     INSERT INTO channels (type, owner_id, app_id, read_public, write_any_user, created_at) SELECT 'com.example.chat', ?, 1, 1, 1, 0 FROM n`,
  )
    .bind(PUBLIC_CHANNELS, firstUser)
    .run();
  publicIds = Array.from({ length: PUBLIC_CHANNELS }, (_, i) => channelStart + i);
  // Private-message channels between the searching user and others.
  await DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
     INSERT INTO channels (type, owner_id, app_id, pm_key, read_immutable, write_immutable, full_immutable, created_at)
     SELECT 'io.example.core.pm', ?, 1, ? || ',' || (? + i), 1, 1, 1, 0 FROM n`,
  )
    .bind(PM_CHANNELS, me, String(me), firstUser)
    .run();
  const pmStart = channelStart + PUBLIC_CHANNELS;
  await DB.prepare(
    `INSERT INTO channel_acl (channel_id, user_id, level) SELECT id, CAST(substr(pm_key, instr(pm_key, ',') + 1) AS INTEGER), 'write'
     FROM channels WHERE id >= ? AND id < ?`,
  )
    .bind(pmStart, pmStart + PM_CHANNELS)
    .run();

  const stmts: D1PreparedStatement[] = [];
  let at = 1_700_000_000;
  for (let done = 0; done < MESSAGES; done += CHUNK) {
    const rows: [number, number, string, number, number][] = [];
    for (let i = 0; i < CHUNK; i++) {
      const pm = rand() < 0.05;
      const channel = pm ? pmStart + Math.floor(rand() * PM_CHANNELS) : publicIds[Math.floor(rand() * PUBLIC_CHANNELS)];
      const user = pm && rand() < 0.5 ? me : firstUser + Math.floor(rand() * USERS);
      const n = WORDS_PER_MESSAGE[0] + Math.floor(rand() * (WORDS_PER_MESSAGE[1] - WORDS_PER_MESSAGE[0]));
      const words: string[] = [];
      for (let k = 0; k < n; k++) {
        const r = zipfRank();
        words.push(word(r));
        counts.set(r, (counts.get(r) ?? 0) + 1);
      }
      if (rand() < 0.1) words.push("#" + word(1 + Math.floor(rand() * 50)));
      rows.push([channel, user, words.join(" "), (at += 7), rand() < 0.02 ? 1 : 0]);
    }
    stmts.push(
      DB.prepare(
        `INSERT INTO messages (channel_id, user_id, app_id, thread_id, text, html, entities, is_nsfw, created_at)
         SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), 1, 0, json_extract(value, '$[2]'),
           '<span itemscope itemtype="https://schema.example.io/Message">' || json_extract(value, '$[2]') || '</span>',
           '{"links":[],"mentions":[],"tags":[]}', json_extract(value, '$[4]'), json_extract(value, '$[3]')
         FROM json_each(?)`,
      ).bind(JSON.stringify(rows)),
    );
  }
  for (let i = 0; i < stmts.length; i += 20) await DB.batch(stmts.slice(i, i + 20));
  await DB.batch([
    DB.prepare("UPDATE messages SET thread_id = id WHERE thread_id = 0"),
    DB.prepare(
      `INSERT OR IGNORE INTO message_facets (message_id, facet, value)
       SELECT id, 'tag', lower(substr(text, instr(text, '#') + 1)) FROM messages WHERE instr(text, '#') > 0 AND channel_id >= ?`,
    ).bind(channelStart),
    DB.prepare(
      "UPDATE channels SET messages = (SELECT count(*) FROM messages m WHERE m.channel_id = channels.id), recent_message_id = (SELECT max(id) FROM messages m WHERE m.channel_id = channels.id), last_message_id = (SELECT max(id) FROM messages m WHERE m.channel_id = channels.id) WHERE id >= ?",
    ).bind(channelStart),
  ]);
  const total = (await DB.prepare("SELECT count(*) AS n FROM messages WHERE channel_id >= ?").bind(channelStart).first<{ n: number }>())!.n;
  expect(total).toBe(MESSAGES);
  console.log(`seeded ${MESSAGES} messages in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { searcher, publicIds, counts };
}
