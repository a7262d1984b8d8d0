import { describe, expect, it } from "vitest";
import { detect, detectCharset, durationString, kindOfMime, normalizeMime, readMp4 } from "../../src/services/media";
import { parseMultipart, partText, readBody } from "../../src/services/uploads";
import * as fx from "../fixtures/media";

const enc = new TextEncoder();

describe("mime normalization (api.md rule 6 and the table)", () => {
  it("maps accepted alternatives to the recorded type, case-insensitively, keeping a charset aside", () => {
    expect(normalizeMime("image/jpg")).toEqual({ base: "image/jpeg" });
    expect(normalizeMime("Audio/X-WAV")).toEqual({ base: "audio/wave" });
    expect(normalizeMime("video/mp4")).toEqual({ base: "video/mpeg" });
    expect(normalizeMime("audio/m4a").base).toBe("audio/mp4");
    expect(normalizeMime('text/plain; charset="UTF-8"')).toEqual({ base: "text/plain", charset: "utf-8" });
    expect(() => normalizeMime("png")).toThrow(/'mime_type' must be a mime type/);
  });

  it("assigns kinds from the table, other for everything else", () => {
    expect([kindOfMime("audio/flac"), kindOfMime("video/webm"), kindOfMime("image/gif"), kindOfMime("image/webp"), kindOfMime("audio/ogg")]).toEqual([
      "audio",
      "video",
      "image",
      "other",
      "other",
    ]);
  });
});

describe("detection from bytes", () => {
  it("tells MP4 video from MP4 audio by its tracks", async () => {
    expect(await detect(fx.mp4)).toMatchObject({ format: "mp4", mime: "video/mpeg", hasVideo: true });
    expect(await detect(fx.m4a)).toMatchObject({ format: "mp4", mime: "audio/mp4", hasVideo: false });
    expect(readMp4(fx.mp4)).toEqual({ duration: expect.closeTo(1, 1), hasVideo: true, video: { width: 64, height: 48 } });
    expect(readMp4(fx.png)).toBeNull();
  });

  it("detects text encodings and formats durations", () => {
    expect(detectCharset(enc.encode("plain ascii"))).toBe("utf-8");
    expect(detectCharset(new Uint8Array([0xff, 0xfe, 0x41, 0x00, 0x42, 0x00]))).toMatch(/utf-16/);
    expect(durationString(3725.4)).toBe("1:02:05");
    expect(durationString(59.6)).toBe("0:01:00");
  });
});

describe("multipart parsing and bounded bodies", () => {
  it("parses fields and file parts without copying, with quoted and unquoted boundaries", () => {
    const body = enc.encode(
      'preamble\r\n--XyZ\r\nContent-Disposition: form-data; name="type"\r\n\r\ncom.example.x\r\n' +
        '--XyZ\r\nContent-Disposition: form-data; name="content"; filename="a \\"b\\".bin"\r\nContent-Type: image/png\r\n\r\n\r\n--Xy\r\n\r\n--XyZ--\r\n',
    );
    for (const ct of ["multipart/form-data; boundary=XyZ", 'multipart/form-data; boundary="XyZ"']) {
      const parts = parseMultipart(body, ct);
      expect(partText(parts.get("type"))).toBe("com.example.x");
      const content = parts.get("content")!;
      expect(content.filename).toBe('a "b".bin');
      expect(content.contentType).toBe("image/png");
      expect(new TextDecoder().decode(content.data)).toBe("\r\n--Xy\r\n");
      expect(content.data.buffer).toBe(body.buffer);
    }
    expect(() => parseMultipart(body, "multipart/form-data")).toThrow(/no boundary/);
    expect(() => parseMultipart(enc.encode('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nno end'), "multipart/form-data; boundary=XyZ")).toThrow(
      /no closing boundary/,
    );
  });

  it("stops reading at the limit", async () => {
    await expect(readBody(new Request("http://x/", { method: "POST", body: "x".repeat(11) }), 10)).rejects.toMatchObject({ code: 413 });
    expect((await readBody(new Request("http://x/", { method: "POST", body: "x".repeat(10) }), 10)).length).toBe(10);
  });
});
