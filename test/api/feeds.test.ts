import { describe, expect, it } from "vitest";
import { isPostgres } from "../../src/db";
import { DB } from "../support/db";
import { actor, call } from "../support/client";
import * as fx from "../fixtures/media";
import { createChannel, createMessage, createPost } from "../support/fixtures";

// The reference's last endpoints (issue 29, item 6): the channel explore streams, the RSS feeds
// and GET /oembed, through the Worker.

const SCOPES = "write_post stream messages public_messages files";
type Actor = Awaited<ReturnType<typeof actor>>;
let clock = Math.floor(Date.now() / 1000) + 300_000;
const tick = () => (clock += 5);

const post = (a: Actor, text: string) => createPost(a, text, {}, { now: tick() });

const newChannel = (token: string, body: Record<string, unknown> = {}) => createChannel(token, { type: "io.example.core.chat", ...body }, { now: tick() });

const message = (token: string, channelId: string, text: string) => createMessage(token, channelId, text, { now: tick() });

const settings = (name: string, description: string) => ({ "io.example.core.chat-settings": [{ name, description, categories: ["fun"] }] });

/**
 * A strict check of well-formed XML (the subset RSS uses: a declaration, elements, attributes,
 * character data with the five predefined entities): the element tree as nested objects.
 */
interface El {
  name: string;
  attrs: Record<string, string>;
  children: El[];
  text: string;
}
const decode = (s: string) => {
  expect(s, "a bare & or < in character data").not.toMatch(/&(?!(amp|lt|gt|quot|apos);)|</);
  return s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
};
function parseXml(doc: string): El {
  expect(doc.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
  const body = doc.slice(doc.indexOf("?>") + 2);
  const root: El = { name: "#root", attrs: {}, children: [], text: "" };
  const stack = [root];
  const tag = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>/g;
  let at = 0;
  for (let m = tag.exec(body); m; m = tag.exec(body)) {
    stack[stack.length - 1].text += decode(body.slice(at, m.index));
    at = tag.lastIndex;
    const [, close, name, attrText, selfClose] = m;
    if (close) {
      expect(stack.pop()!.name, "mismatched end tag").toBe(name);
      continue;
    }
    const attrs = Object.fromEntries([...attrText.matchAll(/([\w:.-]+)="([^"]*)"/g)].map((a) => [a[1], decode(a[2])]));
    const el: El = { name, attrs, children: [], text: "" };
    stack[stack.length - 1].children.push(el);
    if (!selfClose) stack.push(el);
  }
  expect(body.slice(at).trim()).toBe("");
  expect(stack.length, "unclosed elements").toBe(1);
  expect(root.children.length).toBe(1);
  return root.children[0];
}
const child = (el: El, name: string) => el.children.find((c) => c.name === name)!;
const textOf = (el: El, name: string) => child(el, name)?.text;

/** The feed at `path`: 200, the RSS content type, well-formed RSS 2.0; its channel and items. */
async function feed(path: string, token?: string) {
  const res = await call("GET", path, { token });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/rss+xml; charset=utf-8");
  const rss = parseXml(res.text);
  expect([rss.name, rss.attrs.version]).toEqual(["rss", "2.0"]);
  const channel = child(rss, "channel");
  for (const f of ["title", "link", "description"]) expect(textOf(channel, f), f).toBeTruthy();
  const items = channel.children.filter((c) => c.name === "item");
  for (const i of items) {
    for (const f of ["title", "link", "guid", "pubDate", "description"]) expect(child(i, f), f).toBeDefined();
    expect(new Date(textOf(i, "pubDate")).toUTCString()).toBe(textOf(i, "pubDate"));
  }
  return { channel, items, res };
}

describe("GET /channels/streams/explore and /channels/streams/explore/{slug}", () => {
  it("lists the streams; each lists public channels only, paginated, never private, PM or (by default) deactivated ones", async () => {
    const list = await call("GET", "/channels/streams/explore");
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: any) => s.slug)).toEqual(["conversations", "new"]);
    for (const s of list.body.data) {
      expect(Object.keys(s).sort()).toEqual(["description", "slug", "title", "url"]);
      expect(s.url).toBe(`http://api.test/v1/channels/streams/explore/${s.slug}`);
    }

    const a = await actor(SCOPES);
    const b = await actor(SCOPES);
    const quiet = await newChannel(a.token, { acl: { read: { public: true } } });
    const older = await newChannel(a.token, { acl: { read: { public: true } } });
    const busy = await newChannel(a.token, { acl: { read: { public: true } } });
    const priv = await newChannel(a.token, { acl: { read: { any_user: true } } });
    const gone = await newChannel(a.token, { acl: { read: { public: true } } });
    await message(a.token, busy.id, "first");
    await message(a.token, older.id, "hello");
    await message(a.token, priv.id, "secret");
    await message(a.token, gone.id, "bye");
    await message(a.token, busy.id, "again");
    await call("DELETE", `/channels/${gone.id}`, { token: a.token });
    const pm = await call("POST", "/channels/pm/messages", { token: a.token, json: { text: "psst", destinations: [b.user.id] } });
    expect(pm.status).toBe(201);

    const mine = new Set([quiet.id, older.id, busy.id, priv.id, gone.id, pm.body.data.channel_id]);
    const ids = (res: any) => res.body.data.map((c: any) => c.id).filter((id: string) => mine.has(id));
    const conv = await call("GET", "/channels/streams/explore/conversations?count=200", { token: b.token });
    expect(conv.status).toBe(200);
    expect(ids(conv)).toEqual([busy.id, older.id]);
    expect(conv.body.data[0]).toMatchObject({ id: busy.id, pagination_id: busy.recent_message_id ?? expect.any(String) });
    const fresh = await call("GET", "/channels/streams/explore/new?count=200");
    expect(ids(fresh)).toEqual([busy.id, older.id, quiet.id]);
    expect(fresh.body.data.find((c: any) => c.id === busy.id).pagination_id).toBe(busy.id);
    // Pagination by the stream's key; the general channel parameters apply.
    const page = await call("GET", `/channels/streams/explore/new?count=1&before_id=${busy.id}`);
    expect(page.body.data.map((c: any) => c.id)).toEqual([older.id]);
    expect(page.body.meta).toMatchObject({ more: true, max_id: older.id, min_id: older.id });
    const withMsg = await call("GET", `/channels/streams/explore/conversations?count=1&include_recent_message=1`);
    expect(withMsg.body.data[0]).toMatchObject({ id: busy.id, recent_message: { content: { text: "again" } } });
    expect(ids(await call("GET", "/channels/streams/explore/new?count=200&include_inactive=1"))).toEqual([gone.id, busy.id, older.id, quiet.id]);
    expect(ids(await call("GET", "/channels/streams/explore/new?count=200&channel_types=com.example.other"))).toEqual([]);

    const unknown = await call("GET", "/channels/streams/explore/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body.meta).toMatchObject({ code: 404, error_message: expect.stringMatching(/explore stream/) });
    expect((await call("GET", "/channels/streams/explore/new?include_recent_message=yes")).status).toBe(400);
  });

  it("reads about a page of rows, however many channels there are (D1's rows read)", async () => {
    const a = await actor(SCOPES);
    const appId = Number(await DB.prepare("SELECT app_id FROM channels ORDER BY id DESC LIMIT 1").first("app_id"));
    const m0 = Number(await DB.prepare("SELECT coalesce(max(id), 0) AS n FROM messages").first("n"));
    // 3,000 channels, every 50th public; each with a (made-up) newest message id, newest last (ids
    // from the table's own sequence: the later tests create channels too).
    await DB.prepare(
      `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 3000)
       INSERT INTO channels (type, owner_id, app_id, read_public, created_at, messages, recent_message_id)
       SELECT 'io.example.core.chat', ${a.user.id}, ${appId}, CASE WHEN n % 50 = 0 THEN 1 ELSE 0 END, ${clock}, 1, ${m0 + 1_000_000} + n FROM s`,
    ).run();
    const newest = String(await DB.prepare("SELECT max(id) AS n FROM channels").first("n"));
    for (const slug of ["conversations", "new"]) {
      const first = await call("GET", `/channels/streams/explore/${slug}?count=20`);
      expect(first.status).toBe(200);
      expect(first.body.data.length).toBe(20);
      expect(first.body.data[0].id).toBe(newest);
      const next = await call("GET", `/channels/streams/explore/${slug}?count=20&before_id=${first.body.meta.min_id}`);
      expect(next.body.data.length).toBe(20);
      if (isPostgres) continue; // Postgres reports no rows read
      for (const res of [first, next]) expect(Number(res.headers.get("x-debug-rows-read")), slug).toBeLessThanOrEqual(5 * 20);
    }
  });
});

describe("the RSS feeds (GET /feed/rss/...)", () => {
  it("tagged posts and a user's posts: RSS 2.0 of the JSON list's page, escaped, deleted posts left out, uri_template", async () => {
    const a = await actor(SCOPES);
    const tag = `feed${Date.now().toString(36)}`;
    const p1 = await post(a, `first <b>bold</b> & "quoted" #${tag}`);
    const p2 = await post(a, `second #${tag} https://example.com/?a=1&b=2`);
    const gone = await post(a, `gone #${tag}`);
    await call("DELETE", `/posts/${gone.id}`, { token: a.token });

    const { channel, items, res } = await feed(`/feed/rss/posts/tags/${tag}`);
    // The JSON list's own read: one round trip.
    expect(Number(res.headers.get("x-debug-db-calls"))).toBe(1);
    expect(textOf(channel, "title")).toBe(`Posts tagged #${tag}`);
    expect(child(channel, "atom:link").attrs).toMatchObject({ rel: "self", type: "application/rss+xml" });
    expect(items.map((i) => textOf(i, "link"))).toEqual([`http://api.test/v1/posts/${p2.id}`, `http://api.test/v1/posts/${p1.id}`]);
    const first = items[1];
    expect(textOf(first, "title")).toBe(`@${a.user.username}: first <b>bold</b> & "quoted" #${tag}`);
    expect(textOf(first, "dc:creator")).toBe(a.user.username);
    // The description is the post's HTML (its text escaped in it), escaped once more as XML text.
    expect(textOf(first, "description")).toBe(p1.content.html);
    expect(textOf(first, "description")).toContain("&lt;b&gt;bold&lt;/b&gt; &amp;");
    expect(textOf(first, "pubDate")).toBe(new Date(p1.created_at).toUTCString());

    const paged = await feed(`/feed/rss/posts/tags/${tag}?count=1&uri_template=${encodeURIComponent("https://app.example.com/p/{post_id}?u={username}")}`);
    expect(paged.items.map((i) => textOf(i, "link"))).toEqual([`https://app.example.com/p/${p2.id}?u=${a.user.username}`]);

    const user = await feed(`/feed/rss/users/${a.user.id}/posts?include_deleted=1`);
    expect(textOf(user.channel, "title")).toBe(`Posts by @${a.user.username}`);
    expect(user.items.map((i) => textOf(i, "guid"))).toEqual([p2.id, p1.id].map((id) => `http://api.test/v1/posts/${id}`));
    expect((await feed(`/feed/rss/users/@${a.user.username}/posts`)).items.length).toBe(2);

    for (const [path, status] of [
      ["/feed/rss/users/99999999/posts", 404],
      ["/feed/rss/users/me/posts", 401],
      [`/feed/rss/posts/tags/${tag}?uri_template=javascript:alert(1)`, 400],
      [`/feed/rss/posts/tags/${tag}?include_replies=maybe`, 400],
    ] as const) {
      const res = await call("GET", path);
      expect(res.status, path).toBe(status);
      expect(res.body.meta.code).toBe(status);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    }
  });

  it("post search as RSS takes the search parameters", async () => {
    const a = await actor(SCOPES);
    const word = `zq${Date.now().toString(36)}`;
    const p = await post(a, `searching ${word} here`);
    await post(a, "something else entirely");
    const { channel, items } = await feed(`/feed/rss/posts/search?q=${word}&order=id`);
    expect(textOf(channel, "title")).toBe(`Posts matching “${word}”`);
    expect(items.map((i) => textOf(i, "guid"))).toEqual([`http://api.test/v1/posts/${p.id}`]);
    expect((await call("GET", "/feed/rss/posts/search?file_kinds=bogus")).status).toBe(400);
  });

  it("a channel's messages: public without a token, private with the reader's token, deleted messages left out", async () => {
    const a = await actor(SCOPES);
    const b = await actor(SCOPES);
    const pub = await newChannel(a.token, { acl: { read: { public: true } }, raw: settings("Fun & <Games>", "All about games") });
    const m1 = await message(a.token, pub.id, "hello <world>");
    const m2 = await message(a.token, pub.id, "to delete");
    await call("DELETE", `/channels/${pub.id}/messages/${m2.id}`, { token: a.token });

    const { channel, items } = await feed(`/feed/rss/channels/${pub.id}/messages`);
    expect(textOf(channel, "title")).toBe("Fun & <Games>");
    expect(textOf(channel, "description")).toBe("All about games");
    expect(items.map((i) => textOf(i, "link"))).toEqual([`http://api.test/v1/channels/${pub.id}/messages/${m1.id}`]);
    expect(textOf(items[0], "title")).toBe(`@${a.user.username}: hello <world>`);
    const tpl = encodeURIComponent("https://gallery.example.com/media/{channel_id}/{message_id}");
    expect(textOf((await feed(`/feed/rss/channels/${pub.id}/messages?uri_template=${tpl}`)).items[0], "link")).toBe(
      `https://gallery.example.com/media/${pub.id}/${m1.id}`,
    );

    const priv = await newChannel(a.token, { acl: { read: { user_ids: [b.user.id] } } });
    await message(a.token, priv.id, "members only");
    expect((await call("GET", `/feed/rss/channels/${priv.id}/messages`)).status).toBe(404);
    const outsider = await actor(SCOPES);
    expect((await call("GET", `/feed/rss/channels/${priv.id}/messages`, { token: outsider.token })).status).toBe(404);
    // A feed reader sends the token in the query string.
    const asB = await feed(`/feed/rss/channels/${priv.id}/messages?access_token=${b.token}`);
    expect(asB.items.map((i) => textOf(i, "title"))).toEqual([`@${a.user.username}: members only`]);
    // The token never travels in the feed (its self link is the URL without it).
    expect(asB.res.text).not.toContain(b.token);
    expect(child(asB.channel, "atom:link").attrs.href).toBe(`http://api.test/v1/feed/rss/channels/${priv.id}/messages`);
  });

  it("channel search: one item per channel the caller may read", async () => {
    const a = await actor(SCOPES);
    const word = `room${Date.now().toString(36)}`;
    const pub = await newChannel(a.token, { acl: { read: { public: true } }, raw: settings(`The ${word} room`, "Come in") });
    await newChannel(a.token, { acl: { read: { any_user: true } }, raw: settings(`Hidden ${word}`, "Members") });
    const { items } = await feed(`/feed/rss/channels/search?q=${word}`);
    expect(items.map((i) => [textOf(i, "title"), textOf(i, "link"), textOf(i, "description")])).toEqual([
      [`The ${word} room`, `http://api.test/v1/channels/${pub.id}`, "Come in"],
    ]);
    const asOwner = await feed(
      `/feed/rss/channels/search?q=${word}&access_token=${a.token}&uri_template=${encodeURIComponent("https://x.example/{channel_id}")}`,
    );
    expect(asOwner.items.length).toBe(2);
    expect(asOwner.res.text).not.toContain(a.token);
    expect(textOf(asOwner.channel, "link")).toBe(`http://api.test/v1/channels/search?q=${word}`);
    expect((await call("GET", "/feed/rss/channels/search?order=popularity&before_id=3")).status).toBe(400);
  });
});

describe("GET /oembed", () => {
  it("a post URL gives a rich oEmbed; deleted posts, other URLs and formats are 4xx in the envelope", async () => {
    const a = await actor(SCOPES);
    const p = await post(a, "embed <me> & you");
    const res = await call("GET", `/oembed?url=${encodeURIComponent(`http://api.test/v1/posts/${p.id}`)}&maxwidth=400`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({
      version: "1.0",
      type: "rich",
      provider_url: "http://api.test",
      url: `http://api.test/v1/posts/${p.id}`,
      author_name: a.user.username,
      author_url: `http://api.test/v1/users/${a.user.id}`,
      title: "embed <me> & you",
      width: 400,
      height: null,
    });
    expect(res.body.html).toContain(p.content.html);
    expect(res.body.html).not.toContain("<me>");
    // A repost's URL embeds its original.
    const b = await actor(SCOPES);
    const repost = await call("PUT", `/posts/${p.id}/repost`, { token: b.token });
    const viaRepost = await call("GET", `/oembed?url=http://api.test/v1/posts/${repost.body.data.id}`);
    expect(viaRepost.body).toMatchObject({ url: `http://api.test/v1/posts/${p.id}`, author_name: a.user.username });

    await call("DELETE", `/posts/${p.id}`, { token: a.token });
    for (const [q, status] of [
      [`url=http://api.test/v1/posts/${p.id}`, 404],
      ["url=http://api.test/v1/posts/99999999", 404],
      ["url=https://elsewhere.example.com/v1/posts/1", 404],
      ["url=http://api.test/v1/users/1", 404],
      ["url=not%20a%20url", 400],
      ["", 400],
      [`url=http://api.test/v1/posts/1&format=xml`, 400],
      [`url=http://api.test/v1/posts/1&maxwidth=wide`, 400],
    ] as const) {
      const r = await call("GET", `/oembed?${q}`);
      expect(r.status, q).toBe(status);
      expect(r.body.meta.code, q).toBe(status);
    }
  });

  it("a public file's url_short gives its photo oEmbed (scaled to maxwidth); a private file has none", async () => {
    const a = await actor(SCOPES);
    const form = new FormData();
    form.set("content", new Blob([fx.png]), "pic.png");
    form.set("type", "com.example.test");
    form.set("is_public", "1");
    const up = await call("POST", "/files", { token: a.token, body: form });
    expect(up.status, up.text).toBe(201);
    const f = up.body.data;
    const res = await call("GET", `/oembed?url=${encodeURIComponent(f.url_short)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      version: "1.0",
      type: "photo",
      width: 40,
      height: 30,
      file_id: f.id,
      author_name: a.user.username,
      provider_url: "http://api.test",
    });
    expect(res.body.url).toMatch(/^http:\/\/api\.test\/v1\//);
    expect(res.body).not.toHaveProperty("file_token");
    const content = await call("GET", res.body.url);
    expect(content.status).toBe(200);
    expect((await call("GET", `/oembed?url=${encodeURIComponent(f.url_short)}&maxwidth=20`)).body).toMatchObject({ width: 20, height: 15 });

    await call("PATCH", `/files/${f.id}`, { token: a.token, json: { is_public: false } });
    expect((await call("GET", `/oembed?url=${encodeURIComponent(f.url_short)}`)).status).toBe(404);
  });
});
