/**
 * Content whose type and media information are read: its first bytes in memory and, for what
 * lies further in, reads of the stored object. So an upload is never held whole to be examined.
 */
export interface ContentSource {
  /** The first bytes (all of them when the content is small). */
  head: Uint8Array;
  size: number;
  /** `length` bytes from `offset` (fewer at the end). */
  range(offset: number, length: number): Promise<Uint8Array>;
  /** The whole content as a stream. */
  stream(): Promise<ReadableStream<Uint8Array>>;
}

/** Content held in memory (small uploads such as profile images, and tests). */
export function bufferSource(bytes: Uint8Array): ContentSource {
  return {
    head: bytes,
    size: bytes.length,
    range: async (offset, length) => bytes.subarray(offset, offset + length),
    stream: async () => new Blob([bytes]).stream(),
  };
}

/** Content stored in R2 under `key`, with its first bytes already known. */
export function r2Source(bucket: R2Bucket, key: string, head: Uint8Array, size: number): ContentSource {
  const object = async (range?: R2Range) => {
    const got = await bucket.get(key, range ? { range } : undefined);
    if (!got) throw new Error(`stored content ${key} is missing`);
    return got;
  };
  return {
    head,
    size,
    async range(offset, length) {
      if (offset + length <= head.length) return head.subarray(offset, offset + length);
      if (offset >= size || length <= 0) return new Uint8Array(0);
      return (await object({ offset, length: Math.min(length, size - offset) })).bytes();
    },
    stream: async () => (await object()).body as ReadableStream<Uint8Array>,
  };
}
