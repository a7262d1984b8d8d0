import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BASE, actor, call, must } from "../support/client";
import { lazyBody, lazyContent } from "./body-streams";

// Issue 26: uploads stream to R2 (no whole-file buffer), a declared over-limit length is refused
// at once, and a refused upload leaves no object behind. Content is generated as it is read.

const MiB = 1024 * 1024;
const enc = new TextEncoder();
const BOUNDARY = "----streamed-upload-boundary";

/** A multipart body around a content stream: the fields first, then the file part. */
function multipart(fields: Record<string, string>, content: ReadableStream<Uint8Array>, filename = "big.bin") {
  const head =
    Object.entries(fields)
      .map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join("") + `--${BOUNDARY}\r\nContent-Disposition: form-data; name="content"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${BOUNDARY}--\r\n`;
  const reader = content.getReader();
  let stage = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (stage === 0) {
          stage = 1;
          return controller.enqueue(enc.encode(head));
        }
        if (stage === 1) {
          const { done, value } = await reader.read();
          if (!done) return controller.enqueue(value);
          stage = 2;
          return controller.enqueue(enc.encode(tail));
        }
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

const postFile = (token: string, body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
  SELF.fetch(`${BASE}/files`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
    body,
  });

async function sha256OfStream(stream: ReadableStream<Uint8Array>) {
  const digest = new crypto.DigestStream("SHA-256");
  await stream.pipeTo(digest);
  return [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const storedKeys = async (userId: string) => (await env.FILES.list({ prefix: `u/${userId}/` })).objects.map((o) => o.key);

describe("uploads stream to R2", () => {
  it("stores a 100 MiB upload whole, with the sha256 of its bytes, and serves the same bytes", async () => {
    const { token } = await actor("files");
    const size = 100 * MiB;
    const content = lazyContent(size, 26);
    const res = await postFile(token, multipart({ type: "com.example.big", kind: "other" }, content.stream));
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(201);
    const expected = await content.sha256();
    expect(body.data).toMatchObject({ size, sha256: expected, kind: "other", mime_type: "application/octet-stream" });
    const served = await SELF.fetch(body.data.url);
    expect(served.status).toBe(200);
    expect(await sha256OfStream(served.body!)).toBe(expected);
  }, 120_000);

  it("stores the raw body of a placeholder's upload (declared length) with its sha256", async () => {
    const { token } = await actor("files");
    const placeholder = (await must(call("POST", "/files", { token, json: { type: "com.example.raw", kind: "other" } }), 201)).data;
    const size = 12 * MiB + 123; // more than one R2 part
    const content = lazyContent(size, 7);
    const res = await SELF.fetch(`${BASE}/files/${placeholder.id}/content`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/octet-stream", "Content-Length": String(size) },
      body: content.stream,
    });
    expect(res.status, await res.text()).toBe(204);
    const file = (await must(call("GET", `/files/${placeholder.id}`, { token }))).data;
    expect(file).toMatchObject({ size, sha256: await content.sha256(), is_complete: true });
  }, 60_000);

  it("refuses an upload declaring 200 MiB at once, reading none of it", async () => {
    const { token } = await actor("files");
    const placeholder = (await must(call("POST", "/files", { token, json: { type: "com.example.raw", kind: "other" } }), 201)).data;
    for (const [method, path, type] of [
      ["PUT", `/files/${placeholder.id}/content`, "application/octet-stream"],
      ["POST", "/files", `multipart/form-data; boundary=${BOUNDARY}`],
    ]) {
      const body = lazyBody(200 * MiB, "");
      const started = Date.now();
      const res = await SELF.fetch(`${BASE}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": type, "Content-Length": String(200 * MiB) },
        body: body.stream,
      });
      expect(res.status, `${method} ${path}: ${await res.text()}`).toBe(413);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(body.pulled()).toBeLessThan(2 * MiB);
    }
  });

  it("cuts off an undeclared upload past the file limit with a 413 and keeps nothing", async () => {
    const { token, user } = await actor("files");
    const content = lazyContent(101 * MiB, 3);
    const res = await postFile(token, multipart({ type: "com.example.big" }, content.stream));
    expect(res.status, await res.text()).toBe(413);
    expect(await storedKeys(user.id)).toEqual([]);
  }, 60_000);
});

describe("a refused upload leaves no R2 object behind", () => {
  it("removes the content when a check after storing refuses it (not the kind it claims)", async () => {
    const { token, user } = await actor("files");
    const res = await postFile(token, multipart({ type: "com.example.x", kind: "image" }, lazyContent(2 * MiB).stream));
    expect(res.status, await res.text()).toBe(400);
    expect(await storedKeys(user.id)).toEqual([]);
  });

  it("removes the content when the row cannot be written (the file was deleted during the upload)", async () => {
    const { token, user } = await actor("files");
    const placeholder = (await must(call("POST", "/files", { token, json: { type: "com.example.raw", kind: "other" } }), 201)).data;
    const content = lazyContent(9 * MiB, 5).stream.getReader();
    let sent = 0;
    let deleted = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent > 4 * MiB && !deleted) {
          deleted = true;
          await must(call("DELETE", `/files/${placeholder.id}`, { token }));
        }
        const { done, value } = await content.read();
        if (done) return controller.close();
        sent += value.length;
        controller.enqueue(value);
      },
    });
    const res = await SELF.fetch(`${BASE}/files/${placeholder.id}/content`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/octet-stream" },
      body,
    });
    expect(deleted).toBe(true);
    expect(res.status, await res.text()).toBe(404);
    expect(await storedKeys(user.id)).toEqual([]);
  }, 60_000);
});
