import { describe, expect, it } from "vitest";
import { readMultipart, textSink } from "../../src/services/multipart-stream";
import { parseMultipart } from "../../src/services/uploads";

const enc = new TextEncoder();
const dec = new TextDecoder();
const CT = "multipart/form-data; boundary=XyZ";
const BODY =
  'preamble\r\n--XyZ\r\nContent-Disposition: form-data; name="type"\r\n\r\ncom.example.x\r\n' +
  '--XyZ\r\nContent-Disposition: form-data; name="content"; filename="a.bin"\r\nContent-Type: image/png\r\n\r\n\r\n--Xy\r\n\r\n--XyQ\r' +
  '\r\n--XyZ\r\nContent-Disposition: form-data; name="type"\r\n\r\nsecond\r\n--XyZ--\r\n';

/** The body as a stream cut into pieces of `size` bytes. */
function pieces(bytes: Uint8Array, size: number) {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function parse(body: Uint8Array, size: number) {
  const fields = new Map<string, string>();
  const file: Uint8Array[] = [];
  await readMultipart(pieces(body, size), CT, (part) => {
    if (part.name === "content") return { write: (c) => void file.push(c), end: () => {} };
    return fields.has(part.name) ? null : textSink({ bytes: 1024 }, (v) => fields.set(part.name, v));
  });
  return { fields: Object.fromEntries(fields), content: dec.decode(new Uint8Array(file.flatMap((c) => [...c]))) };
}

describe("readMultipart (streaming)", () => {
  it("gives the same parts as the whole-body parser, however the body is cut into chunks", async () => {
    const body = enc.encode(BODY);
    const whole = parseMultipart(body, CT);
    const expected = { fields: { type: "com.example.x" }, content: dec.decode(whole.get("content")!.data) };
    expect(expected.content).toBe("\r\n--Xy\r\n\r\n--XyQ\r");
    for (const size of [1, 2, 3, 5, 7, 13, 64, body.length]) expect(await parse(body, size), `chunks of ${size}`).toEqual(expected);
  });

  it("refuses a body without its closing boundary, and fields past their budget", async () => {
    await expect(parse(enc.encode(BODY.slice(0, -10)), 4)).rejects.toMatchObject({ code: 400 });
    const big = enc.encode(`--XyZ\r\nContent-Disposition: form-data; name="raw"\r\n\r\n${"x".repeat(2000)}\r\n--XyZ--\r\n`);
    await expect(parse(big, 100)).rejects.toMatchObject({ code: 413 });
  });
});
