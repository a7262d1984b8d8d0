import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { RAW_REPLACEMENTS } from "../../src/config";
import { actor, call, must } from "../support/client";
import * as fx from "../fixtures/media";

// Raw replacement values: `+io.example.core.file` / `+io.example.core.poll` are checked against
// their token and stored as what the token grants (oEmbed, URL, metadata, poll notice), never as
// sent: the writer's file_token must not reach anyone else.

let clock = Math.floor(Date.now() / 1000);
const tick = () => (clock += 4);
let posted = 0;
const SCOPES = "files write_post messages polls";
const OEMBED = "io.example.core.oembed";
const FILE = "+io.example.core.file";
const POLL = "+io.example.core.poll";
const NOTICE = "io.example.core.poll-notice";

type Actor = Awaited<ReturnType<typeof actor>>;
let alice: Actor;
let bob: Actor;

async function upload(token: string, bytes: Uint8Array, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.set("content", new Blob([bytes]), fields.name ?? "photo.png");
  form.set("type", "com.example.photo");
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return (await must(call("POST", "/files", { token, body: form, now: tick() }), 201)).data;
}

const fileValue = (f: { id: string; file_token: string }, format = "oembed", extra: Record<string, unknown> = {}) => ({
  [FILE]: { file_id: f.id, file_token: f.file_token, format },
  ...extra,
});

const createPost = (token: string, raw: unknown) =>
  call("POST", "/posts?include_post_raw=1", { token, json: { text: `look at this ${++posted}`, raw }, now: tick() });

async function postCount(user: Actor) {
  return (await must(call("GET", `/users/${user.user.id}/posts?count=200&include_deleted=1`, { token: user.token }))).data.length;
}

beforeAll(async () => {
  [alice, bob] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
});

describe("+io.example.core.file on posts", () => {
  it("a private image becomes a photo oEmbed that others read only through its file_token_read", async () => {
    const f = await upload(alice.token, fx.png150x120);
    expect(f.is_public).toBe(false);
    const extra = { provider_name: "My App", url: "https://evil.example/x.png", note: "kept" };
    const created = await must(createPost(alice.token, { [OEMBED]: [fileValue(f, "oembed", extra)] }), 201);
    const embed = created.data.raw[OEMBED][0];
    expect(embed).toMatchObject({
      version: "1.0",
      type: "photo",
      width: 150,
      height: 120,
      title: "photo.png",
      file_id: f.id,
      provider_name: "My App", // one of the keys a client may override
      note: "kept", // other values are preserved
      thumbnail_url: embed.url, // smaller than 200×200: its own thumbnail
      thumbnail_width: 150,
      thumbnail_height: 120,
    });
    expect(embed).not.toHaveProperty(FILE);
    expect(embed.url).not.toBe("https://evil.example/x.png"); // the server's url wins
    expect(embed.file_token_read).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    // Stored for posts forever: the URL lasts at least RAW_REPLACEMENTS.urlMinRemainingSeconds.
    expect(Date.parse(embed.url_expires_at) / 1000).toBeGreaterThanOrEqual(clock + RAW_REPLACEMENTS.urlMinRemainingSeconds);

    // What bob sees: the oEmbed, and nowhere the writer's file_token.
    const seen = await must(call("GET", `/posts/${created.data.id}?include_post_raw=1`, { token: bob.token }));
    expect(seen.data.raw[OEMBED][0]).toEqual(embed);
    expect(JSON.stringify(seen)).not.toContain(f.file_token);
    const listed = await must(call("GET", `/users/${alice.user.id}/posts?include_raw=1`, { token: bob.token }));
    expect(JSON.stringify(listed)).not.toContain(f.file_token);

    // Bob opens the file through the read token in the oEmbed, and not without it.
    expect((await call("GET", `/files/${f.id}`, { token: bob.token })).status).toBe(403);
    const opened = await must(call("GET", `/files/${f.id}?file_token_read=${embed.file_token_read}`, { token: bob.token }));
    expect(opened.data).not.toHaveProperty("file_token");
    const content = await SELF.fetch(embed.url, { headers: { "X-Test-Now": String(clock) } });
    expect(content.status).toBe(200);
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(fx.png150x120);
  });

  it("a bad, missing or mismatched value is a 400 naming the field, and no post is created", async () => {
    const f = await upload(alice.token, fx.png);
    const other = await upload(bob.token, fx.png);
    const placeholder = (await must(call("POST", "/files", { token: alice.token, json: { kind: "image", type: "com.example.photo" }, now: tick() }), 201)).data;
    const text = await upload(alice.token, new TextEncoder().encode("plain words\n"), { name: "notes.txt" });
    const before = await postCount(alice);
    const at = `raw.${OEMBED}.0.${FILE}`;
    const cases: [unknown, string][] = [
      [{ [OEMBED]: [fileValue({ id: f.id, file_token: "wrong" })] }, `'${at}.file_token' is not the file's file_token`],
      [{ [OEMBED]: [fileValue({ id: f.id, file_token: other.file_token })] }, `'${at}.file_token'`],
      [{ [OEMBED]: [{ [FILE]: { file_id: f.id, format: "oembed" } }] }, `'${at}.file_token' is required`],
      [{ [OEMBED]: [fileValue({ id: "999999999", file_token: f.file_token })] }, `'${at}.file_id' names no file`],
      [{ [OEMBED]: [{ [FILE]: { file_id: f.id, file_token: f.file_token } }] }, `'${at}.format' must be one of`],
      [{ [OEMBED]: [fileValue(placeholder)] }, `'${at}.file_id' names a file whose content is not uploaded yet`],
      [{ [OEMBED]: [fileValue(text)] }, `'${at}.file_id' names a file that is not an image, video or audio file`],
      [{ "com.example.card": [fileValue(f)] }, `'raw.com.example.card.0.${FILE}.format' oembed is only allowed in ${OEMBED}`],
      [{ [OEMBED]: [{ [FILE]: "nope" }] }, `'${at}' must be an object`],
      [{ [OEMBED]: [{ "+io.example.core.user": { user_id: "1" } }] }, `'raw.${OEMBED}.0.+io.example.core.user' is not a replacement value`],
      // a good value next to a bad one: still nothing stored
      [{ [OEMBED]: [fileValue(f), fileValue({ id: f.id, file_token: "wrong" })] }, `'raw.${OEMBED}.1.${FILE}.file_token'`],
    ];
    for (const [raw, message] of cases) {
      const res = await createPost(alice.token, raw);
      expect([res.status, res.body.meta.error_message], JSON.stringify(raw)).toEqual([400, expect.stringContaining(message)]);
    }
    const many = { [OEMBED]: Array.from({ length: RAW_REPLACEMENTS.perWrite + 1 }, () => fileValue(f)) };
    expect((await createPost(alice.token, many)).status).toBe(400);
    expect(await postCount(alice)).toBe(before);
  });

  it("the url and metadata formats work in any raw type; the values of one write are read in one round trip", async () => {
    const f = await upload(alice.token, fx.png300x250, { is_public: "1" });
    const g = await upload(alice.token, fx.gif);
    const created = await must(createPost(alice.token, { "com.example.gallery": [fileValue(f, "url", { caption: "hi" }), fileValue(g, "metadata")] }), 201);
    const [asUrl, asMeta] = created.data.raw["com.example.gallery"];
    expect(asUrl).toEqual({
      caption: "hi",
      file_id: f.id,
      file_token_read: f.file_token_read,
      url: expect.stringContaining("/v1/files/content/"),
      url_expires_at: expect.any(String),
    });
    expect(asMeta).toMatchObject({ file_id: g.id, kind: "image", mime_type: "image/gif", is_complete: true, is_public: false, image_info: g.image_info });
    expect(asMeta.file_token_read).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(JSON.stringify(created)).not.toContain(g.file_token);

    // Round trips: three values (two files and a poll) cost what one does.
    const poll = (
      await must(
        call("POST", "/polls", {
          token: alice.token,
          json: { type: "com.example.poll", prompt: "Which?", options: [{ text: "a" }, { text: "b" }], duration: 60 },
          now: tick(),
        }),
        201,
      )
    ).data;
    const calls = async (raw: unknown) => {
      const res = await createPost(alice.token, raw);
      expect(res.status, res.text).toBe(201);
      return Number(res.headers.get("x-debug-db-calls"));
    };
    const one = await calls({ [OEMBED]: [fileValue(f)] });
    const three = await calls({ [OEMBED]: [fileValue(f), fileValue(g)], [NOTICE]: [{ [POLL]: { poll_id: poll.id, poll_token: poll.poll_token } }] });
    expect(three).toBe(one);
  });
});

describe("+io.example.core.poll", () => {
  it("becomes the poll notice; a wrong poll_token is a 400 naming it", async () => {
    const poll = (
      await must(
        call("POST", "/polls", {
          token: alice.token,
          json: { type: "com.example.poll", prompt: "Tea or coffee?", options: [{ text: "Tea" }, { text: "Coffee" }], duration: 60 },
          now: tick(),
        }),
        201,
      )
    ).data;
    const created = await must(createPost(alice.token, { [NOTICE]: [{ [POLL]: { poll_id: poll.id, poll_token: poll.poll_token }, kept: 1 }] }), 201);
    const seen = await must(call("GET", `/posts/${created.data.id}?include_post_raw=1`, { token: bob.token }));
    expect(seen.data.raw[NOTICE]).toEqual([
      {
        kept: 1,
        poll_token: poll.poll_token,
        poll_id: poll.id,
        id: poll.id,
        prompt: "Tea or coffee?",
        closed_at: poll.closed_at,
        options: [
          { text: "Tea", position: 1 },
          { text: "Coffee", position: 2 },
        ],
      },
    ]);
    // The notice's token opens the private poll for others.
    expect((await call("GET", `/polls/${poll.id}?poll_token=${poll.poll_token}`, { token: bob.token })).status).toBe(200);

    const before = await postCount(alice);
    const bad = await createPost(alice.token, { [NOTICE]: [{ [POLL]: { poll_id: poll.id, poll_token: "nope" } }] });
    expect([bad.status, bad.body.meta.error_message]).toEqual([
      400,
      expect.stringContaining(`'raw.${NOTICE}.0.${POLL}.poll_token' is not the poll's poll_token`),
    ]);
    const gone = await createPost(alice.token, { [NOTICE]: [{ [POLL]: { poll_id: "999999999", poll_token: poll.poll_token } }] });
    expect(gone.body.meta.error_message).toContain(`'raw.${NOTICE}.0.${POLL}.poll_id' names no poll`);
    expect(await postCount(alice)).toBe(before);
  });
});

describe("other objects with raw", () => {
  it("a message and a channel (create and update) take a file replacement; a bad one writes nothing", async () => {
    const f = await upload(alice.token, fx.png);
    const ch = (
      await must(
        call("POST", "/channels?include_channel_raw=1", {
          token: alice.token,
          json: { type: "com.example.chat", raw: { "com.example.cover": [fileValue(f, "url")] } },
          now: tick(),
        }),
        201,
      )
    ).data;
    expect(ch.raw["com.example.cover"][0]).toMatchObject({ file_id: f.id, file_token_read: expect.any(String), url: expect.any(String) });
    expect(JSON.stringify(ch)).not.toContain(f.file_token);

    const updated = await must(
      call("PUT", `/channels/${ch.id}?include_channel_raw=1`, {
        token: alice.token,
        json: { raw: { "com.example.banner": [fileValue(f, "metadata")] } },
        now: tick(),
      }),
    );
    expect(updated.data.raw["com.example.banner"][0]).toMatchObject({ file_id: f.id, kind: "image" });
    expect(JSON.stringify(updated)).not.toContain(f.file_token);
    const badUpdate = await call("PUT", `/channels/${ch.id}`, {
      token: alice.token,
      json: { raw: { "com.example.banner": [fileValue({ id: f.id, file_token: "x" }, "url")] } },
      now: tick(),
    });
    expect([badUpdate.status, badUpdate.body.meta.error_message]).toEqual([400, expect.stringContaining(`'raw.com.example.banner.0.${FILE}.file_token'`)]);

    const msg = await must(
      call("POST", `/channels/${ch.id}/messages?include_message_raw=1`, {
        token: alice.token,
        json: { text: "pic", raw: { [OEMBED]: [fileValue(f)] } },
        now: tick(),
      }),
      201,
    );
    expect(msg.data.raw[OEMBED][0]).toMatchObject({ type: "photo", file_id: f.id, url: expect.any(String) });
    expect(JSON.stringify(msg)).not.toContain(f.file_token);
    const badMsg = await call("POST", `/channels/${ch.id}/messages`, {
      token: alice.token,
      json: { text: "pic", raw: { [OEMBED]: [fileValue({ id: f.id, file_token: "x" })] } },
      now: tick(),
    });
    expect(badMsg.status).toBe(400);
    const channel = await must(call("GET", `/channels/${ch.id}?include_channel_raw=1`, { token: alice.token }));
    expect(channel.data.counts.messages).toBe(1);
    expect(Object.keys(channel.data.raw).sort()).toEqual(["com.example.banner", "com.example.cover"]);
  });

  it("a poll's raw takes a file replacement", async () => {
    const f = await upload(alice.token, fx.png);
    const poll = (
      await must(
        call("POST", "/polls?include_poll_raw=1", {
          token: alice.token,
          json: { type: "com.example.poll", prompt: "Nice?", options: [{ text: "y" }, { text: "n" }], duration: 60, raw: { [OEMBED]: [fileValue(f)] } },
          now: tick(),
        }),
        201,
      )
    ).data;
    const seen = await must(call("GET", `/polls/${poll.id}?include_poll_raw=1&poll_token=${poll.poll_token}`, { token: bob.token }));
    expect(seen.data.raw[OEMBED][0]).toMatchObject({ type: "photo", file_id: f.id });
    expect(JSON.stringify(seen)).not.toContain(f.file_token);
  });
});
