import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FILE_URLS } from "../../src/config";
import { openDb } from "../../src/db";
import { runFileDelete } from "../../src/services/file-delete";
import { actor, appToken, call, makeApp, makeUser, userToken } from "../support/client";
import * as fx from "../fixtures/media";
import { imageOf } from "../fixtures/images";
import { DB } from "../support/db";
import { fileSettled as settled } from "../support/fixtures";

const T0 = 1_900_000_000; // the injectable clock's start for time-window tests
const LIFETIME = FILE_URLS.lifetimeSeconds;
const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 19) + "Z";

async function sha256(bytes: Uint8Array) {
  const d = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** POST /files as multipart with `content` and the given fields. */
async function upload(token: string, bytes: Uint8Array, fields: Record<string, string> = {}, opts: { filename?: string; now?: number } = {}) {
  const form = new FormData();
  form.set("content", new Blob([bytes]), opts.filename ?? "upload.bin");
  form.set("type", "com.example.test");
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return call("POST", "/files", { token, body: form, now: opts.now });
}

async function uploadOk(token: string, bytes: Uint8Array, fields: Record<string, string> = {}, opts: { filename?: string; now?: number } = {}) {
  const res = await upload(token, bytes, fields, opts);
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${res.text}`);
  return res.body.data;
}

/** GET of a content URL (or any absolute URL), keeping the bytes. */
async function fetchRaw(url: string, opts: { now?: number; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.now !== undefined) headers["X-Test-Now"] = String(opts.now);
  const res = await SELF.fetch(url, { headers, redirect: "manual" });
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const storageOf = async (token: string) => (await call("GET", "/token", { token })).body.data.storage.available as number;

const dbRow = (sql: string, ...params: unknown[]) =>
  DB.prepare(sql)
    .bind(...params)
    .first<Record<string, any>>();

async function waitForOp(token: string, url: string) {
  for (let i = 0; i < 100; i++) {
    const res = await call("GET", url, { token });
    if (res.body.data.status !== "running") return res.body.data;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("operation still running");
}

describe("POST /files (multipart): detection, kinds and media information", () => {
  const cases = [
    { name: "PNG", bytes: fx.png, kind: "image", mime: "image/png", info: { image_info: { width: 40, height: 30 } } },
    { name: "JPEG", bytes: fx.jpeg, kind: "image", mime: "image/jpeg", info: { image_info: { width: 40, height: 30 } } },
    { name: "GIF", bytes: fx.gif, kind: "image", mime: "image/gif", info: { image_info: { width: 40, height: 30 } } },
    { name: "MP3", bytes: fx.mp3, kind: "audio", mime: "audio/mpeg", info: { audio_info: { duration: 1, duration_string: "0:00:01", bitrate: 32 } } },
    { name: "WAV", bytes: fx.wav, kind: "audio", mime: "audio/wave", info: { audio_info: { duration: 1, duration_string: "0:00:01", bitrate: 64 } } },
    { name: "FLAC", bytes: fx.flac, kind: "audio", mime: "audio/flac", info: { audio_info: { duration: 1, duration_string: "0:00:01", bitrate: 33 } } },
    { name: "M4A", bytes: fx.m4a, kind: "audio", mime: "audio/mp4", info: { audio_info: { duration: 1, duration_string: "0:00:01", bitrate: 17 } } },
    {
      name: "MP4",
      bytes: fx.mp4,
      kind: "video",
      mime: "video/mpeg",
      info: { video_info: { duration: 1, duration_string: "0:00:01", bitrate: 12, width: 64, height: 48 } },
    },
    {
      name: "WebM",
      bytes: fx.webm,
      kind: "video",
      mime: "video/webm",
      info: { video_info: { duration: 1, duration_string: "0:00:01", bitrate: 5, width: 64, height: 48 } },
    },
  ] as const;

  for (const t of cases) {
    it(`detects ${t.name} from its bytes: kind ${t.kind}, ${t.mime}, its info`, async () => {
      const { token, app, user } = await actor("files");
      // a misleading file name: detection never looks at it
      const res = await upload(token, t.bytes, {}, { filename: "misleading.txt" });
      expect(res.status).toBe(201);
      expect(res.body.meta.code).toBe(201);
      const f = res.body.data;
      expect(f).toMatchObject({
        kind: t.kind,
        mime_type: t.mime,
        size: t.bytes.length,
        is_complete: true,
        is_public: false,
        name: "misleading.txt",
        ...t.info,
      });
      expect(f.sha256).toBe(await sha256(t.bytes));
      expect(f.source.id).toBe(app.client_id);
      expect(f.user.id).toBe(user.id);
      expect(typeof f.file_token).toBe("string"); // on creation
      expect(f).not.toHaveProperty("file_token_read"); // private
      expect(f).not.toHaveProperty("url_short");
      for (const other of ["audio_info", "image_info", "video_info"].filter((k) => !(k in t.info))) expect(f).not.toHaveProperty(other);
      const content = await fetchRaw(f.url);
      expect(content.status).toBe(200);
      expect(content.headers.get("content-type")).toBe(t.mime);
      expect(content.bytes).toEqual(t.bytes);
    });
  }

  it("records other types as kind other, with the text encoding of text types (rule 7)", async () => {
    const { token } = await actor("files");
    const text = await uploadOk(token, new TextEncoder().encode("héllo wörld\n"));
    expect(text).toMatchObject({ kind: "other", mime_type: "text/plain; charset=utf-8" });
    expect(text).not.toHaveProperty("audio_info");
    const json = await uploadOk(token, new TextEncoder().encode('{"a": "ü"}'), { mime_type: "application/json" });
    expect(json).toMatchObject({ kind: "other", mime_type: "application/json; charset=utf-8" });
    const latin1 = new Uint8Array([...new TextEncoder().encode("caf")].concat([0xe9], [...new TextEncoder().encode(" cr")], [0xe8, 0x6d, 0x65]));
    const csv = await uploadOk(token, latin1, { mime_type: "text/csv" });
    expect(csv.mime_type).toMatch(/^text\/csv; charset=/);
    expect(csv.mime_type).not.toBe("text/csv; charset=utf-8");
    const pdf = await uploadOk(token, new TextEncoder().encode("%PDF-1.4\n%\xff\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"));
    expect(pdf).toMatchObject({ kind: "other", mime_type: "application/pdf" });
    const binary = await uploadOk(token, new Uint8Array([0, 1, 2, 3, 0, 255, 254, 0]));
    expect(binary).toMatchObject({ kind: "other", mime_type: "application/octet-stream" });
    // a type the client names for kind other is recorded as given (no charset for non-text types)
    const zip = await uploadOk(token, new Uint8Array([9, 0, 9, 0]), { kind: "other", mime_type: "Application/X-Custom" });
    expect(zip).toMatchObject({ kind: "other", mime_type: "application/x-custom" });
  });

  it("normalizes accepted alternatives to the recorded type (rule 6) and assigns kind from mime_type (rule 5)", async () => {
    const { token } = await actor("files");
    const pairs: [Uint8Array, string, string, string][] = [
      [fx.jpeg, "image/jpg", "image/jpeg", "image"],
      [fx.mp3, "audio/mp3", "audio/mpeg", "audio"],
      [fx.wav, "audio/x-wav", "audio/wave", "audio"],
      [fx.wav, "audio/x-pn-wav", "audio/wave", "audio"],
      [fx.flac, "audio/x-flac", "audio/flac", "audio"],
      [fx.m4a, "audio/x-m4a", "audio/mp4", "audio"],
      [fx.mp4, "video/mp4", "video/mpeg", "video"],
      [fx.mp4, "video/quicktime", "video/mpeg", "video"],
      [fx.mp4, "VIDEO/X-M4V", "video/mpeg", "video"],
    ];
    for (const [bytes, given, recorded, kind] of pairs) {
      const f = await uploadOk(token, bytes, { mime_type: given });
      expect([given, f.mime_type, f.kind]).toEqual([given, recorded, kind]);
    }
  });

  it("with only kind, detects mime_type under that kind (rule 4): an MP4 may be audio", async () => {
    const { token } = await actor("files");
    const asAudio = await uploadOk(token, fx.mp4, { kind: "audio" });
    expect(asAudio).toMatchObject({ kind: "audio", mime_type: "audio/mp4" });
    expect(asAudio.audio_info.duration).toBe(1);
    const png = await uploadOk(token, fx.png, { kind: "image", mime_type: "image/png" });
    expect(png).toMatchObject({ kind: "image", mime_type: "image/png" });
  });

  it("refuses every kind / mime_type / content mismatch with a 400 naming the fields", async () => {
    const { token } = await actor("files");
    const bad: [Uint8Array, Record<string, string>, RegExp][] = [
      [fx.mp3, { kind: "image", mime_type: "audio/mpeg" }, /'mime_type' audio\/mpeg does not match 'kind' image/], // rule 2
      [fx.png, { kind: "audio" }, /'content' is image\/png .*does not match 'kind' audio/], // rule 4
      [fx.png, { kind: "other" }, /does not match 'kind' other/],
      [fx.m4a, { kind: "video" }, /does not match 'kind' video/], // no video track
      [fx.jpeg, { mime_type: "image/png" }, /'content' is image\/jpeg, not the given 'mime_type' image\/png/],
      [fx.wav, { mime_type: "video/webm" }, /'content' is audio\/wave/],
      [new TextEncoder().encode("plain text"), { kind: "image" }, /'content' is text\/plain/],
      [fx.png, { kind: "picture" }, /'kind'/],
      [fx.png, { mime_type: "not a type" }, /'mime_type' must be a mime type/],
    ];
    for (const [bytes, fields, message] of bad) {
      const res = await upload(token, bytes, fields);
      expect([fields, res.status]).toEqual([fields, 400]);
      expect(res.body.meta.error_message).toMatch(message);
      expect(res.body).not.toHaveProperty("data");
    }
    const list = await call("GET", "/users/me/files", { token });
    expect(list.body.data).toEqual([]); // nothing was written
  });

  it("validates the other fields: type, name (256 characters), raw, unknown fields, content", async () => {
    const { token } = await actor("files");
    const form = new FormData();
    form.set("type", "com.example.test");
    let res = await call("POST", "/files", { token, body: form });
    expect(res.status).toBe(400);
    expect(res.body.meta.error_message).toMatch(/'content' is required/);
    res = await upload(token, fx.png, { type: "" });
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/'type'/)]);
    res = await upload(token, fx.png, { name: "é".repeat(257) });
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/'name' must be at most 256 characters/)]);
    const longName = "😀".repeat(256); // 256 code points, 512 UTF-16 units
    expect((await uploadOk(token, fx.png, { name: longName })).name).toBe(longName);
    res = await upload(token, fx.png, { raw: JSON.stringify({ "com.example.x": [{ v: "x".repeat(8200) }] }) });
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/'raw' must serialize to at most 8192 bytes/)]);
    res = await upload(token, fx.png, { raw: "{not json" });
    expect([res.status, res.body.meta.error_message]).toEqual([400, "Bad Request: 'raw' must be JSON"]);
    res = await upload(token, fx.png, { is_public: "maybe" });
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/'is_public'/)]);
    res = await upload(token, fx.png, { colour: "red" });
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/'colour' is not a field/)]);
    res = await upload(token, new Uint8Array(0));
    expect([res.status, res.body.meta.error_message]).toEqual([400, "Bad Request: 'content' is empty"]);
    res = await call("POST", "/files", { token, body: "hello", headers: { "Content-Type": "text/plain" } });
    expect(res.status).toBe(415);
    const withRaw = await uploadOk(token, fx.png, { raw: JSON.stringify({ "com.example.x": [{ a: 1 }] }), is_public: "1" });
    expect(withRaw.raw).toEqual({ "com.example.x": [{ a: 1 }] });
    expect(withRaw.is_public).toBe(true);
  });
});

describe("access to file endpoints", () => {
  it("needs a user token with the files scope; files:<type> covers only that type", async () => {
    const app = await makeApp();
    const user = await makeUser();
    const none = await userToken(app, user, "basic");
    const typed = await userToken(app, user, "files:com.example.a");
    const full = await userToken(app, user, "files");
    expect((await upload(none, fx.png)).status).toBe(403);
    expect((await call("GET", "/users/me/files")).status).toBe(401);
    expect((await call("GET", "/users/me/files", { token: await appToken(app) })).status).toBe(403);
    const denied = await upload(typed, fx.png, { type: "com.example.b" });
    expect([denied.status, denied.body.meta.error_message]).toEqual([403, expect.stringMatching(/does not cover files of type 'com.example.b'/)]);
    const a = await uploadOk(typed, fx.png, { type: "com.example.a" });
    const b = await uploadOk(full, fx.gif, { type: "com.example.b" });
    expect((await call("GET", `/files/${b.id}`, { token: typed })).status).toBe(403);
    expect((await call("GET", `/files/${a.id}`, { token: typed })).status).toBe(200);
    const mine = await call("GET", "/users/me/files", { token: typed });
    expect(mine.body.data.map((f: any) => f.id)).toEqual([a.id]);
    const both = await call("GET", "/users/me/files", { token: full });
    expect(both.body.data.map((f: any) => f.id)).toEqual([b.id, a.id]);
  });

  it("file_token and file_token_read are shown exactly as the File object says; private files need the read token", async () => {
    const owner = await actor("files");
    const other = await actor("files");
    const f = await uploadOk(owner.token, fx.png);
    // owner: file_token (Files scope gives access), no file_token_read (private)
    const own = await call("GET", `/files/${f.id}`, { token: owner.token });
    expect(own.body.data.file_token).toBe(f.file_token);
    expect(own.body.data).not.toHaveProperty("file_token_read");
    // others: 403 without the read token, or with a wrong one
    const denied = await call("GET", `/files/${f.id}`, { token: other.token });
    expect([denied.status, denied.body.meta.error_message]).toEqual([403, expect.stringMatching(/file_token_read/)]);
    expect((await call("GET", `/files/${f.id}?file_token_read=wrong`, { token: other.token })).status).toBe(403);
    // the owner publishes it once to learn file_token_read, then makes it private again
    const pub = await call("PATCH", `/files/${f.id}`, { token: owner.token, json: { is_public: true } });
    const readToken = pub.body.data.file_token_read;
    expect(typeof readToken).toBe("string");
    await call("PATCH", `/files/${f.id}`, { token: owner.token, json: { is_public: false } });
    const withRead = await call("GET", `/files/${f.id}?file_token_read=${readToken}`, { token: other.token });
    expect(withRead.status).toBe(200);
    expect(withRead.body.data.file_token_read).toBe(readToken);
    expect(withRead.body.data).not.toHaveProperty("file_token");
    const withModify = await call("GET", `/files/${f.id}?file_token=${f.file_token}`, { token: other.token });
    expect(withModify.status).toBe(200);
    expect(withModify.body.data.file_token).toBe(f.file_token);
    expect(withModify.body.data).not.toHaveProperty("file_token_read");
    // public files: everyone sees file_token_read, only the owner file_token
    const p = await uploadOk(owner.token, fx.gif, { is_public: "1" });
    expect(typeof p.file_token_read).toBe("string");
    const seen = await call("GET", `/files/${p.id}`, { token: other.token });
    expect(seen.body.data.file_token_read).toBe(p.file_token_read);
    expect(seen.body.data).not.toHaveProperty("file_token");
    expect((await call("GET", "/files/999999999", { token: other.token })).status).toBe(404);
    expect((await call("GET", "/files/abc", { token: other.token })).status).toBe(400);
  });

  it("GET /files?ids= returns the visible files in order, private ones only with file_token_read_{id}", async () => {
    const owner = await actor("files");
    const other = await actor("files");
    const priv = await uploadOk(owner.token, fx.png);
    const pub = await uploadOk(owner.token, fx.gif, { is_public: "1" });
    const mine = await uploadOk(other.token, fx.jpeg);
    const readToken = (await dbRow("select file_token_read from files where id = ?", Number(priv.id)))!.file_token_read;
    let res = await call("GET", `/files?ids=${mine.id},999999999,${priv.id},${pub.id}`, { token: other.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((f: any) => f.id)).toEqual([mine.id, pub.id]);
    expect(res.body.data[0].file_token).toBe(mine.file_token);
    res = await call("GET", `/files?ids=${pub.id},${priv.id}&file_token_read_${priv.id}=${readToken}`, { token: other.token });
    expect(res.body.data.map((f: any) => f.id)).toEqual([pub.id, priv.id]);
    expect(res.body.data[1].file_token_read).toBe(readToken);
    res = await call("GET", `/files?ids=${pub.id},${priv.id}&file_token_read_${priv.id}=nope`, { token: other.token });
    expect(res.body.data.map((f: any) => f.id)).toEqual([pub.id]);
    expect((await call("GET", "/files?ids=1,x", { token: other.token })).status).toBe(400);
    expect((await call("GET", "/files", { token: other.token })).status).toBe(400);
  });
});

describe("placeholders, uploads and the file_create operation", () => {
  it("creates a placeholder, uploads its content with the file_token alone, and completes the operation", async () => {
    const { token, user } = await actor("files");
    const res = await call("POST", "/files", { token, json: { type: "com.example.test", kind: "image", name: "later.png" }, now: T0 });
    expect(res.status).toBe(201);
    const ph = res.body.data;
    expect(ph).toMatchObject({ kind: "image", name: "later.png", is_complete: false, size: 0, derived_files: {} });
    expect(ph).not.toHaveProperty("url");
    expect(ph).not.toHaveProperty("mime_type");
    expect(ph.upload_parameters).toEqual({ method: "PUT", url: `http://api.test/v1/files/${ph.id}/content?file_token=${ph.file_token}` });
    const statusUrl = res.body.meta.status_url;
    expect(statusUrl).toMatch(/^http:\/\/api\.test\/v1\/sys\/ops\/[0-9a-f-]{36}$/);
    const running = await call("GET", statusUrl, { token });
    expect(running.body.data).toEqual({ id: statusUrl.split("/").pop(), type: "file_create", status: "running", created_at: iso(T0) });
    // incomplete files are listed unless include_incomplete=0
    expect((await call("GET", "/users/me/files", { token })).body.data.map((f: any) => f.id)).toEqual([ph.id]);
    expect((await call("GET", "/users/me/files?include_incomplete=0", { token })).body.data).toEqual([]);

    const put = await call("PUT", ph.upload_parameters.url, { body: fx.png, headers: { "Content-Type": "image/png" }, now: T0 + 5 });
    expect(put.status).toBe(204);
    expect(put.text).toBe("");
    const done = await call("GET", statusUrl, { token });
    expect(done.body.data).toMatchObject({ status: "completed", ended_at: iso(T0 + 5) });
    const file = (await call("GET", `/files/${ph.id}`, { token, now: T0 + 6 })).body.data;
    expect(file).toMatchObject({
      is_complete: true,
      mime_type: "image/png",
      size: fx.png.length,
      image_info: { width: 40, height: 30 },
      user: { id: user.id },
    });
    expect(file.sha256).toBe(await sha256(fx.png));
    expect((await fetchRaw(file.url, { now: T0 + 7 })).bytes).toEqual(fx.png);
    // a complete file's content is immutable
    const again = await call("PUT", ph.upload_parameters.url, { body: fx.png, headers: { "Content-Type": "image/png" } });
    expect([again.status, again.body.meta.error_message]).toEqual([400, expect.stringMatching(/already uploaded/)]);
  });

  it("checks the placeholder's kind against the upload, and who may upload", async () => {
    const owner = await actor("files");
    const other = await actor("files");
    expect((await call("POST", "/files", { token: owner.token, json: { type: "com.example.test" } })).body.meta.error_message).toMatch(/'kind' is required/);
    const mismatch = await call("POST", "/files", { token: owner.token, json: { type: "com.example.test", kind: "image", mime_type: "audio/mpeg" } });
    expect([mismatch.status, mismatch.body.meta.error_message]).toEqual([400, expect.stringMatching(/'mime_type' audio\/mpeg does not match 'kind' image/)]);
    expect((await call("POST", "/files", { token: owner.token, json: { type: "com.example.test", kind: "image", extra: 1 } })).status).toBe(400);
    const ph = (await call("POST", "/files", { token: owner.token, json: { type: "com.example.test", kind: "audio" } })).body.data;
    const path = `/files/${ph.id}/content`;
    expect((await call("PUT", path, { body: fx.mp3 })).status).toBe(401);
    expect((await call("PUT", `${path}?file_token=wrong`, { body: fx.mp3 })).status).toBe(403);
    expect((await call("PUT", path, { token: other.token, body: fx.mp3 })).status).toBe(403);
    const wrongKind = await call("PUT", `${path}?file_token=${ph.file_token}`, { body: fx.png });
    expect([wrongKind.status, wrongKind.body.meta.error_message]).toEqual([400, expect.stringMatching(/'content' is image\/png .*'kind' audio/)]);
    const wrongType = await call("PUT", `${path}?file_token=${ph.file_token}`, { body: fx.mp3, headers: { "Content-Type": "image/png" } });
    expect([wrongType.status, wrongType.body.meta.error_message]).toEqual([
      400,
      expect.stringMatching(/'Content-Type' image\/png does not match 'kind' audio/),
    ]);
    // the owner's own token works too, and Content-Type: audio/mp3 is normalized
    const ok = await call("PUT", path, { token: owner.token, body: fx.mp3, headers: { "Content-Type": "audio/mp3" } });
    expect(ok.status).toBe(204);
    const file = (await call("GET", `/files/${ph.id}`, { token: owner.token })).body.data;
    expect(file).toMatchObject({ kind: "audio", mime_type: "audio/mpeg", audio_info: { duration: 1, bitrate: 32 } });
  });

  it("a multipart PUT is accepted, and a placeholder deleted before its upload leaves its operation dead", async () => {
    const { token } = await actor("files");
    const a = await call("POST", "/files", { token, json: { type: "com.example.test", kind: "video" } });
    const form = new FormData();
    form.set("content", new Blob([fx.webm]), "clip");
    expect((await call("PUT", a.body.data.upload_parameters.url, { body: form })).status).toBe(204);
    expect((await call("GET", `/files/${a.body.data.id}`, { token })).body.data).toMatchObject({ mime_type: "video/webm", video_info: { width: 64 } });
    const b = await call("POST", "/files", { token, json: { type: "com.example.test", kind: "other", name: "never" }, now: T0 });
    const del = await call("DELETE", `/files/${b.body.data.id}`, { token, now: T0 + 9 });
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ id: b.body.data.id, is_deleted: true, is_complete: false });
    const op = await call("GET", b.body.meta.status_url, { token });
    expect(op.body.data).toMatchObject({ type: "file_create", status: "dead", ended_at: iso(T0 + 9) });
    expect((await call("PUT", b.body.data.upload_parameters.url, { body: fx.png })).status).toBe(404);
  });
});

describe("limits: sizes (413) and the storage quota (507)", () => {
  it("refuses an upload whose declared size is over the limit before reading it", async () => {
    const { token } = await actor("files");
    const audio = (await call("POST", "/files", { token, json: { type: "com.example.test", kind: "audio" } })).body.data;
    const video = (await call("POST", "/files", { token, json: { type: "com.example.test", kind: "video" } })).body.data;
    const declared = async (url: string, length: number) => {
      const res = await SELF.fetch(url, {
        method: "PUT",
        headers: { "Content-Length": String(length) },
        body: new ReadableStream({ pull: (ctl) => ctl.enqueue(new Uint8Array(64 * 1024)) }),
        // @ts-expect-error workerd needs duplex for streaming request bodies
        duplex: "half",
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    let res = await declared(audio.upload_parameters.url, 52428801);
    expect([res.status, res.body.meta.error_message]).toEqual([413, expect.stringMatching(/52428800 bytes/)]);
    res = await declared(video.upload_parameters.url, 104857601);
    expect([res.status, res.body.meta.error_message]).toEqual([413, expect.stringMatching(/104857600 bytes/)]);
  });

  it("counts a body without Content-Length as it arrives and stops at the limit", async () => {
    const { token } = await actor("files");
    const audio = (await call("POST", "/files", { token, json: { type: "com.example.test", kind: "audio" } })).body.data;
    const chunk = new Uint8Array(1024 * 1024);
    let sent = 0;
    const res = await SELF.fetch(audio.upload_parameters.url, {
      method: "PUT",
      body: new ReadableStream({
        pull(ctl) {
          if (sent > 60 * 1024 * 1024) return ctl.close();
          sent += chunk.length;
          ctl.enqueue(chunk);
        },
      }),
      // @ts-expect-error workerd needs duplex for streaming request bodies
      duplex: "half",
    });
    expect(res.status).toBe(413);
    expect(sent).toBeLessThanOrEqual(56 * 1024 * 1024); // it stopped reading soon after 50 MiB
    expect((await call("GET", `/files/${audio.id}`, { token })).body.data.is_complete).toBe(false);
  });

  it("keeps storage exact and answers 507 when an upload would exceed the quota, writing nothing", async () => {
    const { token, user } = await actor("files");
    const before = await storageOf(token);
    const f = await uploadOk(token, fx.flac);
    expect(await storageOf(token)).toBe(before - fx.flac.length);
    // fill the quota up to 100 bytes below its end
    const used = (await dbRow("select storage_used from users where id = ?", Number(user.id)))!.storage_used;
    const quota = before + 0; // available == quota - used before the upload
    await DB.prepare("update users set storage_used = ? where id = ?")
      .bind(quota - 100, Number(user.id))
      .run();
    const res = await upload(token, fx.png.length > 100 ? fx.png : fx.gif);
    expect([res.status, res.body.meta.error_message]).toEqual([507, expect.stringMatching(/storage quota/)]);
    const ph = (await call("POST", "/files", { token, json: { type: "com.example.test", kind: "image" } })).body.data;
    const put = await call("PUT", ph.upload_parameters.url, { body: fx.gif });
    expect(put.status).toBe(507);
    const derived = await call("PUT", `/files/${f.id}/content/thumb?file_token=${f.file_token}`, { body: fx.gif });
    expect(derived.status).toBe(507);
    expect((await dbRow("select storage_used from users where id = ?", Number(user.id)))!.storage_used).toBe(quota - 100);
    const ids = (await call("GET", "/users/me/files?include_incomplete=0", { token })).body.data.map((x: any) => x.id);
    expect(ids).toEqual([f.id]);
    await DB.prepare("update users set storage_used = ? where id = ?").bind(used, Number(user.id)).run();
  });
});

describe("derived files", () => {
  it("stores derived files with their info; core_* keys only as specified; at most 10", async () => {
    const { token } = await actor("files");
    const f = await uploadOk(token, fx.png300x250);
    await settled(token, f.id); // the server's own core_image_200s and core_image_960r are made
    const put = (key: string, bytes: Uint8Array, query = "", headers: Record<string, string> = {}) =>
      call("PUT", `/files/${f.id}/content/${key}?file_token=${f.file_token}${query}`, { body: bytes, headers });
    const own = imageOf(200, 200);
    expect((await put("core_image_200s", own, "&name=thumb.png")).status).toBe(204);
    let res = await put("core_image_200s", fx.png300x250);
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/exactly 200x200 px; the content is 300x250 px/)]);
    res = await put("core_image_960r", fx.png1200x100);
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/within 640x960 px/)]);
    res = await put("core_image_960l", fx.png150x120);
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/reserved/)]);
    res = await put("core_image_200s", fx.mp3);
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/must be an image.*audio\/mpeg/)]);
    res = await put("core_video_preview", fx.mp4);
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/reserved/)]);
    res = await put("bad key!", fx.png);
    expect(res.status).toBe(400);
    res = await put("named", fx.png, "&name=" + encodeURIComponent("naïve.png"));
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/255 printable ASCII/)]);
    res = await put("named", fx.png, "&name=" + "a".repeat(256));
    expect(res.status).toBe(400);
    res = await put("mislabelled", fx.png, "", { "Content-Type": "image/gif" });
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/not the given 'Content-Type' image\/gif/)]);
    expect((await put("preview.mp3", fx.mp3, "&name=" + "a".repeat(255))).status).toBe(204);

    const file = (await call("GET", `/files/${f.id}`, { token })).body.data;
    expect(Object.keys(file.derived_files)).toEqual(["core_image_200s", "core_image_960r", "preview.mp3"]);
    const thumb = file.derived_files.core_image_200s;
    expect(thumb).toMatchObject({ mime_type: "image/png", name: "thumb.png", size: own.length, image_info: { width: 200, height: 200 } });
    expect(thumb.sha256).toBe(await sha256(own));
    expect((await fetchRaw(thumb.url)).bytes).toEqual(own);
    expect(file.derived_files["preview.mp3"]).toMatchObject({ mime_type: "audio/mpeg", name: "a".repeat(255) });
    expect(file.derived_files["preview.mp3"]).not.toHaveProperty("image_info");

    for (let i = 0; i < 7; i++) expect((await put(`size_${i}`, fx.gif)).status).toBe(204);
    res = await put("eleventh", fx.gif);
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/at most 10 derived files/)]);
    // replacing an existing key is not an eleventh file, and storage follows the size change
    const before = await storageOf(token);
    expect((await put("size_0", fx.png)).status).toBe(204);
    expect(await storageOf(token)).toBe(before - (fx.png.length - fx.gif.length));
    const after = (await call("GET", `/files/${f.id}`, { token })).body.data.derived_files;
    expect(Object.keys(after)).toHaveLength(10);
    expect(after.size_0).toMatchObject({ mime_type: "image/png", size: fx.png.length });
  });
});

describe("expiring URLs, renewal and url_short", () => {
  it("serves content until url_expires_at, then 403; GET /files/{id} renews the url and derived urls", async () => {
    const { token } = await actor("files");
    const f = await uploadOk(token, fx.jpeg, {}, { now: T0 });
    expect(f.url_expires_at).toBe(iso(T0 + LIFETIME));
    expect((await call("PUT", `/files/${f.id}/content/small?file_token=${f.file_token}`, { body: fx.gif, now: T0 })).status).toBe(204);
    expect((await fetchRaw(f.url, { now: T0 + LIFETIME - 1 })).status).toBe(200);
    const expired = await call("GET", f.url, { now: T0 + LIFETIME });
    expect([expired.status, expired.body.meta.error_message]).toEqual([403, expect.stringMatching(/expired/)]);

    const early = (await call("GET", `/files/${f.id}`, { token, now: T0 + 100 })).body.data;
    expect(early.url).toBe(f.url); // not yet expired: unchanged
    const oldDerived = early.derived_files.small.url;
    // the next URL runs for the next period from the file's creation
    const renewed = (await call("GET", `/files/${f.id}`, { token, now: T0 + LIFETIME + 5 })).body.data;
    expect(renewed.url).not.toBe(f.url);
    expect(renewed.url_expires_at).toBe(iso(T0 + 2 * LIFETIME));
    expect(renewed.derived_files.small.url).not.toBe(oldDerived);
    expect(renewed.derived_files.small.url_expires_at).toBe(iso(T0 + 2 * LIFETIME));
    expect((await fetchRaw(renewed.url, { now: T0 + LIFETIME + 6 })).bytes).toEqual(fx.jpeg);
    expect((await fetchRaw(renewed.derived_files.small.url, { now: T0 + LIFETIME + 6 })).bytes).toEqual(fx.gif);
    expect((await fetchRaw(f.url, { now: T0 + LIFETIME + 6 })).status).toBe(403);
    // the renewed url is kept: a later GET before its expiry shows the same one
    const later = (await call("GET", `/files/${f.id}`, { token, now: T0 + LIFETIME + 50 })).body.data;
    expect(later.url).toBe(renewed.url);
    expect((await call("GET", "http://api.test/v1/files/content/not-a-token")).status).toBe(403);
  });

  it("answers Range requests with 206", async () => {
    const { token } = await actor("files");
    const f = await uploadOk(token, fx.mp3);
    const part = await fetchRaw(f.url, { headers: { Range: "bytes=10-19" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 10-19/${fx.mp3.length}`);
    expect(part.bytes).toEqual(fx.mp3.subarray(10, 20));
    const tail = await fetchRaw(f.url, { headers: { Range: "bytes=-5" } });
    expect([tail.status, tail.headers.get("content-range"), tail.bytes]).toEqual([
      206,
      `bytes ${fx.mp3.length - 5}-${fx.mp3.length - 1}/${fx.mp3.length}`,
      fx.mp3.subarray(-5),
    ]);
    const junk = await fetchRaw(f.url, { headers: { Range: "bytes=junk" } });
    expect([junk.status, junk.bytes]).toEqual([200, fx.mp3]);
    const head = await SELF.fetch(f.url, { method: "HEAD" });
    expect([head.status, head.headers.get("content-length"), head.headers.get("etag")]).toEqual([200, String(fx.mp3.length), `"${f.sha256}"`]);
  });

  it("url_short exists only for public files and redirects (302) to a fresh url", async () => {
    const { token } = await actor("files");
    const f = await uploadOk(token, fx.png, { is_public: "1" }, { now: T0 });
    expect(f.url_short).toMatch(/^http:\/\/api\.test\/v1\/f\/[0-9a-z]+-[A-Za-z0-9_-]{8}$/);
    const now = T0 + 10 * LIFETIME; // long after the first url expired
    const hop = await fetchRaw(f.url_short, { now });
    expect(hop.status).toBe(302);
    const location = hop.headers.get("location")!;
    expect(location).not.toBe(f.url);
    const content = await fetchRaw(location, { now: now + 1 });
    expect([content.status, content.bytes]).toEqual([200, fx.png]);
    const tampered = f.url_short.slice(0, -1) + (f.url_short.endsWith("x") ? "y" : "x");
    expect((await fetchRaw(tampered, { now })).status).toBe(404);
    const priv = await call("PATCH", `/files/${f.id}`, { token, json: { is_public: false } });
    expect(priv.body.data).not.toHaveProperty("url_short");
    expect((await fetchRaw(f.url_short, { now })).status).toBe(404);
  });
});

describe("GET /users/me/files with the general file parameters", () => {
  it("filters, paginates and includes raw on request", async () => {
    const { token } = await actor("files");
    const a = await uploadOk(token, fx.jpeg, { type: "com.example.photo", is_public: "1", raw: JSON.stringify({ "com.example.meta": [{ n: 1 }] }) });
    const b = await uploadOk(token, fx.mp3, { type: "com.example.sound" });
    const c = await uploadOk(token, new TextEncoder().encode("notes"), { type: "com.example.note", is_public: "1" });
    const d = (await call("POST", "/files", { token, json: { type: "com.example.photo", kind: "image" } })).body.data;
    const ids = async (q: string) => {
      const res = await call("GET", `/users/me/files${q}`, { token });
      expect(res.status).toBe(200);
      return res.body.data.map((f: any) => f.id);
    };
    expect(await ids("")).toEqual([d.id, c.id, b.id, a.id]);
    expect(await ids("?include_incomplete=0")).toEqual([c.id, b.id, a.id]);
    expect(await ids("?include_private=0")).toEqual([c.id, a.id]);
    expect(await ids("?mime_types=image/jpg,audio/mpeg")).toEqual([b.id, a.id]);
    expect(await ids("?mime_types=text/plain")).toEqual([c.id]); // recorded as text/plain; charset=utf-8
    expect(await ids("?file_types=com.example.photo")).toEqual([d.id, a.id]);
    expect(await ids("?exclude_file_types=com.example.photo,com.example.note")).toEqual([b.id]);
    expect(await ids("?file_types=com.example.sound&exclude_file_types=com.example.sound")).toEqual([b.id]);
    const page = await call("GET", "/users/me/files?count=2", { token });
    expect(page.body.meta).toMatchObject({ code: 200, more: true, max_id: d.id, min_id: c.id });
    expect(page.body.data.map((f: any) => f.pagination_id)).toEqual([d.id, c.id]);
    expect(await ids(`?before_id=${c.id}`)).toEqual([b.id, a.id]);
    const plain = await call("GET", "/users/me/files", { token });
    expect(plain.body.data[3]).not.toHaveProperty("raw");
    expect(plain.body.data[3].file_token).toBe(a.file_token);
    for (const flag of ["include_raw", "include_file_raw"]) {
      const withRaw = await call("GET", `/users/me/files?${flag}=1`, { token });
      expect(withRaw.body.data[3].raw).toEqual({ "com.example.meta": [{ n: 1 }] });
      expect(withRaw.body.data[1].raw).toEqual({});
    }
    const bad = await call("GET", "/users/me/files?include_private=2", { token });
    expect([bad.status, bad.body.meta.error_message]).toEqual([400, expect.stringMatching(/'include_private' must be 0 or 1/)]);
  });
});

describe("PATCH and DELETE", () => {
  it("changes name, is_public and raw (owner only) and validates them", async () => {
    const owner = await actor("files");
    const other = await actor("files");
    const f = await uploadOk(owner.token, fx.png);
    const res = await call("PATCH", `/files/${f.id}`, { token: owner.token, json: { name: "renamed", is_public: true, raw: { "com.example.x": [{ a: 1 }] } } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: "renamed", is_public: true, raw: { "com.example.x": [{ a: 1 }] }, file_token: f.file_token });
    expect(typeof res.body.data.url_short).toBe("string");
    expect((await call("PATCH", `/files/${f.id}`, { token: other.token, json: { name: "mine" } })).status).toBe(403);
    const tooLong = await call("PATCH", `/files/${f.id}`, { token: owner.token, json: { name: "x".repeat(257) } });
    expect([tooLong.status, tooLong.body.meta.error_message]).toEqual([400, expect.stringMatching(/'name'/)]);
    const immutable = await call("PATCH", `/files/${f.id}`, { token: owner.token, json: { kind: "audio" } });
    expect([immutable.status, immutable.body.meta.error_message]).toEqual([400, expect.stringMatching(/kind/)]);
    expect((await call("PATCH", `/files/${f.id}`, { token: owner.token, body: "name=x", headers: { "Content-Type": "text/plain" } })).status).toBe(415);
    const cleared = await call("PATCH", `/files/${f.id}?include_file_raw=1`, { token: owner.token, json: { raw: null } });
    expect(cleared.body.data.raw).toEqual({});
    const got = await call("GET", `/files/${f.id}?include_raw=1`, { token: owner.token });
    expect(got.body.data).toMatchObject({ name: "renamed", is_public: true, raw: {} });
  });

  it("DELETE /files/{id} returns the deleted file, frees its storage and removes its content", async () => {
    const owner = await actor("files");
    const other = await actor("files");
    const before = await storageOf(owner.token);
    const f = await uploadOk(owner.token, fx.wav);
    expect((await call("PUT", `/files/${f.id}/content/extra?file_token=${f.file_token}`, { body: fx.png })).status).toBe(204);
    const keys = [
      (await dbRow("select storage_key from files where id = ?", Number(f.id)))!.storage_key,
      (await dbRow("select storage_key from derived_files where file_id = ?", Number(f.id)))!.storage_key,
    ];
    expect(await storageOf(owner.token)).toBe(before - fx.wav.length - fx.png.length);
    expect((await call("DELETE", `/files/${f.id}`, { token: other.token })).status).toBe(403);
    const del = await call("DELETE", `/files/${f.id}`, { token: owner.token });
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ id: f.id, is_deleted: true, kind: "audio" });
    expect(await storageOf(owner.token)).toBe(before);
    expect((await call("GET", `/files/${f.id}`, { token: owner.token })).status).toBe(404);
    expect((await call("DELETE", `/files/${f.id}`, { token: owner.token })).status).toBe(404);
    for (const key of keys) expect(await env.FILES.head(key)).toBeNull();
    expect((await fetchRaw(f.url)).status).toBeGreaterThanOrEqual(403);
  });
});

describe("DELETE /files?ids= and the file_delete operation", () => {
  it("answers 202 with the ids confirmed for deletion and a running operation that completes, deleting only the caller's files", async () => {
    const owner = await actor("files");
    const other = await actor("files");
    const before = await storageOf(owner.token);
    const a = await uploadOk(owner.token, fx.png);
    const b = await uploadOk(owner.token, fx.mp3);
    const ph = (await call("POST", "/files", { token: owner.token, json: { type: "com.example.test", kind: "image" } })).body;
    const theirs = await uploadOk(other.token, fx.gif);
    const res = await call("DELETE", `/files?ids=${a.id},${b.id},${ph.data.id},${theirs.id},999999999`, { token: owner.token, now: T0 });
    expect(res.status).toBe(202);
    expect(res.body.meta.code).toBe(202);
    // As the reference shows: the caller's files among the ids, in the order asked, as strings.
    expect(res.body.data).toEqual([a.id, b.id, ph.data.id]);
    expect(res.body.meta.status_url).toMatch(/^http:\/\/api\.test\/v1\/sys\/ops\/[0-9a-f-]{36}$/);
    const opId = res.body.meta.status_url.split("/").pop();
    const running = (await call("GET", res.body.meta.status_url, { token: owner.token })).body.data;
    expect(running).toMatchObject({ id: opId, type: "file_delete", created_at: iso(T0) });
    const done = await waitForOp(owner.token, res.body.meta.status_url);
    expect(done).toMatchObject({ status: "completed", ended_at: expect.any(String) });
    const detail = JSON.parse((await dbRow("select detail from operations where id = ?", opId))!.detail);
    expect(detail.files).toEqual({ [a.id]: "deleted", [b.id]: "deleted", [ph.data.id]: "deleted", [theirs.id]: "not_found", "999999999": "not_found" });
    for (const id of [a.id, b.id, ph.data.id]) expect((await call("GET", `/files/${id}`, { token: owner.token })).status).toBe(404);
    expect((await call("GET", `/files/${theirs.id}`, { token: other.token })).status).toBe(200);
    expect(await storageOf(owner.token)).toBe(before);
    expect((await call("GET", ph.meta.status_url, { token: owner.token })).body.data.status).toBe("dead");
  });

  it("validates ids: integers, at most 200", async () => {
    const { token } = await actor("files");
    const many = Array.from({ length: 201 }, (_, i) => i + 1).join(",");
    const res = await call("DELETE", `/files?ids=${many}`, { token });
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/at most 200/)]);
    expect((await call("DELETE", "/files?ids=1,two", { token })).status).toBe(400);
    expect((await call("DELETE", "/files", { token })).status).toBe(400);
  });

  it("a content removal that fails leaves the operation dead, listing what was not removed", async () => {
    const { token, user } = await actor("files");
    const f = await uploadOk(token, fx.png);
    await settled(token, f.id); // its derived images are there too
    const key = (await dbRow("select storage_key from files where id = ?", Number(f.id)))!.storage_key;
    const derivedKeys = (
      await DB.prepare("select storage_key from derived_files where file_id = ?").bind(Number(f.id)).all<{ storage_key: string }>()
    ).results.map((r) => r.storage_key);
    expect(derivedKeys).toHaveLength(2);
    const opId = crypto.randomUUID();
    await DB.prepare("insert into operations (id, type, status, user_id, created_at) values (?, 'file_delete', 'running', ?, ?)")
      .bind(opId, Number(user.id), T0)
      .run();
    const failingBucket = { delete: () => Promise.reject(new Error("R2 unavailable")) };
    await runFileDelete({ db: openDb(env), bucket: failingBucket, clock: () => T0 + 3 }, { opId, userId: Number(user.id), fileIds: [Number(f.id)] });
    const op = (await call("GET", `/sys/ops/${opId}`, { token })).body.data;
    expect(op).toMatchObject({ status: "dead", ended_at: iso(T0 + 3) });
    const detail = JSON.parse((await dbRow("select detail from operations where id = ?", opId))!.detail);
    expect(detail).toMatchObject({ files: { [f.id]: "deleted_content_not_removed" }, error: expect.stringMatching(/R2 unavailable/) });
    expect(detail.content_not_removed.sort()).toEqual([key, ...derivedKeys].sort());
    expect(await env.FILES.head(key)).not.toBeNull(); // nothing lost: the object is still there, and listed
  });

  it("a database failure leaves the operation dead and every file untouched", async () => {
    const { token, user } = await actor("files");
    const f = await uploadOk(token, fx.png);
    const opId = crypto.randomUUID();
    await DB.prepare("insert into operations (id, type, status, user_id, created_at) values (?, 'file_delete', 'running', ?, ?)")
      .bind(opId, Number(user.id), T0)
      .run();
    const db = openDb(env);
    const broken = Object.assign(Object.create(db), { exec: { ...db.exec, batch: () => Promise.reject(new Error("database unavailable")) } });
    await runFileDelete({ db: broken, bucket: env.FILES, clock: () => T0 + 1 }, { opId, userId: Number(user.id), fileIds: [Number(f.id)] });
    expect((await call("GET", `/sys/ops/${opId}`, { token })).body.data).toMatchObject({ status: "dead", ended_at: iso(T0 + 1) });
    const detail = JSON.parse((await dbRow("select detail from operations where id = ?", opId))!.detail);
    expect(detail.files).toEqual({ [f.id]: "not_deleted" });
    const still = await call("GET", `/files/${f.id}`, { token });
    expect(still.status).toBe(200);
    expect((await fetchRaw(still.body.data.url)).bytes).toEqual(fx.png);
  });
});

describe("GET /sys/ops/{ops_id}", () => {
  it("needs any token, a UUID, and an existing operation", async () => {
    const app = await makeApp();
    const op = crypto.randomUUID();
    expect((await call("GET", `/sys/ops/${op}`)).status).toBe(401);
    expect((await call("GET", `/sys/ops/${op}`, { token: await appToken(app) })).status).toBe(404);
    expect((await call("GET", "/sys/ops/not-a-uuid", { token: await appToken(app) })).status).toBe(400);
  });
});

describe("OpenAPI document", () => {
  it("lists the file routes", async () => {
    const paths = (await call("GET", "/openapi.json")).body.paths;
    for (const p of [
      "/v1/files",
      "/v1/files/{file_id}",
      "/v1/files/{file_id}/content",
      "/v1/files/{file_id}/content/{derived_key}",
      "/v1/files/content/{url_token}",
      "/v1/f/{code}",
      "/v1/users/me/files",
      "/v1/sys/ops/{ops_id}",
    ]) {
      expect(Object.keys(paths)).toContain(p);
    }
    expect(Object.keys(paths["/v1/files"])).toEqual(expect.arrayContaining(["get", "post", "delete"]));
    expect(Object.keys(paths["/v1/files/{file_id}"])).toEqual(expect.arrayContaining(["get", "patch", "delete"]));
  });
});
