import { beforeAll, describe, expect, it } from "vitest";
import { actor, call, must } from "../support/client";
import * as fx from "../fixtures/media";
import { testClock } from "../support/fixtures";

// The core raw types (the reference's io.pnut.core.*, io.example.core.* here) are checked against
// their documented shapes on every write that takes raw: a wrong shape is a 400 naming the field
// and nothing is written; the chat room description gets entities; an invite gets the room's name.

const tick = testClock();
let n = 0;
const SCOPES = "files write_post messages public_messages polls update_profile";
const FILE = "+io.example.core.file";

type Actor = Awaited<ReturnType<typeof actor>>;
let alice: Actor;
let bob: Actor;

const createPost = (token: string, raw: unknown) => call("POST", "/posts?include_post_raw=1", { token, json: { text: `raw check ${++n}`, raw }, now: tick() });
const sendPm = (token: string, to: string, raw: unknown) =>
  call("POST", "/channels/pm/messages?include_message_raw=1", { token, json: { destinations: [to], text: `pm ${++n}`, raw }, now: tick() });
const createChannel = (token: string, body: Record<string, unknown>) =>
  call("POST", "/channels?include_channel_raw=1", { token, json: { type: "io.example.core.chat", acl: { read: { public: true } }, ...body }, now: tick() });

async function postCount(user: Actor) {
  return (await must(call("GET", `/users/${user.user.id}/posts?count=200&include_deleted=1`, { token: user.token }))).data.length;
}

/** A 400 whose message names `field`, and no post written (for post writes). */
async function refused(res: Promise<{ status: number; body: any }>, field: string, detail?: RegExp) {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.meta.code).toBe(400);
  expect(r.body.meta.error_message).toContain(`'${field}'`);
  if (detail) expect(r.body.meta.error_message).toMatch(detail);
}

async function upload(token: string, bytes: Uint8Array) {
  const form = new FormData();
  form.set("content", new Blob([bytes]), "image.png");
  form.set("type", "com.example.photo");
  return (await must(call("POST", "/files", { token, body: form, now: tick() }), 201)).data;
}

/** The fixture PNG with its header's size set to `w`×`h` (sizes are read from the header). */
function pngSized(w: number, h: number): Uint8Array {
  const b = fx.png.slice();
  const v = new DataView(b.buffer, b.byteOffset);
  v.setUint32(16, w);
  v.setUint32(20, h);
  return b;
}

beforeAll(async () => {
  [alice, bob] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
});

describe("io.example.core.language", () => {
  it("takes an ISO 639-1 code on posts and private messages; refuses others naming the field, writing nothing", async () => {
    const ok = await must(createPost(alice.token, { "io.example.core.language": [{ language: "en" }] }), 201);
    expect(ok.data.raw["io.example.core.language"]).toEqual([{ language: "en" }]);
    const before = await postCount(alice);
    await refused(
      createPost(alice.token, { "io.example.core.language": [{ language: "en" }, { language: "english" }] }),
      "raw.io.example.core.language[1].language",
      /ISO 639-1/,
    );
    await refused(createPost(alice.token, { "io.example.core.language": [{}] }), "raw.io.example.core.language[0].language", /is required/);
    expect(await postCount(alice)).toBe(before);
    await must(sendPm(alice.token, bob.user.id, { "io.example.core.language": [{ language: "ja" }] }), 201);
    await refused(
      sendPm(alice.token, bob.user.id, { "io.example.core.language": [{ language: 5 }] }),
      "raw.io.example.core.language[0].language",
      /must be a string/,
    );
  });
});

describe("io.example.core.crosspost and fallback_url", () => {
  it("check their URLs and the source pair", async () => {
    const crosspost = { canonical_url: "https://social.example/status/1", source: { name: "Social", url: "https://social.example" }, user: { username: "x" } };
    await must(
      createPost(alice.token, { "io.example.core.crosspost": [crosspost], "io.example.core.fallback_url": [{ url: "https://web.example/p/1" }] }),
      201,
    );
    await refused(
      createPost(alice.token, { "io.example.core.crosspost": [{ ...crosspost, canonical_url: "not a url" }] }),
      "raw.io.example.core.crosspost[0].canonical_url",
      /http or https URL/,
    );
    await refused(
      createPost(alice.token, { "io.example.core.crosspost": [{ ...crosspost, source: { name: "Social" } }] }),
      "raw.io.example.core.crosspost[0].source.url",
      /is required/,
    );
    await refused(createPost(alice.token, { "io.example.core.fallback_url": [{ url: "javascript:alert(1)" }] }), "raw.io.example.core.fallback_url[0].url");
  });
});

describe("io.example.core.chat-settings", () => {
  it("is checked on channels, its description processed like a post's text", async () => {
    const text = `Come in @${bob.user.username}, see https://music.example.com #jazz`;
    const ch = (
      await must(
        createChannel(alice.token, { raw: { "io.example.core.chat-settings": [{ name: "Lounge", description: { text }, categories: ["fun", "community"] }] } }),
        201,
      )
    ).data;
    const description = ch.raw["io.example.core.chat-settings"][0].description;
    expect(description.text).toBe(text);
    expect(description.html).toContain("itemtype=");
    expect(description.entities.mentions).toMatchObject([{ id: bob.user.id, text: bob.user.username }]);
    expect(description.entities.links).toMatchObject([{ url: "https://music.example.com" }]);
    expect(description.entities.tags).toMatchObject([{ text: "jazz" }]);

    // The pre-1.0 plain string description is taken too.
    const plain = (await must(createChannel(alice.token, { raw: { "io.example.core.chat-settings": [{ name: "Old", description: "just #words" }] } }), 201))
      .data;
    expect(plain.raw["io.example.core.chat-settings"][0].description).toMatchObject({ text: "just #words", entities: { tags: [{ text: "words" }] } });

    const settings = (v: Record<string, unknown>) => ({ raw: { "io.example.core.chat-settings": [{ name: "Room", ...v }] } });
    await refused(
      createChannel(alice.token, settings({ categories: ["fun", "sports"] })),
      "raw.io.example.core.chat-settings[0].categories[1]",
      /must be one of/,
    );
    await refused(
      createChannel(alice.token, settings({ categories: ["fun", "tech", "event", "general"] })),
      "raw.io.example.core.chat-settings[0].categories",
      /at most 3/,
    );
    await refused(createChannel(alice.token, settings({ name: " " })), "raw.io.example.core.chat-settings[0].name");
    await refused(
      createChannel(alice.token, settings({ description: { text: "x".repeat(257) } })),
      "raw.io.example.core.chat-settings[0].description.text",
      /256/,
    );
    await refused(
      createChannel(alice.token, settings({ description: { html: "<b>" } })),
      "raw.io.example.core.chat-settings[0].description",
      /object with .text./,
    );
    await refused(
      createPost(alice.token, { "io.example.core.chat-settings": [{ name: "Room" }] }),
      "raw.io.example.core.chat-settings",
      /only be attached to channels/,
    );

    // An update with a wrong shape changes nothing.
    await refused(
      call("PUT", `/channels/${ch.id}`, {
        token: alice.token,
        json: { raw: { "io.example.core.chat-settings": [{ description: { text: "no name" } }] } },
        now: tick(),
      }),
      "raw.io.example.core.chat-settings[0].name",
    );
    const after = (await must(call("GET", `/channels/${ch.id}?include_channel_raw=1`, { token: alice.token }))).data;
    expect(after.raw["io.example.core.chat-settings"][0].name).toBe("Lounge");
    // The search reads the description's text (not its html or entities).
    const found = (await must(call("GET", `/channels/search?q=${encodeURIComponent("music.example")}`))).data.map((c: { id: string }) => c.id);
    expect(found).toContain(ch.id);
    expect((await must(call("GET", "/channels/search?q=itemtype"))).data.map((c: { id: string }) => c.id)).not.toContain(ch.id);
  });
});

describe("io.example.core.channel.invite", () => {
  it("names a channel the writer can read, and gets a chat room's name", async () => {
    const room = (await must(createChannel(alice.token, { raw: { "io.example.core.chat-settings": [{ name: "Invite Room" }] } }), 201)).data;
    const made = await must(createPost(bob.token, { "io.example.core.channel.invite": [{ channel_id: room.id, name: "forged" }] }), 201);
    expect(made.data.raw["io.example.core.channel.invite"]).toEqual([{ channel_id: room.id, name: "Invite Room" }]);
    const hidden = (await must(createChannel(alice.token, { acl: {}, raw: { "io.example.core.chat-settings": [{ name: "Secret" }] } }), 201)).data;
    await refused(
      createPost(bob.token, { "io.example.core.channel.invite": [{ channel_id: hidden.id }] }),
      "raw.io.example.core.channel.invite[0].channel_id",
      /no channel you can read/,
    );
    await refused(
      createPost(bob.token, { "io.example.core.channel.invite": [{ channel_id: "999999999" }] }),
      "raw.io.example.core.channel.invite[0].channel_id",
    );
    await refused(
      createPost(bob.token, { "io.example.core.channel.invite": [{ channel_id: "abc" }] }),
      "raw.io.example.core.channel.invite[0].channel_id",
      /object id/,
    );
  });
});

describe("io.example.core.oembed and oembed.metadata", () => {
  const photo = { version: "1.0", type: "photo", width: 10, height: 10, url: "https://img.example/p.jpg" };
  it("oembed: on posts, messages, channels and polls (not files), with the fields its type requires", async () => {
    await must(createPost(alice.token, { "io.example.core.oembed": [photo, { version: "1.0", type: "rich", width: 5, height: 5, html: "<p>" }] }), 201);
    await must(
      sendPm(alice.token, bob.user.id, { "io.example.core.oembed": [{ version: "1.0", type: "audio", url: "https://a.example/x.mp3", duration: 3 }] }),
      201,
    );
    const { url: _url, ...noUrl } = photo;
    await refused(createPost(alice.token, { "io.example.core.oembed": [noUrl] }), "raw.io.example.core.oembed[0].url", /required of a photo/);
    await refused(createPost(alice.token, { "io.example.core.oembed": [{ ...photo, version: "2.0" }] }), "raw.io.example.core.oembed[0].version");
    await refused(
      createPost(alice.token, { "io.example.core.oembed": [{ ...photo, thumbnail_url: "https://img.example/t.jpg" }] }),
      "raw.io.example.core.oembed[0].thumbnail_width",
    );
    await refused(
      sendPm(alice.token, bob.user.id, { "io.example.core.oembed": [{ version: "1.0", type: "audio", url: "https://a.example/x.mp3" }] }),
      "raw.io.example.core.oembed[0].duration",
    );
    await must(createChannel(alice.token, { raw: { "io.example.core.oembed": [photo] } }), 201);
    const f = await upload(alice.token, fx.png);
    await refused(
      call("PATCH", `/files/${f.id}`, { token: alice.token, json: { raw: { "io.example.core.oembed": [photo] } }, now: tick() }),
      "raw.io.example.core.oembed",
      /only be attached to posts, messages, channels and polls/,
    );
  });

  it("oembed.metadata: on files only", async () => {
    const f = await upload(alice.token, fx.png);
    const patched = await must(
      call("PATCH", `/files/${f.id}?include_file_raw=1`, { token: alice.token, json: { raw: { "io.example.core.oembed.metadata": [photo] } }, now: tick() }),
    );
    expect(patched.data.raw["io.example.core.oembed.metadata"]).toEqual([photo]);
    await refused(
      call("PATCH", `/files/${f.id}`, {
        token: alice.token,
        json: { raw: { "io.example.core.oembed.metadata": [{ ...photo, type: "video", html: undefined }] } },
        now: tick(),
      }),
      "raw.io.example.core.oembed.metadata[0].html",
    );
    const still = (await must(call("GET", `/files/${f.id}?include_file_raw=1`, { token: alice.token }))).data;
    expect(still.raw["io.example.core.oembed.metadata"]).toEqual([photo]);
    await refused(createPost(alice.token, { "io.example.core.oembed.metadata": [photo] }), "raw.io.example.core.oembed.metadata", /only be attached to files/);
  });
});

describe("io.example.core.poll-notice", () => {
  it("is made by +io.example.core.poll; one written out by hand must have the notice's shape", async () => {
    const poll = (
      await must(
        call("POST", "/polls", {
          token: alice.token,
          json: { type: "com.example.poll", prompt: "Tea?", options: [{ text: "Yes" }, { text: "No" }] },
          now: tick(),
        }),
        201,
      )
    ).data;
    const made = await must(
      createPost(alice.token, { "io.example.core.poll-notice": [{ "+io.example.core.poll": { poll_id: poll.id, poll_token: poll.poll_token } }] }),
      201,
    );
    const notice = made.data.raw["io.example.core.poll-notice"][0];
    await must(createPost(bob.token, { "io.example.core.poll-notice": [notice] }), 201);
    await refused(
      createPost(bob.token, { "io.example.core.poll-notice": [{ ...notice, options: notice.options.slice(0, 1) }] }),
      "raw.io.example.core.poll-notice[0].options",
      /at least 2/,
    );
    await refused(
      createPost(bob.token, { "io.example.core.poll-notice": [{ ...notice, closed_at: "tomorrow" }] }),
      "raw.io.example.core.poll-notice[0].closed_at",
      /ISO 8601/,
    );
  });
});

describe("io.example.core.channel.avatar and channel.cover", () => {
  it("are a metadata file replacement of an image of the reference's size", async () => {
    const avatar = await upload(alice.token, pngSized(200, 200));
    const cover = await upload(alice.token, pngSized(680, 340));
    const value = (f: { id: string; file_token: string }) => [{ [FILE]: { file_id: f.id, file_token: f.file_token, format: "metadata" } }];
    const ch = (
      await must(createChannel(alice.token, { raw: { "io.example.core.channel.avatar": value(avatar), "io.example.core.channel.cover": value(cover) } }), 201)
    ).data;
    expect(ch.raw["io.example.core.channel.avatar"][0]).toMatchObject({ file_id: avatar.id, image_info: { width: 200, height: 200 } });
    await refused(
      createChannel(alice.token, { raw: { "io.example.core.channel.avatar": value(cover) } }),
      "raw.io.example.core.channel.avatar[0].image_info.width",
      /200×200/,
    );
    await refused(
      createChannel(alice.token, { raw: { "io.example.core.channel.cover": [{ file_id: cover.id, image_info: { width: 680, height: 340 } }] } }),
      `raw.io.example.core.channel.cover[0].${FILE}`,
      /format 'metadata'/,
    );
    await refused(
      createPost(alice.token, { "io.example.core.channel.avatar": value(avatar) }),
      "raw.io.example.core.channel.avatar",
      /only be attached to channels/,
    );
  });
});

describe("other writes and types", () => {
  it("polls, files, the user profile and channel updates are checked; unknown core types refused; other types kept as sent", async () => {
    const bad = { "io.example.core.language": [{ language: "xyz" }] };
    const field = "raw.io.example.core.language[0].language";
    await refused(
      call("POST", "/polls", {
        token: alice.token,
        json: { type: "com.example.poll", prompt: "Q?", options: [{ text: "a" }, { text: "b" }], raw: bad },
        now: tick(),
      }),
      field,
    );
    const form = new FormData();
    form.set("content", new Blob([fx.png]), "x.png");
    form.set("type", "com.example.photo");
    form.set("raw", JSON.stringify(bad));
    await refused(call("POST", "/files", { token: alice.token, body: form, now: tick() }), field);
    await must(call("PATCH", "/users/me", { token: alice.token, json: { raw: { "io.example.core.language": [{ language: "de" }] } }, now: tick() }));
    await refused(call("PATCH", "/users/me", { token: alice.token, json: { raw: bad }, now: tick() }), field);
    const me = (await must(call("GET", "/users/me?include_user_raw=1", { token: alice.token }))).data;
    expect(me.raw["io.example.core.language"]).toEqual([{ language: "de" }]);

    await refused(createPost(alice.token, { "io.example.core.mood": [{ x: 1 }] }), "raw.io.example.core.mood", /not a core raw type/);
    const free = { "com.example.anything": [{ language: 5, url: "nope" }] };
    expect((await must(createPost(alice.token, free), 201)).data.raw).toEqual(free);
  });
});
