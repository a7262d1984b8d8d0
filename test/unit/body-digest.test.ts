import { describe, expect, it } from "vitest";
import { digestedBody, multipartBoundary, withoutOccurrences } from "../../src/http/body-digest";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Runs `chunks` through the filter; the kept text. */
function filtered(needle: string, chunks: string[]): string {
  const f = withoutOccurrences(enc.encode(needle));
  return chunks.map((c) => dec.decode(f.push(enc.encode(c)))).join("") + dec.decode(f.flush());
}

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(enc.encode(c));
      controller.close();
    },
  });
}

describe("withoutOccurrences", () => {
  it("drops the needle wherever it is, also across chunk boundaries", () => {
    expect(filtered("XYZ", ["aXYZb"])).toBe("ab");
    expect(filtered("XYZ", ["aX", "YZb", "XY", "Z"])).toBe("ab");
    expect(filtered("XYZ", ["X", "Y", "Z", "XYZXYZ"])).toBe("");
    expect(filtered("XYZ", ["XY", "XYZ", "Z"])).toBe("XYZ");
    expect(filtered("XYZ", ["no match", " at all X"])).toBe("no match at all X");
  });
});

describe("multipartBoundary", () => {
  it("reads the boundary of a multipart type only", () => {
    expect(multipartBoundary("multipart/form-data; boundary=abc123")).toBe("abc123");
    expect(multipartBoundary('multipart/form-data; boundary="a b"')).toBe("a b");
    expect(multipartBoundary("application/json")).toBeUndefined();
    expect(multipartBoundary(undefined)).toBeUndefined();
  });
});

describe("digestedBody", () => {
  it("passes the body through and hashes it; the same form with another boundary hashes the same", async () => {
    const one = digestedBody(streamOf(["--b1\r\nfield\r\n", "--b1--"]), "b1");
    expect(await new Response(one.stream).text()).toBe("--b1\r\nfield\r\n--b1--");
    const two = digestedBody(streamOf(["--other\r\nfie", "ld\r\n--other--"]), "other");
    const three = digestedBody(streamOf(["--other\r\nfield!\r\n--other--"]), "other");
    const [h1, h2, h3] = await Promise.all([one.digest(), two.digest(), three.digest()]);
    expect(h1).toMatch(/^[0-9a-f]{64}$/);
    expect(h2).toBe(h1);
    expect(h3).not.toBe(h1);
  });

  it("hashes what the handler left unread, and an absent body", async () => {
    const read = digestedBody(streamOf(["abc", "def"]));
    await read.stream.getReader().read();
    const unread = digestedBody(streamOf(["abcdef"]));
    expect(await read.digest()).toBe(await unread.digest());
    expect(await digestedBody(null).digest()).toBe(await digestedBody(streamOf([])).digest());
  });
});
