import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FILE_URLS } from "../../src/config";
import { actor, call, must } from "../support/client";
import * as fx from "../fixtures/media";

// File URLs are signed, not stored: issuing and renewing them writes nothing, and the content
// route checks the signature, the expiry and the file's current row.

const T0 = 1_900_000_000;
const LIFETIME = FILE_URLS.lifetimeSeconds;
const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 19) + "Z";

async function uploadOk(token: string, bytes: Uint8Array, now = T0, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.set("content", new Blob([bytes]), "upload.bin");
  form.set("type", "com.example.signed");
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return (await must(call("POST", "/files", { token, body: form, now }), 201)).data;
}

async function fetchRaw(url: string, now?: number) {
  const res = await SELF.fetch(url, { headers: now === undefined ? {} : { "X-Test-Now": String(now) }, redirect: "manual" });
  const bytes = new Uint8Array(await res.arrayBuffer());
  let body: any;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    body = undefined;
  }
  return { status: res.status, bytes, body };
}

/** Every key in the KV namespace the Worker uses (the test pool shares its storage). */
async function kvKeys(): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.KV.list({ cursor });
    keys.push(...page.keys.map((k) => k.name));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return keys.sort();
}

/** The URL with one character of its signature changed. */
function tampered(url: string): string {
  const [path, ...rest] = url.split("/").pop()!.split(".");
  const sig = rest[1];
  const flipped = (sig[0] === "A" ? "B" : "A") + sig.slice(1);
  return url.slice(0, url.lastIndexOf("/") + 1) + [path, rest[0], flipped, ...rest.slice(2)].join(".");
}

describe("signed file URLs", () => {
  it("GET /v1/files of 200 files writes nothing to KV, also when every URL is renewed, and the URLs serve at once", async () => {
    const { token } = await actor("files");
    const files: any[] = [];
    for (let i = 0; i < 200; i++) files.push(await uploadOk(token, new TextEncoder().encode(`file ${i}\n`)));
    for (const f of files.slice(0, 3)) {
      expect((await call("PUT", `/files/${f.id}/content/small?file_token=${f.file_token}`, { body: fx.gif, now: T0 })).status).toBe(204);
    }
    const ids = files.map((f) => f.id).join(",");
    const before = await kvKeys();

    const fresh = await must(call("GET", `/files?ids=${ids}`, { token, now: T0 + 10 }));
    expect(fresh.data).toHaveLength(200);
    expect(fresh.data.map((f: any) => f.url)).toEqual(files.map((f) => f.url)); // the same URLs: nothing was re-issued
    // Long after every URL expired: each one (file and derived) is renewed in the reply.
    const later = T0 + 3 * LIFETIME + 7;
    const renewed = await must(call("GET", `/files?ids=${ids}`, { token, now: later }));
    expect(renewed.data).toHaveLength(200);
    for (const f of renewed.data) expect(f.url_expires_at).toBe(iso(T0 + 4 * LIFETIME));
    expect(renewed.data[0].derived_files.small.url_expires_at).toBe(iso(T0 + 4 * LIFETIME));
    expect(renewed.data[0].url).not.toBe(files[0].url);
    await must(call("GET", "/users/me/files?count=200", { token, now: later }));
    expect(await kvKeys()).toEqual(before);

    // Served at once, at this location as at any other: nothing has to propagate.
    const first = await fetchRaw(renewed.data[0].url, later);
    expect([first.status, new TextDecoder().decode(first.bytes)]).toEqual([200, "file 0\n"]);
    const last = await fetchRaw(renewed.data[199].url, later);
    expect(new TextDecoder().decode(last.bytes)).toBe("file 199\n");
    expect((await fetchRaw(renewed.data[0].derived_files.small.url, later)).bytes).toEqual(fx.gif);
    expect((await fetchRaw(files[0].url, later)).status).toBe(403); // the first period's URL has expired
  }, 180_000);

  it("the URL of a new upload serves at once and until its expiry, then 403", async () => {
    const { token } = await actor("files");
    const f = await uploadOk(token, fx.png);
    expect(f.url).toMatch(/^http:\/\/api\.test\/v1\/files\/content\/[0-9a-z]+\.[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);
    expect(f.url_expires_at).toBe(iso(T0 + LIFETIME));
    expect((await fetchRaw(f.url, T0)).bytes).toEqual(fx.png);
    expect((await fetchRaw(f.url, T0 + LIFETIME - 1)).status).toBe(200);
    const expired = await fetchRaw(f.url, T0 + LIFETIME);
    expect([expired.status, expired.body.meta.error_message]).toEqual([403, expect.stringMatching(/expired/)]);
  });

  it("refuses a tampered URL: signature, expiry, file id or derived key changed", async () => {
    const { token } = await actor("files");
    const f = await uploadOk(token, fx.png);
    const other = await uploadOk(token, fx.gif);
    for (const key of ["a", "b"]) {
      expect((await call("PUT", `/files/${f.id}/content/${key}?file_token=${f.file_token}`, { body: fx.gif, now: T0 })).status).toBe(204);
    }
    const file = (await must(call("GET", `/files/${f.id}`, { token, now: T0 }))).data;
    const base = (u: string) => u.slice(0, u.lastIndexOf("/") + 1);
    const parts = (u: string) => u.split("/").pop()!.split(".");
    const [id, exp, sig] = parts(file.url);

    const refused = async (url: string) => {
      const res = await fetchRaw(url, T0 + 1);
      expect(res.status, url).toBe(403);
      expect(res.body.meta.error_message).toMatch(/not valid/);
    };
    await refused(tampered(file.url));
    await refused(tampered(file.derived_files.a.url));
    await refused(base(file.url) + [id, (parseInt(exp, 36) + LIFETIME).toString(36), sig].join(".")); // a longer life
    await refused(base(file.url) + [Number(other.id).toString(36), exp, sig].join(".")); // another file
    await refused(base(file.url) + [id, exp, sig, "a"].join(".")); // the file's signature on a derived file
    await refused(file.derived_files.a.url.replace(/\.a$/, ".b")); // another derived file
    for (const junk of ["not-a-token", "1.2", `${id}.${exp}.short`, `${id}.${exp}.${sig}.bad key`]) {
      expect((await fetchRaw(base(file.url) + encodeURIComponent(junk), T0 + 1)).status, junk).toBe(403);
    }
    // the genuine ones still serve
    expect((await fetchRaw(file.url, T0 + 1)).bytes).toEqual(fx.png);
    expect((await fetchRaw(file.derived_files.b.url, T0 + 1)).bytes).toEqual(fx.gif);
  });

  it("revokes: replaced derived content and deleted files stop serving; making a file private does not", async () => {
    const { token } = await actor("files");
    const f = await uploadOk(token, fx.png, T0, { is_public: "1" });
    const put = (bytes: Uint8Array) => call("PUT", `/files/${f.id}/content/small?file_token=${f.file_token}`, { body: bytes, now: T0 });
    expect((await put(fx.gif)).status).toBe(204);
    const before = (await must(call("GET", `/files/${f.id}`, { token, now: T0 }))).data;
    expect((await put(fx.png)).status).toBe(204);
    const replacedRes = await fetchRaw(before.derived_files.small.url, T0 + 1);
    expect([replacedRes.status, replacedRes.body.meta.error_message]).toEqual([403, expect.stringMatching(/replaced/)]);
    const after = (await must(call("GET", `/files/${f.id}`, { token, now: T0 + 1 }))).data;
    expect((await fetchRaw(after.derived_files.small.url, T0 + 1)).bytes).toEqual(fx.png);

    // As the reference service: once someone has a file's URL, only deleting the file stops it.
    await must(call("PATCH", `/files/${f.id}`, { token, json: { is_public: false } }));
    expect((await fetchRaw(before.url, T0 + 2)).bytes).toEqual(fx.png);

    await must(call("DELETE", `/files/${f.id}`, { token, now: T0 + 3 }));
    for (const url of [before.url, after.derived_files.small.url]) {
      const gone = await fetchRaw(url, T0 + 4);
      expect([gone.status, gone.body.meta.code]).toEqual([404, 404]);
    }
  });

  it("url_short hands out a URL with more than a minute left", async () => {
    const { token } = await actor("files");
    const f = await uploadOk(token, fx.png, T0, { is_public: "1" });
    const almost = T0 + LIFETIME - 30;
    const hop = await SELF.fetch(f.url_short, { headers: { "X-Test-Now": String(almost) }, redirect: "manual" });
    expect(hop.status).toBe(302);
    const location = hop.headers.get("location")!;
    expect(location).not.toBe(f.url);
    expect((await fetchRaw(location, T0 + LIFETIME + 60)).bytes).toEqual(fx.png);
    // and the file itself still shows the current period's URL until it ends
    expect((await must(call("GET", `/files/${f.id}`, { token, now: almost }))).data.url).toBe(f.url);
  });
});
