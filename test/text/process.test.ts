import { describe, expect, it } from "vitest";
import {
  MESSAGE_MAX_LENGTH,
  POST_MAX_LENGTH,
  codePointLength,
  mentionCandidates,
  normalizeTag,
  processText,
  withObjectId,
  type TextOptions,
} from "../../src/text";

const SCHEMA = "https://schema.example.io";
const USERS = new Map(
  ["alice", "bob", "carol", "dave", "user_1", "a1234567890123456789"].map((n) => [n, { id: `${n.length}00${n.charCodeAt(0)}`, username: n }]),
);
const idOf = (name: string) => USERS.get(name)!.id;

function proc(text: string, opts: Partial<TextOptions> = {}) {
  return processText(text, { schemaBase: SCHEMA, itemType: "Post", users: USERS, ...opts });
}
const wrap = (inner: string, type = "Post") => `<span itemscope itemtype="${SCHEMA}/${type}">${inner}</span>`;
const mentionHtml = (name: string) => `<span data-mention-id="${idOf(name)}" data-mention-name="${name}" itemprop="mention">@${name}</span>`;
const tagHtml = (tag: string) => `<span data-tag-name="${tag}" itemprop="tag">#${tag}</span>`;

describe("plain text and html", () => {
  it("wraps in an itemscope span of the item type", () => {
    expect(proc("hello")).toEqual({
      text: "hello",
      html: wrap("hello"),
      entities: { links: [], mentions: [], tags: [] },
      length: 5,
    });
    expect(proc("hi", { itemType: "Message" }).html).toBe(wrap("hi", "Message"));
    expect(proc("").html).toBe(wrap(""));
    expect(proc("").length).toBe(0);
  });

  it("escapes < > & \" ' and turns newlines into <br>", () => {
    const r = proc(`<b>"Tom" & 'Jerry'</b>\nline 2\r\nline 3`);
    expect(r.text).toBe(`<b>"Tom" & 'Jerry'</b>\nline 2\r\nline 3`);
    expect(r.html).toBe(wrap("&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;<br>line 2<br>line 3"));
    expect(r.entities).toEqual({ links: [], mentions: [], tags: [] });
  });

  it("does not double-escape entities typed by the user", () => {
    expect(proc("&amp; &lt;script&gt;").html).toBe(wrap("&amp;amp; &amp;lt;script&amp;gt;"));
  });
});

describe("links", () => {
  it("finds bare links with a known TLD, adding http:// when there is no scheme", () => {
    const r = proc("see example.com/a?b=1, https://Foo.org/x. and ftp://files.example.net/f gopher://gopher.floodgap.com");
    expect(r.entities.links).toEqual([
      { pos: 4, len: 17, text: "example.com/a?b=1", url: "http://example.com/a?b=1" },
      { pos: 23, len: 17, text: "https://Foo.org/x", url: "https://Foo.org/x" },
      { pos: 46, len: 25, text: "ftp://files.example.net/f", url: "ftp://files.example.net/f" },
      { pos: 72, len: 28, text: "gopher://gopher.floodgap.com", url: "gopher://gopher.floodgap.com" },
    ]);
    expect(r.html).toBe(
      wrap(
        'see <a href="http://example.com/a?b=1">example.com/a?b=1</a>, ' +
          '<a href="https://Foo.org/x">https://Foo.org/x</a>. and ' +
          '<a href="ftp://files.example.net/f">ftp://files.example.net/f</a> ' +
          '<a href="gopher://gopher.floodgap.com">gopher://gopher.floodgap.com</a>',
      ),
    );
    expect(r.length).toBe(codePointLength(r.text));
  });

  it("does not link unknown TLDs, other schemes, e-mail addresses or file names", () => {
    const r = proc("foo.notatld mailto:a@example.com javascript:alert(1) me@example.com archive.tar.bz2 http://localhost:8080 //example.com");
    expect(r.entities.links).toEqual([]);
  });

  it("leaves trailing sentence punctuation out of the link", () => {
    const r = proc("go to http://example.com/path, or http://example.com/a: ok");
    expect(r.entities.links.map((l) => l.text)).toEqual(["http://example.com/path", "http://example.com/a"]);
  });

  it("escapes link urls and texts in html", () => {
    const r = proc("http://example.com/?a=1&b='2'");
    expect(r.entities.links[0].url).toBe("http://example.com/?a=1&b='2'");
    expect(r.html).toBe(wrap('<a href="http://example.com/?a=1&amp;b=&#39;2&#39;">http://example.com/?a=1&amp;b=&#39;2&#39;</a>'));
  });

  it("parse_links=0 turns bare links off (markdown links stay)", () => {
    const r = proc("example.com and [site](https://example.org)", { parseLinks: false });
    expect(r.text).toBe("example.com and site [example.org]");
    expect(r.entities.links).toEqual([{ pos: 16, len: 4, text: "site", url: "https://example.org", amended_len: 18 }]);
  });
});

describe("markdown links", () => {
  it("becomes `anchor [host]`; url, title and host do not count toward the length", () => {
    const r = proc('Read [my post](https://blog.example.com/p/1 "A <title>") now');
    expect(r.text).toBe("Read my post [blog.example.com] now");
    expect(r.entities.links).toEqual([
      {
        pos: 5,
        len: 7,
        text: "my post",
        url: "https://blog.example.com/p/1",
        title: "A <title>",
        amended_len: 7 + " [blog.example.com]".length,
      },
    ]);
    expect(r.html).toBe(wrap('Read <a href="https://blog.example.com/p/1" title="A &lt;title&gt;">my post</a> [blog.example.com] now'));
    expect(r.length).toBe("Read my post now".length);
  });

  it("leaves the host out when the anchor equals the host", () => {
    const r = proc("[example.com](https://example.com/page) and [Example.COM](http://example.com)");
    expect(r.text).toBe("example.com and Example.COM");
    expect(r.entities.links).toEqual([
      { pos: 0, len: 11, text: "example.com", url: "https://example.com/page", amended_len: 11 },
      { pos: 16, len: 11, text: "Example.COM", url: "http://example.com", amended_len: 11 },
    ]);
    expect(r.html).toBe(wrap('<a href="https://example.com/page">example.com</a> and <a href="http://example.com">Example.COM</a>'));
    expect(r.length).toBe(27);
  });

  it("adds http:// to a target without scheme and keeps balanced parentheses", () => {
    const r = proc("[film](en.wikipedia.org/wiki/Primer_(film))");
    expect(r.entities.links).toEqual([{ pos: 0, len: 4, text: "film", url: "http://en.wikipedia.org/wiki/Primer_(film)", amended_len: 4 + 19 }]);
    expect(r.text).toBe("film [en.wikipedia.org]");
  });

  it("rejects other schemes and hosts without a known TLD", () => {
    for (const t of ["[x](javascript:alert(1))", "[x](mailto:a@example.com)", "[x](nothing)", "[x](data:text/html,hi)"]) {
      const r = proc(t, { parseLinks: false });
      expect(r.text).toBe(t);
      expect(r.entities.links).toEqual([]);
    }
  });

  it("mentions, tags and bare links inside anchors are part of the link", () => {
    const r = proc("[@alice #tag example.org](https://example.com) @bob");
    expect(r.text).toBe("@alice #tag example.org [example.com] @bob");
    expect(r.entities.links).toHaveLength(1);
    expect(r.entities.tags).toEqual([]);
    expect(r.entities.mentions).toEqual([{ pos: 38, len: 4, text: "bob", id: idOf("bob") }]);
  });

  it("parse_markdown_links=0 leaves the markdown as written (bare links still found)", () => {
    const r = proc("[site](https://example.org/x)", { parseMarkdownLinks: false });
    expect(r.text).toBe("[site](https://example.org/x)");
    expect(r.entities.links).toEqual([{ pos: 7, len: 21, text: "https://example.org/x", url: "https://example.org/x" }]);
    const none = proc("[site](https://example.org/x)", { parseMarkdownLinks: false, parseLinks: false });
    expect(none.entities.links).toEqual([]);
    expect(none.html).toBe(wrap("[site](https://example.org/x)"));
  });
});

describe("mentions", () => {
  it("only known users are mentions; text is the actual username, len includes @", () => {
    const r = proc("hey @Alice and @nobody and @BOB!");
    expect(r.entities.mentions).toEqual([
      { pos: 4, len: 6, text: "alice", id: idOf("alice") },
      { pos: 27, len: 4, text: "bob", id: idOf("bob") },
    ]);
    expect(r.html).toBe(wrap(`hey ${mentionHtml("alice")} and @nobody and ${mentionHtml("bob")}!`));
  });

  it("usernames are 1–20 of a-z 0-9 _", () => {
    const r = proc("@user_1 @a1234567890123456789 @a12345678901234567890 @user_1x");
    expect(r.entities.mentions.map((m) => m.text)).toEqual(["user_1", "a1234567890123456789"]);
  });

  it("is not a mention inside an e-mail address or a link", () => {
    const r = proc("mail alice@example.com or @alice@example.com, see https://example.com/@alice");
    expect(r.entities.mentions).toEqual([]);
    expect(r.entities.links.map((l) => l.text)).toEqual(["https://example.com/@alice"]);
  });

  it("is_leading: before any word, punctuation allowed", () => {
    const r = proc("@alice, .@bob: @nobody @carol hi @dave");
    expect(r.entities.mentions).toEqual([
      { pos: 0, len: 6, text: "alice", id: idOf("alice"), is_leading: true },
      { pos: 9, len: 4, text: "bob", id: idOf("bob"), is_leading: true },
      { pos: 23, len: 6, text: "carol", id: idOf("carol"), is_leading: true },
      { pos: 33, len: 5, text: "dave", id: idOf("dave") },
    ]);
    expect(proc("hi @alice").entities.mentions[0].is_leading).toBeUndefined();
    expect(proc("#tag @alice").entities.mentions[0].is_leading).toBeUndefined();
    expect(proc("😀 — @alice").entities.mentions[0].is_leading).toBe(true);
  });

  it("is_copy: directly after / or after another copy mention", () => {
    const r = proc("thanks /@alice @bob @carol and @dave /@bob");
    expect(r.entities.mentions).toEqual([
      { pos: 8, len: 6, text: "alice", id: idOf("alice"), is_copy: true },
      { pos: 15, len: 4, text: "bob", id: idOf("bob"), is_copy: true },
      { pos: 20, len: 6, text: "carol", id: idOf("carol"), is_copy: true },
      { pos: 31, len: 5, text: "dave", id: idOf("dave") },
      { pos: 38, len: 4, text: "bob", id: idOf("bob"), is_copy: true },
    ]);
    expect(proc("hi / @alice").entities.mentions[0].is_copy).toBeUndefined();
    const lead = proc("/@alice hi").entities.mentions[0];
    expect(lead).toEqual({ pos: 1, len: 6, text: "alice", id: idOf("alice"), is_leading: true, is_copy: true });
  });

  it("works inside CJK and Cyrillic text", () => {
    const r = proc("の@aliceに到着 привет @bob, как дела?");
    expect(r.entities.mentions).toEqual([
      { pos: 1, len: 6, text: "alice", id: idOf("alice") },
      { pos: 18, len: 4, text: "bob", id: idOf("bob") },
    ]);
  });

  it("mentionCandidates lists lowercased names once, known or not", () => {
    expect(mentionCandidates("@Alice @bob hi @ALICE mail x@y.com @nobody /@carol @toolongname_abcdefghijk")).toEqual(["alice", "bob", "nobody", "carol"]);
    expect(mentionCandidates("no mentions")).toEqual([]);
  });
});

describe("tags", () => {
  it("finds tags; len includes #; html carries the tag name", () => {
    const r = proc("#hello world #foo_bar, #x.");
    expect(r.entities.tags).toEqual([
      { pos: 0, len: 6, text: "hello" },
      { pos: 13, len: 8, text: "foo_bar" },
      { pos: 23, len: 2, text: "x" },
    ]);
    expect(r.html).toBe(wrap(`${tagHtml("hello")} world ${tagHtml("foo_bar")}, ${tagHtml("x")}.`));
  });

  it("all-digit tags are not tags", () => {
    const r = proc("#123 #1a #a1 #١٢٣ #_ #1_2");
    expect(r.entities.tags.map((t) => t.text)).toEqual(["1a", "a1"]);
  });

  it("letters of any script: CJK, Cyrillic, Arabic, Devanagari", () => {
    const r = proc("#漢字 #русский_язык #العربية #महात्मा");
    expect(r.entities.tags).toEqual([
      { pos: 0, len: 3, text: "漢字" },
      { pos: 4, len: 13, text: "русский_язык" },
      { pos: 18, len: 8, text: "العربية" },
      { pos: 27, len: 8, text: "महात्मा" },
    ]);
  });

  it("emoji are tag characters; positions count code points", () => {
    const r = proc("😀 #I❤️NY #🍕pizza #👨‍👩‍👧 and #🇫🇷");
    expect(r.entities.tags).toEqual([
      { pos: 2, len: 6, text: "I❤️NY" },
      { pos: 9, len: 7, text: "🍕pizza" },
      { pos: 17, len: 6, text: "👨‍👩‍👧" },
      { pos: 28, len: 3, text: "🇫🇷" },
    ]);
  });

  it("is not a tag inside a word, a link, or before ://", () => {
    const r = proc("C# F#sharp a#b http://example.com/#frag #http://example.com");
    expect(r.entities.tags).toEqual([]);
  });

  it("normalizeTag: lowercase, _ removed", () => {
    expect(normalizeTag("Foo_Bar")).toBe("foobar");
    expect(normalizeTag("ПРИВЕТ_мир")).toBe("приветмир");
  });
});

describe("code points", () => {
  it("positions and lengths count astral characters once", () => {
    const r = proc("😀😀 @alice 𝒳 #tag𝒳 example.com 🎉");
    expect(r.entities.mentions).toEqual([{ pos: 3, len: 6, text: "alice", id: idOf("alice"), is_leading: true }]);
    expect(r.entities.tags).toEqual([{ pos: 12, len: 5, text: "tag𝒳" }]);
    expect(r.entities.links).toEqual([{ pos: 18, len: 11, text: "example.com", url: "http://example.com" }]);
    expect(r.length).toBe(31);
    expect(r.length).toBe([...r.text].length);
  });

  it("a markdown link after astral text", () => {
    const r = proc("🎉🎉 [ok 😀](https://example.com) 🎉");
    expect(r.text).toBe("🎉🎉 ok 😀 [example.com] 🎉");
    expect(r.entities.links).toEqual([{ pos: 3, len: 4, text: "ok 😀", url: "https://example.com", amended_len: 4 + 14 }]);
    expect(r.length).toBe(9);
  });

  it("a 256-emoji post has length 256", () => {
    const text = "😀".repeat(256);
    expect(text.length).toBe(512);
    const r = proc(text);
    expect(r.length).toBe(256);
    expect(r.length).toBeLessThanOrEqual(POST_MAX_LENGTH);
    expect(proc(text + "x").length).toBeGreaterThan(POST_MAX_LENGTH);
    expect(codePointLength(text)).toBe(256);
    expect(codePointLength("a\uD800b")).toBe(3); // lone surrogate counts as one
  });
});

describe("{object_id}", () => {
  it("is replaced in link urls (entities and html), not in the text", () => {
    const r = proc("[this post](https://example.com/posts/{object_id}) example.com/p/{object_id} {object_id}");
    const done = withObjectId(r, "12345");
    expect(done.text).toBe(r.text);
    expect(done.entities.links.map((l) => l.url)).toEqual(["https://example.com/posts/12345", "http://example.com/p/12345"]);
    expect(done.entities.links.map((l) => l.text)).toEqual(["this post", "example.com/p/{object_id}"]);
    expect(done.html).toBe(
      wrap(
        '<a href="https://example.com/posts/12345">this post</a> [example.com] ' +
          '<a href="http://example.com/p/12345">example.com/p/{object_id}</a> {object_id}',
      ),
    );
    // The input is not changed.
    expect(r.entities.links[0].url).toBe("https://example.com/posts/{object_id}");
    expect(withObjectId(proc("no links"), "1")).toEqual(proc("no links"));
  });
});

describe("speed", () => {
  it("processes a 2048-code-point message with 100 entities well under 1 ms", async () => {
    const parts = ["@alice", "#tag😀", "https://example.com/x?y=1", "[a](https://example.org/p)", "example.net/p", "@bob", "#日本"];
    let text = "";
    let n = 0;
    while (n < 100) {
      text += n % 10 === 0 ? `${parts[n % parts.length]} wörds 🎉\n` : `${parts[n % parts.length]} `;
      n++;
    }
    text += "x".repeat(MESSAGE_MAX_LENGTH - codePointLength(text));
    expect(codePointLength(text)).toBe(MESSAGE_MAX_LENGTH);
    const r = proc(text, { itemType: "Message" });
    const count = r.entities.links.length + r.entities.mentions.length + r.entities.tags.length;
    expect(count).toBe(100);

    for (let i = 0; i < 50; i++) proc(text, { itemType: "Message" }); // warm up
    // workerd only advances the clock across I/O, so each round reads it after awaiting a timer.
    // The best of a few rounds is the least disturbed by whatever else runs on the machine.
    const loops = 200;
    let perCall = Infinity;
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const t0 = performance.now();
      for (let i = 0; i < loops; i++) proc(text, { itemType: "Message" });
      await new Promise((resolve) => setTimeout(resolve, 0));
      perCall = Math.min(perCall, (performance.now() - t0) / loops);
    }
    console.log(`processText: 2048 code points, ${count} entities: ${(perCall * 1000).toFixed(1)} µs per call`);
    expect(perCall).toBeLessThan(1);
  });
});
