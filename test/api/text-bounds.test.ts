import { describe, expect, it } from "vitest";
import { actor, call, makeUser, type ApiResponse } from "../support/client";
import { testClock } from "../support/fixtures";

// Issue 26: text is one thing on both backends (NUL and unpaired surrogates are a 400 naming the
// field), no statement exceeds D1's 100 bound parameters, and inputs whose work grows with their
// content are bounded. Every case runs on D1 and on Postgres.

const tick = testClock();

const NUL = "a\u0000b";
const LONE = "a\ud800b";

/** A 400 whose message names `field`. */
function refused(res: ApiResponse, field: string | RegExp) {
  expect(res.status, res.text).toBe(400);
  expect(res.body.meta.error_message).toMatch(typeof field === "string" ? `'${field}'` : field);
}

async function channel(token: string, extra: Record<string, unknown> = {}) {
  const res = await call("POST", "/channels", { token, json: { type: "com.example.chat", acl: { read: { public: true } }, ...extra }, now: tick() });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** `@a0 @a1 …`: `n` distinct short names that exist or not. */
const mentions = (n: number) => Array.from({ length: n }, (_, i) => `@${i.toString(36).padStart(2, "0")}`).join(" ");

describe("search terms and query strings with a NUL", () => {
  it("are a 400 naming the parameter, never a 500", async () => {
    const a = await actor("messages public_messages");
    const ch = await channel(a.token);
    for (const path of [
      "/posts/search?q=a%00b",
      "/users/search?q=a%00",
      `/channels/messages/search?channel_ids=${ch.id}&q=a%00`,
      "/channels/search?q=%00",
      "/polls/search?raw_types=a%00",
      "/posts/tag/a%00b",
    ]) {
      const res = await call("GET", path, { token: a.token });
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      if (path.includes("?")) expect(res.body.meta.error_message).toMatch(/contains a NUL character or an unpaired surrogate/);
    }
    refused(await call("GET", "/posts/search?q=a%00b"), "q");
    refused(await call("GET", "/users/search?q=ok&x%00=1"), /'x\?' contains a NUL/);
    // A percent-encoded lone surrogate is not UTF-8: it decodes to U+FFFD and is searched as text.
    expect((await call("GET", "/posts/search?q=a%ED%A0%80")).status).toBe(200);
  });
});

describe("a NUL or an unpaired surrogate in stored text", () => {
  it("is a 400 naming the field on every kind of text, and nothing is stored", async () => {
    const a = await actor("write_post messages public_messages update_profile presence polls files");
    const ch = await channel(a.token);
    const { body: post } = await call("POST", "/posts", { token: a.token, json: { text: "a post" }, now: tick() });
    for (const bad of [NUL, LONE]) {
      refused(await call("POST", "/posts", { token: a.token, json: { text: bad }, now: tick() }), "text");
      refused(
        await call("POST", "/posts", { token: a.token, json: { text: "ok", raw: { "com.example.x": [{ deep: { list: [1, bad] } }] } }, now: tick() }),
        "raw.com.example.x.0.deep.list.1",
      );
      refused(
        await call("POST", "/posts", { token: a.token, json: { text: "ok", raw: { [`com.example.${bad}`]: [{}] } }, now: tick() }),
        /'raw\.com\.example\.a\?b' /,
      );
      refused(await call("POST", `/channels/${ch.id}/messages`, { token: a.token, json: { text: bad }, now: tick() }), "text");
      refused(await call("PATCH", "/users/me", { token: a.token, json: { name: bad }, now: tick() }), "name");
      refused(await call("PATCH", "/users/me", { token: a.token, json: { content: { text: bad } }, now: tick() }), "content.text");
      refused(await call("PUT", `/posts/${post.data.id}/bookmark`, { token: a.token, json: { note: bad }, now: tick() }), "note");
      refused(await call("PUT", "/users/me/presence", { token: a.token, json: { presence: bad }, now: tick() }), "presence");
      refused(
        await call("POST", "/channels", { token: a.token, json: { type: "com.example.chat", raw: { "com.example.y": [{ v: bad }] } }, now: tick() }),
        "raw.com.example.y.0.v",
      );
      refused(
        await call("POST", "/polls", { token: a.token, json: { type: "com.example.poll", prompt: bad, options: [{ text: "x" }, { text: "y" }] }, now: tick() }),
        "prompt",
      );
      refused(
        await call("POST", "/polls", { token: a.token, json: { type: "com.example.poll", prompt: "p", options: [{ text: "x" }, { text: bad }] }, now: tick() }),
        "options.1.text",
      );
      refused(await call("POST", "/files", { token: a.token, json: { type: "com.example.test", kind: "other", name: `f${bad}.txt` }, now: tick() }), "name");
    }
    // Form bodies too (a lone surrogate cannot be form-encoded: it is sent as U+FFFD).
    refused(await call("PUT", "/users/me/presence", { token: a.token, form: { presence: NUL }, now: tick() }), "presence");
    // A multipart upload's file name (RFC 5987 `filename*`) is text too.
    const form = new FormData();
    form.append("type", "com.example.test");
    form.append("content", new Blob(["hi"], { type: "text/plain" }), "x");
    const body = await new Response(form).text();
    const boundary = body.slice(2, body.indexOf("\r\n"));
    const withNul = body.replace(/filename="x"/, `filename="x"; filename*=UTF-8''a%00b`);
    refused(
      await call("POST", "/files", { token: a.token, body: withNul, headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` }, now: tick() }),
      "content.filename",
    );

    // Nothing was stored: the profile and the stream are as they were; paired surrogates are fine.
    const me = await call("GET", "/users/me", { token: a.token });
    expect(me.body.data.name ?? "").not.toContain("\u0000");
    const ok = await call("POST", "/posts", { token: a.token, json: { text: "emoji 😀 ok" }, now: tick() });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.content.text).toBe("emoji 😀 ok");
  });

  it("a JSON body nested deeper than 32 levels is a 400", async () => {
    const a = await actor("write_post");
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    refused(
      await call("POST", "/posts", { token: a.token, json: { text: "deep", raw: { "com.example.deep": [deep] } }, now: tick() }),
      /nested deeper than 32 levels/,
    );
    let hostile = "1";
    for (let i = 0; i < 100_000; i++) hostile = `[${hostile}]`;
    const res = await call("POST", "/posts", {
      token: a.token,
      body: `{"text":"x","raw":{"com.example.d":[${hostile}]}}`,
      headers: { "Content-Type": "application/json" },
      now: tick(),
    });
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });
});

describe("mentions, tags and links are bounded", () => {
  it("a message with 100 distinct mentions is created; 101 or 500 are a 400 naming 'text'", async () => {
    const a = await actor("messages public_messages");
    const b = await makeUser();
    const ch = await channel(a.token);
    const hundred = `@${b.username} ${mentions(99)}`;
    const ok = await call("POST", `/channels/${ch.id}/messages`, { token: a.token, json: { text: hundred }, now: tick() });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.content.entities.mentions.map((m: { id: string }) => m.id)).toContain(b.id);
    for (const n of [101, 500]) {
      const text = mentions(n);
      expect(text.length).toBeLessThanOrEqual(2048);
      const res = await call("POST", `/channels/${ch.id}/messages`, { token: a.token, json: { text }, now: tick() });
      refused(res, "text");
      expect(res.body.meta.error_message).toMatch(/more than 100 distinct @names/);
    }
    // The same mention many times is one mention.
    const same = await call("POST", `/channels/${ch.id}/messages`, {
      token: a.token,
      json: { text: `@${b.username} `.repeat(300).slice(0, 2048) },
      now: tick(),
    });
    expect(same.status, same.text).toBe(201);
  });

  it("100,000 mentions are a 400 at once, sent whole or to /text/process", async () => {
    const a = await actor("messages public_messages write_post");
    const ch = await channel(a.token);
    const huge = mentions(100_000);
    const started = Date.now();
    const res = await call("POST", `/channels/${ch.id}/messages`, { token: a.token, json: { text: huge }, now: tick() });
    expect(res.status, res.text.slice(0, 300)).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const processed = await call("POST", "/text/process?object_type=message", { token: a.token, json: { text: huge } });
    expect(processed.status).toBeGreaterThanOrEqual(400);
    expect(processed.status).toBeLessThan(500);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("more than 100 tags or links are a 400; a text sent over 4x its limit is a 400 before processing", async () => {
    const a = await actor("messages public_messages write_post");
    const ch = await channel(a.token);
    const tags = Array.from({ length: 101 }, (_, i) => `#t${i.toString(36)}`).join(" ");
    refused(await call("POST", `/channels/${ch.id}/messages`, { token: a.token, json: { text: tags }, now: tick() }), /'text' has more than 100 tags/);
    const links = Array.from({ length: 101 }, (_, i) => `x${i}.io`).join(" ");
    refused(await call("POST", `/channels/${ch.id}/messages`, { token: a.token, json: { text: links }, now: tick() }), /'text' has more than 100 links/);
    refused(await call("POST", "/posts", { token: a.token, json: { text: "x".repeat(1025) }, now: tick() }), /'text' is longer than 1024 characters as sent/);
    // Markdown link targets are not counted: a post of 256 counted characters may be sent longer.
    const md = "a".repeat(200) + ` [x](https://example.com/${"p".repeat(500)})`;
    expect((await call("POST", "/posts", { token: a.token, json: { text: md }, now: tick() })).status).toBe(201);
  });
});

describe("lists never exceed the database's parameter limit", () => {
  it("an ids list over 1000 is a 400 naming 'ids' on every lookup by ids", async () => {
    const a = await actor("messages public_messages files polls");
    const many = Array.from({ length: 1001 }, (_, i) => i + 1).join(",");
    for (const path of ["/posts", "/users", "/channels", "/channels/messages", "/files", "/polls", "/users/me/polls/responses"]) {
      const res = await call("GET", `${path}?ids=${many}`, { token: a.token });
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(res.body.meta.error_message).toMatch(/'ids' may list at most 1000 ids/);
    }
    // 1000 ids are one JSON parameter: fine on both backends.
    for (const path of ["/posts", "/users", "/channels", "/channels/messages", "/files", "/polls"]) {
      const res = await call("GET", `${path}?ids=${Array.from({ length: 1000 }, (_, i) => i + 1).join(",")}`, { token: a.token });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
  });

  it("long filter lists of the searches are one parameter each", async () => {
    const a = await actor("messages public_messages polls");
    const list = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}`).join(",");
    const paths = [
      `/channels/search?categories=${Array.from({ length: 130 }, (_, i) => i.toString(36)).join(",")}`,
      `/channels/search?raw_types=${list(150, "com.example.r")}`,
      `/polls/search?poll_types=${list(150, "com.example.p")}`,
      `/polls/search?exclude_poll_types=${list(150, "com.example.p")}`,
      `/users/me/polls?poll_types=${list(150, "com.example.p")}`,
      `/posts/search?tags=${list(150, "t")}&mentions=${list(150, "m")}`,
    ];
    for (const path of paths) {
      const res = await call("GET", path, { token: a.token });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
  });
});
