// Request bodies generated lazily, chunk by chunk as the Worker reads them, so a test can send
// hundreds of megabytes without holding them, and can tell how much the Worker actually read.

const CHUNK = 64 * 1024;

/** `size` bytes: `prefix`, then `a`s. `pulled()` is how many bytes the reader has taken so far. */
export function lazyBody(size: number, prefix: string) {
  const head = new TextEncoder().encode(prefix);
  const filler = new Uint8Array(CHUNK).fill(0x61);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent >= size) return controller.close();
        const chunk = sent === 0 && head.length ? head : filler.subarray(0, Math.min(CHUNK, size - sent));
        sent += chunk.length;
        controller.enqueue(chunk.slice());
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => sent };
}

/**
 * `size` bytes of deterministic pseudo-random content (xorshift), generated as they are read,
 * and their SHA-256 once the stream has been read to the end.
 */
export function lazyContent(size: number, seed = 1) {
  let state = seed >>> 0 || 1;
  let sent = 0;
  const digest = new crypto.DigestStream("SHA-256");
  const writer = digest.getWriter();
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (sent >= size) {
          await writer.close();
          return controller.close();
        }
        const n = Math.min(CHUNK, size - sent);
        const chunk = new Uint8Array(n);
        const words = new Uint32Array(chunk.buffer, 0, n >> 2);
        for (let i = 0; i < words.length; i++) {
          state ^= state << 13;
          state ^= state >>> 17;
          state ^= state << 5;
          words[i] = state >>> 0;
        }
        sent += n;
        await writer.write(chunk.slice());
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  const hex = async () => [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { stream, sha256: hex };
}
