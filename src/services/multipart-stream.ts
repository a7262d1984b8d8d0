import { ApiError } from "../http/errors";
import { boundaryOf, indexOf, partHeaders, type PartHeaders } from "./uploads";

/**
 * Where the bytes of one part go. `write` may be slow (an upload to R2): the parser waits for
 * it, so the request body is read no faster than the part is stored.
 */
export interface PartSink {
  write(chunk: Uint8Array): Promise<void> | void;
  end(): Promise<void> | void;
}

/** Largest header block of one part. */
const MAX_PART_HEADERS = 8 * 1024;
const enc = new TextEncoder();
const dec = new TextDecoder();
const CRLFCRLF = enc.encode("\r\n\r\n");

const malformed = (why = "") => ApiError.badRequest(`malformed multipart body${why ? `: ${why}` : ""}`);

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (!a.length) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * Parses a multipart/form-data body (RFC 7578) as it streams in: each part's bytes go to the
 * sink `sinkFor` gives for its headers (null: the part is skipped), never collected here. Only
 * the tail that could begin a delimiter, or one part's headers, is held between chunks.
 */
export async function readMultipart(
  body: ReadableStream<Uint8Array> | null,
  contentType: string,
  sinkFor: (part: PartHeaders) => PartSink | null,
): Promise<void> {
  const boundary = boundaryOf(contentType);
  const first = enc.encode(`--${boundary}`);
  const delimiter = enc.encode(`\r\n--${boundary}`);
  type State = "preamble" | "afterDelimiter" | "headers" | "body" | "done";
  let state = "preamble" as State;
  let buf: Uint8Array = new Uint8Array(0);
  let sink: PartSink | null = null;

  /** Consumes what `buf` holds; false when more bytes are needed. */
  const step = async (): Promise<boolean> => {
    switch (state) {
      case "preamble": {
        // The first delimiter may open the body (no CRLF before it).
        const at = indexOf(buf, first, 0);
        if (at < 0) {
          buf = buf.subarray(Math.max(0, buf.length - first.length));
          return false;
        }
        buf = buf.subarray(at + first.length);
        state = "afterDelimiter";
        return true;
      }
      case "afterDelimiter": {
        if (buf.length < 2) return false;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = "done";
          return false;
        }
        let i = 0;
        while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x09)) i++;
        if (i + 2 > buf.length) return false;
        if (buf[i] !== 0x0d || buf[i + 1] !== 0x0a) throw malformed();
        buf = buf.subarray(i + 2);
        state = "headers";
        return true;
      }
      case "headers": {
        const end = indexOf(buf, CRLFCRLF, 0);
        if (end < 0) {
          if (buf.length > MAX_PART_HEADERS) throw malformed("a part's headers are too long");
          return false;
        }
        const part = partHeaders(dec.decode(buf.subarray(0, end)).split("\r\n"));
        sink = part ? sinkFor(part) : null;
        buf = buf.subarray(end + 4);
        state = "body";
        return true;
      }
      case "body": {
        const at = indexOf(buf, delimiter, 0);
        if (at < 0) {
          // Keep what could be the start of a delimiter split across chunks.
          const keep = Math.min(buf.length, delimiter.length - 1);
          if (buf.length > keep) await sink?.write(buf.slice(0, buf.length - keep));
          buf = buf.slice(buf.length - keep);
          return false;
        }
        if (at > 0) await sink?.write(buf.slice(0, at));
        await sink?.end();
        sink = null;
        buf = buf.subarray(at + delimiter.length);
        state = "afterDelimiter";
        return true;
      }
      default:
        return false;
    }
  };

  if (!body) throw malformed("the body is empty");
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf = concat(buf, value);
      while (await step());
      if (state === "done") break;
    }
  } finally {
    if (state === "done") await reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
  if (state !== "done") throw malformed("no closing boundary");
}

/**
 * A sink keeping a text field's value. All fields together get `budget.bytes` (413 beyond):
 * what a multipart upload carries besides its file is small.
 */
export function textSink(budget: { bytes: number }, onValue: (value: string) => void): PartSink {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    write(chunk) {
      size += chunk.length;
      budget.bytes -= chunk.length;
      if (budget.bytes < 0) throw new ApiError(413, "the fields of the upload besides its file are too large");
      chunks.push(chunk);
    },
    end() {
      const all = new Uint8Array(size);
      let at = 0;
      for (const ch of chunks) {
        all.set(ch, at);
        at += ch.length;
      }
      onValue(dec.decode(all));
    },
  };
}
