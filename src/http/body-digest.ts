import { Buffer } from "node:buffer";

const EMPTY = new Uint8Array(0);

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * A filter over a byte stream that drops every occurrence of `needle`, also across chunk
 * boundaries (it holds back the last `needle.length - 1` bytes until more arrive).
 */
export function withoutOccurrences(needle: Uint8Array) {
  let tail = EMPTY;
  return {
    push(chunk: Uint8Array): Uint8Array {
      const buf = Buffer.from(concat([tail, chunk]));
      const kept: Uint8Array[] = [];
      let from = 0;
      for (let i = buf.indexOf(needle, from); i >= 0; i = buf.indexOf(needle, from)) {
        kept.push(buf.subarray(from, i));
        from = i + needle.length;
      }
      const hold = Math.max(from, buf.length - (needle.length - 1));
      kept.push(buf.subarray(from, hold));
      tail = buf.slice(hold);
      return concat(kept);
    },
    flush(): Uint8Array {
      const rest = tail;
      tail = EMPTY;
      return rest;
    },
  };
}

/** The boundary of a `multipart/form-data` content type, if it is one. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\//i.test(contentType)) return undefined;
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

/** A request body read through a SHA-256 digest: `stream` for the handler, `digest()` for its hash. */
export interface DigestedBody {
  stream: ReadableStream<Uint8Array>;
  /** Reads what the handler left unread, then gives the body's SHA-256 (hex). */
  digest(): Promise<string>;
}

/**
 * Passes a request body through, hashing it as it is read (nothing is buffered beyond a chunk).
 * A multipart body is hashed without its boundary, which clients pick at random per request:
 * a retry of the same form then hashes the same.
 */
export function digestedBody(body: ReadableStream<Uint8Array> | null, boundary?: string): DigestedBody {
  const hasher = new crypto.DigestStream("SHA-256");
  const writer = hasher.getWriter();
  const filter = boundary ? withoutOccurrences(new TextEncoder().encode(boundary)) : { push: (b: Uint8Array) => b, flush: () => EMPTY };
  const reader = body?.getReader();
  let finished = !reader;
  const write = async (bytes: Uint8Array) => {
    if (bytes.length) await writer.write(bytes);
  };
  // One chunk on: to the digest, and returned (null at the end).
  const step = async (): Promise<Uint8Array | null> => {
    if (finished) return null;
    const r = await reader!.read();
    if (r.done) {
      finished = true;
      await write(filter.flush());
      return null;
    }
    await write(filter.push(r.value));
    return r.value;
  };
  // No high-water mark: nothing is read before the handler asks (a body not read is not hashed twice).
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunk = await step();
        if (chunk) controller.enqueue(chunk);
        else controller.close();
      },
      cancel: (reason) => reader?.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    async digest() {
      while (await step());
      await writer.close();
      return Buffer.from(await hasher.digest).toString("hex");
    },
  };
}
