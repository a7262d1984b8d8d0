import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { finishPage, parsePage } from "../../src/http/pagination";
import { parseSearch } from "../../src/routes/messages/messages";
import { openDb } from "../../src/db";
import { searchMessages, type SearchPlan } from "../../src/stores/search";
import { actor, appToken, call, makeApp, userToken } from "../support/client";
import { DB } from "../support/db";

// Writes carry an advancing test clock: each token may write 20 times a minute (decisions §9).
let clock = Math.floor(Date.now() / 1000);
const tick = () => (clock += 4);
const PM = "io.example.core.pm";

type Actor = Awaited<ReturnType<typeof actor>>;
let alice: Actor, bob: Actor, carol: Actor, eve: Actor;
let P: string, Q: string, R: string, pmChannel: string;
const m: Record<string, any> = {};
let pollId: number, fileId: number;

async function post(who: Actor, channelId: string, json: Record<string, unknown>) {
  const res = await call("POST", `/channels/${channelId}/messages`, { token: who.token, json, now: tick() });
  if (res.status !== 201) throw new Error(`post: ${res.status} ${res.text}`);
  return res.body.data;
}

async function channel(who: Actor, acl: Record<string, unknown>) {
  const res = await call("POST", "/channels", { token: who.token, json: { type: "com.example.chat", acl }, now: tick() });
  if (res.status !== 201) throw new Error(`channel: ${res.status} ${res.text}`);
  return res.body.data.id as string;
}

beforeAll(async () => {
  alice = await actor("messages");
  bob = await actor("messages", { type: "feed" });
  carol = await actor("messages", { type: "bot" });
  eve = await actor("messages");
  P = await channel(alice, { read: { public: true }, write: { any_user: true } });
  Q = await channel(alice, { read: { public: true }, write: { any_user: true } });
  R = await channel(alice, {});
  pollId = (await DB.prepare(
    "INSERT INTO polls (user_id, app_id, type, prompt, poll_token, created_at, closed_at) VALUES (?, 1, 'com.example.poll', 'Which?', 'ptok', 0, 0) RETURNING id",
  )
    .bind(Number(alice.user.id))
    .first<{ id: number }>())!.id;
  fileId = (await DB.prepare(
    "INSERT INTO files (user_id, app_id, kind, type, name, file_token, file_token_read, created_at, is_complete, storage_key, mime_type, media_info) VALUES (?, 1, 'image', 'com.example.photo', 'p.png', 'ft', 'ftr', 0, 1, 'search-test/p.png', 'image/png', '{\"width\":1,\"height\":1}') RETURNING id",
  )
    .bind(Number(alice.user.id))
    .first<{ id: number }>())!.id;

  m.A = await post(alice, P, { text: `@${bob.user.username} running foxes are quick #Animals https://www.example.com/page` });
  m.B = await post(bob, P, { text: `a fox ran quickly past @${alice.user.username} #nature_walk http://news.example.org/x`, reply_to: m.A.id });
  m.C = await post(carol, P, { text: "fox fox fox fox", is_nsfw: true, raw: { "com.example.card": [{ title: "x" }] } });
  m.D = await post(alice, Q, {
    text: "fox in another channel",
    raw: {
      "io.example.core.poll": [{ "+io.example.core.poll": { poll_id: String(pollId), poll_token: "ptok" } }],
      "io.example.core.oembed": [{ "+io.example.core.file": { file_id: String(fileId), file_token: "ft", format: "oembed" } }],
    },
  });
  m.E = await post(alice, R, { text: "fox secret" });
  const pm = await call("POST", "/channels/pm/messages", { token: alice.token, json: { destinations: [bob.user.id], text: "fox private" }, now: tick() });
  m.PM = pm.body.data;
  pmChannel = m.PM.channel_id;
  m.F = await post(alice, P, { text: "fox deleted" });
  await call("DELETE", `/channels/${P}/messages/${m.F.id}`, { token: alice.token, now: tick() });
  m.G = await post(alice, P, { text: "nothing to see here" });
  await DB.prepare("UPDATE messages SET is_sticky = 1 WHERE id = ?").bind(Number(m.A.id)).run();
});

async function search(query: string, token?: string) {
  const res = await call("GET", `/channels/messages/search?${query}`, { token });
  if (res.status !== 200) throw new Error(`search ${query}: ${res.status} ${res.text}`);
  return res.body;
}
const ids = (body: any) => body.data.map((x: any) => x.id);

/** The same search run through the store with one candidate plan forced (as an anonymous caller). */
async function viaPlan(query: string, plan: SearchPlan): Promise<string[]> {
  const q = Object.fromEntries(new URLSearchParams(query)) as any;
  const page = parsePage(q);
  const rows = await searchMessages(openDb(env), parseSearch(null, q), page, null, plan);
  return finishPage(rows, page, (r) => r.paginationId!).items.map((r) => String(r.id));
}
const PLANS: SearchPlan[] = ["fts", "channels", "facet"];
const idsOf = (...names: string[]) => names.map((n) => m[n].id);

describe("GET /channels/messages/search: orders and words", () => {
  it("order=id returns matches newest first, deleted and unreadable messages never", async () => {
    const anon = await search(`channel_ids=${P},${Q},${R}&q=fox&order=id`);
    expect(ids(anon)).toEqual(idsOf("D", "C", "B", "A"));
    expect(anon.data.map((x: any) => x.pagination_id)).toEqual(idsOf("D", "C", "B", "A"));
    expect(anon.meta).toEqual({ code: 200, more: false, max_id: m.D.id, min_id: m.A.id });
    const owner = await search(`channel_ids=${P},${Q},${R}&q=fox&order=id`, alice.token);
    expect(ids(owner)).toEqual(idsOf("E", "D", "C", "B", "A"));
    // Without words: every live message of the channels.
    expect(ids(await search(`channel_ids=${P}&order=id`))).toEqual(idsOf("G", "C", "B", "A"));
  });

  it("order=relevance (the default) ranks by bm25 and pages by keyset on the ranking", async () => {
    const all = await search(`channel_ids=${P},${Q}&q=fox`);
    expect(ids(all)[0]).toBe(m.C.id); // "fox fox fox fox" is the best match
    expect([...ids(all)].sort()).toEqual(idsOf("A", "B", "C", "D").sort());
    expect(ids(all)).not.toEqual(ids(await search(`channel_ids=${P},${Q}&q=fox&order=id`)));

    const walked: string[] = [];
    let before = "";
    for (let i = 0; i < 6; i++) {
      const page = await search(`channel_ids=${P},${Q}&q=fox&count=1${before}`);
      walked.push(...ids(page));
      if (!page.meta.more) break;
      expect(page.meta.min_id).toBe(page.data[0].pagination_id);
      before = `&before_id=${page.meta.min_id}`;
    }
    expect(walked).toEqual(ids(all));
    const second = ids(all)[1];
    const head = await search(`channel_ids=${P},${Q}&q=fox&since_id=${ids(all)[2]}`);
    expect(ids(head)).toEqual([ids(all)[0], second]);
    const tail = await search(`channel_ids=${P},${Q}&q=fox&count=-2`);
    expect(ids(tail)).toEqual(ids(all).slice(2));
  });

  it("gives the same ranking and pages under every candidate plan", async () => {
    const all = ids(await search(`channel_ids=${P},${Q}&q=fox`));
    for (const plan of PLANS) {
      expect(await viaPlan(`channel_ids=${P},${Q}&q=fox`, plan), plan).toEqual(all);
      expect(await viaPlan(`channel_ids=${P},${Q}&q=fox&count=2&before_id=${all[1]}`, plan), plan).toEqual(all.slice(2, 4));
      expect(await viaPlan(`channel_ids=${P},${Q}&q=fox&order=id&count=2&before_id=${m.C.id}`, plan), plan).toEqual(idsOf("B", "A"));
      expect(await viaPlan(`channel_ids=${P},${Q}&q=fox&order=id&count=-2`, plan), plan).toEqual(idsOf("B", "A"));
      expect(await viaPlan(`channel_ids=${P},${Q}&q=fox&order=id&since_id=${m.B.id}`, plan), plan).toEqual(idsOf("D", "C"));
      // A channel the caller may not read, and a list too long for one walk per channel.
      expect(await viaPlan(`channel_ids=${P},${Q},${R}&q=fox&order=id`, plan), plan).toEqual(idsOf("D", "C", "B", "A"));
      const many = [P, Q, R, ...Array.from({ length: 20 }, (_, i) => 900_000 + i)].join(",");
      expect(await viaPlan(`channel_ids=${many}&q=fox&order=id`, plan), plan).toEqual(idsOf("D", "C", "B", "A"));
      expect(await viaPlan(`channel_ids=${many}&q=fox`, plan), plan).toEqual(all);
    }
  });

  it("matches words in the text only, never a channel's id", async () => {
    for (const order of ["id", "relevance"]) expect(ids(await search(`q=${P}&order=${order}&channel_ids=${P},${Q}`))).toEqual([]);
  });

  it("names many channels in either order (D1 allows 5 terms in a compound SELECT)", async () => {
    const absent = Array.from({ length: 23 }, (_, i) => String(900_000_000 + i));
    for (const order of ["id", "relevance"]) {
      const few = await search(`q=fox&order=${order}&channel_ids=${P},${Q}`);
      expect(ids(few).length).toBeGreaterThan(1);
      for (const n of [5, 6, 25]) {
        const many = await search(`q=fox&order=${order}&channel_ids=${[P, Q, ...absent].slice(0, n).join(",")}`);
        expect(ids(many), `${n} channels, order=${order}`).toEqual(ids(few));
      }
    }
  });

  it("stems words (porter) and requires every word", async () => {
    expect(ids(await search(`channel_ids=${P}&q=run&order=id`))).toEqual(idsOf("A"));
    expect(ids(await search(`channel_ids=${P}&q=FOXES&order=id`))).toEqual(idsOf("C", "B", "A"));
    expect(ids(await search(`channel_ids=${P}&q=fox%20quickly&order=id`))).toEqual(idsOf("B"));
    expect(ids(await search(`channel_ids=${P}&q=zebra`))).toEqual([]);
  });

  it("treats any q as words, never as query syntax (no 500)", async () => {
    const hostile = [
      '"',
      'fox"',
      "NEAR(fox",
      "fox*",
      "fox OR",
      "AND",
      "-fox",
      "fox:bar",
      "^fox",
      "(fox)",
      "'",
      "{text}: fox",
      "🦊",
      "fox NOT",
      "text:fox",
      '""fox""',
    ];
    for (const q of hostile) {
      const res = await call("GET", `/channels/messages/search?channel_ids=${P}&q=${encodeURIComponent(q)}`);
      expect(res.status, q).toBe(200);
    }
    expect(ids(await search(`channel_ids=${P}&q=${encodeURIComponent("(fox)")}&order=id`))).toEqual(idsOf("C", "B", "A"));
    // Quotes, backslashes and braces are punctuation, not syntax of the words' array (Postgres passes them as an array literal).
    for (const q of ['fox"', "fox\\", "{fox}", '"fox\\"'])
      expect(ids(await search(`channel_ids=${P}&q=${encodeURIComponent(q)}&order=id`)), q).toEqual(idsOf("C", "B", "A"));
  });
});

describe("GET /channels/messages/search: filters", () => {
  const base = () => `channel_ids=${P},${Q}&order=id`;
  const cases: [string, () => string, string[]][] = [
    ["client_id", () => `client_id=${bob.app.client_id}`, ["B"]],
    ["created_after", () => `created_after=${m.B.created_at}&q=fox`, ["D", "C"]],
    ["created_before", () => `created_before=${m.B.created_at}`, ["A"]],
    ["created_after+created_before", () => `created_after=${m.A.created_at}&created_before=${m.D.created_at}`, ["C", "B"]],
    ["creator_id (id)", () => `creator_id=${alice.user.id}&q=fox`, ["D", "A"]],
    ["creator_id (@username)", () => `creator_id=@${carol.user.username}`, ["C"]],
    ["file_id", () => `file_id=${fileId}`, ["D"]],
    ["file_kinds", () => `file_kinds=image,audio`, ["D"]],
    ["file_kinds (none)", () => `file_kinds=video`, []],
    ["is_nsfw=0", () => `is_nsfw=0&q=fox`, ["D", "B", "A"]],
    ["is_nsfw=1", () => `is_nsfw=1&q=fox`, ["D", "C", "B", "A"]],
    ["is_reply=1", () => `is_reply=1`, ["B"]],
    ["is_reply=0", () => `is_reply=0&q=fox`, ["D", "C", "A"]],
    ["is_sticky=1", () => `is_sticky=1`, ["A"]],
    ["is_sticky=0", () => `is_sticky=0&q=fox`, ["D", "C", "B", "A"]],
    ["leading_mentions", () => `leading_mentions=${bob.user.username}`, ["A"]],
    ["leading_mentions (not leading)", () => `leading_mentions=${alice.user.username}`, []],
    ["mentions", () => `mentions=@${alice.user.username.toUpperCase()},nobody`, ["B"]],
    ["mentions (any)", () => `mentions=${alice.user.username},${bob.user.username}`, ["B", "A"]],
    ["poll_id", () => `poll_id=${pollId}`, ["D"]],
    ["raw_types", () => `raw_types=com.example.card,io.example.core.poll`, ["D", "C"]],
    ["reply_to", () => `reply_to=${m.A.id}`, ["B"]],
    ["tags", () => `tags=animals`, ["A"]],
    ["tags (matching form)", () => `tags=%23NatureWalk`, ["B"]],
    ["tags (any)", () => `tags=ANIMALS,nature_walk`, ["B", "A"]],
    ["thread_id", () => `thread_id=${m.A.id}`, ["B", "A"]],
    ["url_domains", () => `url_domains=example.com`, ["A"]],
    ["url_domains (scheme, www)", () => `url_domains=${encodeURIComponent("https://www.news.example.org/")}`, ["B"]],
    ["urls", () => `urls=${encodeURIComponent("https://www.example.com/page")}`, ["A"]],
    ["user_types=bot", () => `user_types=bot`, ["C"]],
    ["user_types=feed", () => `user_types=feed`, ["B"]],
    ["user_types=human", () => `user_types=human&q=fox`, ["D", "A"]],
    ["several filters at once", () => `q=fox&user_types=human,feed&is_nsfw=0&tags=animals,naturewalk`, ["B", "A"]],
  ];
  it.each(cases)("%s", async (_name, query, expected) => {
    const body = await search(`${base()}&${query()}`);
    expect(ids(body)).toEqual(idsOf(...expected));
    // The same filter in relevance order returns the same set.
    const rel = await search(`${base().replace("order=id", "order=relevance")}&${query()}`);
    expect([...ids(rel)].sort()).toEqual(idsOf(...expected).sort());
    // Every candidate plan of a word search gives the same answer (all expected messages say "fox").
    for (const plan of PLANS) {
      expect(await viaPlan(`${base()}&${query()}&q=fox`, plan), plan).toEqual(idsOf(...expected));
      const relevant = await viaPlan(`${base().replace("order=id", "order=relevance")}&${query()}&q=fox`, plan);
      expect([...relevant].sort(), plan).toEqual(idsOf(...expected).sort());
    }
  });
});

describe("GET /channels/messages/search: access", () => {
  it("another user's private messages never appear; pm searches the caller's own", async () => {
    expect(ids(await search("channel_ids=pm&q=fox", eve.token))).toEqual([]);
    expect(ids(await search(`channel_ids=${pmChannel}&q=fox`, eve.token))).toEqual([]);
    expect(ids(await search(`channel_ids=${pmChannel},${P}&q=private`, eve.token))).toEqual([]);
    expect(ids(await search(`channel_ids=${pmChannel}&q=fox`))).toEqual([]);
    expect(ids(await search(`channel_ids=${R}&q=fox`, bob.token))).toEqual([]);
    expect(ids(await search("channel_ids=pm&q=fox", bob.token))).toEqual(idsOf("PM"));
    expect(ids(await search("channel_ids=pm", alice.token))).toEqual(idsOf("PM"));
    expect(ids(await search(`channel_ids=${pmChannel}&q=private`, alice.token))).toEqual(idsOf("PM"));
  });

  it("channel_ids=pm needs a user token with the messages scope; public channels need none", async () => {
    expect((await call("GET", "/channels/messages/search?channel_ids=pm&q=fox")).status).toBe(401);
    const app = await makeApp();
    expect((await call("GET", "/channels/messages/search?channel_ids=pm", { token: await appToken(app) })).status).toBe(403);
    expect((await call("GET", "/channels/messages/search?channel_ids=pm", { token: await userToken(app, bob.user, "basic") })).status).toBe(403);
    const narrow = await userToken(app, bob.user, `messages:${PM}`);
    expect(ids(await search("channel_ids=pm&q=fox", narrow))).toEqual(idsOf("PM"));
    expect((await call("GET", `/channels/messages/search?channel_ids=${P}&q=fox`, { token: await appToken(app) })).status).toBe(200);
  });

  it("answers the first page in a single database round trip", async () => {
    const res = await call("GET", `/channels/messages/search?channel_ids=${P},${Q}&q=fox&is_nsfw=0&tags=animals,naturewalk&user_types=human,feed`);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.headers.get("x-debug-db-calls")).toBe("1");
  });

  it("refuses bad parameters with a 400 naming them", async () => {
    const bad = async (query: string, field: RegExp) => {
      const res = await call("GET", `/channels/messages/search?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.meta.error_message).toMatch(field);
    };
    await bad("q=fox", /'channel_ids'/);
    await bad("channel_ids=abc", /'channel_ids'/);
    await bad(`channel_ids=${Array.from({ length: 201 }, (_, i) => i + 1).join(",")}`, /'channel_ids'/);
    await bad(`channel_ids=${P}&order=newest`, /'order'/);
    await bad(`channel_ids=${P}&created_after=yesterday`, /'created_after'/);
    await bad(`channel_ids=${P}&created_before=2020-13-45`, /'created_before'/);
    await bad(`channel_ids=${P}&user_types=alien`, /'user_types'/);
    await bad(`channel_ids=${P}&file_kinds=document`, /'file_kinds'/);
    await bad(`channel_ids=${P}&is_reply=2`, /'is_reply'/);
    await bad(`channel_ids=${P}&is_nsfw=yes`, /'is_nsfw'/);
    await bad(`channel_ids=${P}&creator_id=bad!`, /'creator_id'/);
    await bad(`channel_ids=${P}&thread_id=x`, /'thread_id'/);
    await bad(`channel_ids=${P}&before_id=x`, /'before_id'/);
    await bad(`channel_ids=${P}&q=${Array.from({ length: 33 }, (_, i) => `w${i}`).join("+")}`, /'q'/);
  });
});
