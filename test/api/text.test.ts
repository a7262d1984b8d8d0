import { describe, expect, it } from "vitest";
import { actor, appToken, call, makeApp, makeUser } from "../support/client";

describe("POST /text/process", () => {
  it("processes post text: entities in code points, html, known mentions only", async () => {
    const { token } = await actor();
    const bob = await makeUser();
    const text = `😀 @${bob.username} and @nobody_at_all read [docs](https://example.com/docs "Docs") #café`;
    const res = await call("POST", "/text/process", { token, json: { text } });
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d.text).toBe(`😀 @${bob.username} and @nobody_at_all read docs [example.com] #café`);
    // The emoji is not a word, so the mention is leading; positions count the emoji as one.
    expect(d.entities.mentions).toEqual([{ pos: 2, len: bob.username.length + 1, text: bob.username, id: bob.id, is_leading: true }]);
    expect(d.mentions).toEqual(d.entities.mentions);
    const link = d.entities.links[0];
    expect(link).toMatchObject({ text: "docs", url: "https://example.com/docs", title: "Docs", amended_len: "docs [example.com]".length });
    expect(d.entities.tags).toEqual([{ pos: [...d.text].length - 5, len: 5, text: "café" }]);
    expect(d.html).toMatch(/^<span itemscope itemtype="https:\/\/schema\.example\.io\/Post">/);
    expect(d.html).toContain(`<span data-mention-id="${bob.id}" data-mention-name="${bob.username}" itemprop="mention">@${bob.username}</span>`);
    expect(d.html).toContain('<a href="https://example.com/docs" title="Docs">docs</a> [example.com]');
  });

  it("accepts 256 emoji for a post and refuses 257 naming the limit", async () => {
    const { token } = await actor();
    const ok = await call("POST", "/text/process", { token, json: { text: "😀".repeat(256) } });
    expect(ok.status).toBe(200);
    const over = await call("POST", "/text/process", { token, json: { text: "😀".repeat(257) } });
    expect(over.status).toBe(400);
    expect(over.body.meta.error_message).toBe("Bad Request: 'text' is longer than 256 characters");
  });

  it("uses the message limit (2048) and the Message itemtype with object_type=message", async () => {
    const { token } = await actor();
    const ok = await call("POST", "/text/process?object_type=message", { token, json: { text: "a".repeat(2048) } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.html).toContain("/Message");
    const over = await call("POST", "/text/process?object_type=message", { token, json: { text: "a".repeat(2049) } });
    expect(over.status).toBe(400);
    expect(over.body.meta.error_message).toContain("2048");
    const bad = await call("POST", "/text/process?object_type=poll", { token, json: { text: "x" } });
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("'object_type'");
  });

  it("does not count markdown link urls toward the limit", async () => {
    const { token } = await actor();
    const text = "a".repeat(240) + " [x](https://example.com/" + "p".repeat(100) + ")";
    const res = await call("POST", "/text/process", { token, json: { text } });
    expect(res.status).toBe(200);
  });

  it("honours entities.parse_links=0 and parse_markdown_links=0", async () => {
    const { token } = await actor();
    const text = "see example.com and [a](https://b.example.org)";
    const off = await call("POST", "/text/process", { token, json: { text, entities: { parse_links: 0, parse_markdown_links: 0 } } });
    expect(off.body.data.entities.links).toEqual([]);
    expect(off.body.data.text).toBe(text);
    const on = await call("POST", "/text/process", { token, json: { text } });
    expect(on.body.data.entities.links.length).toBe(2);
  });

  it("escapes HTML", async () => {
    const { token } = await actor();
    const res = await call("POST", "/text/process", { token, json: { text: `<b>"x" & 'y'</b>\nnext` } });
    expect(res.body.data.html).toContain("&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;<br>next");
  });

  it("needs a token (any kind), JSON, and a string text", async () => {
    expect((await call("POST", "/text/process", { json: { text: "hi" } })).status).toBe(401);
    const app = await makeApp();
    expect((await call("POST", "/text/process", { token: await appToken(app), json: { text: "hi" } })).status).toBe(200);
    const { token } = await actor();
    expect((await call("POST", "/text/process", { token, form: { text: "hi" } })).status).toBe(415);
    const noText = await call("POST", "/text/process", { token, json: { txt: "hi" } });
    expect(noText.status).toBe(400);
    expect(noText.body.meta.error_message).toContain("'text'");
  });
});
