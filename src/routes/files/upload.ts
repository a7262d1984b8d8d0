import { BODY_LIMITS } from "../../config";
import { ApiError } from "../../http/errors";
import { r2Source, type ContentSource } from "../../services/content-source";
import { readMultipart, textSink } from "../../services/multipart-stream";
import { R2ContentWriter, type StoredContent } from "../../services/r2-writer";
import { newStorageKey, type PartHeaders } from "../../services/uploads";
import { discardContent, isMultipart, type C } from "./common";

// Receiving an upload: its bytes stream from the request into R2 (never held whole), its
// checksum computed on the way; the type and media information are then read from the first
// bytes and the stored object. Whatever fails after the bytes are stored removes them again.

/** An upload received into R2. */
export interface ReceivedUpload {
  stored: StoredContent;
  /** The stored content, to examine (type, media information). */
  source: ContentSource;
  /** Text fields of a multipart body (the first part of each name). */
  fields: Map<string, string>;
  /** Headers of the multipart part holding the file; undefined for a raw body, or none sent. */
  filePart?: PartHeaders;
}

/**
 * Streams the request's content into R2: the raw body, or the `content` part of a multipart
 * body (its other parts kept as text fields). More than `limit` bytes of content is a 413 and
 * leaves nothing stored.
 */
export async function receiveUpload(c: C, userId: number, limit: number, what: string): Promise<ReceivedUpload> {
  const writer = new R2ContentWriter(c.var.files, newStorageKey(userId), limit, () => new ApiError(413, `${what} is larger than ${limit} bytes`));
  const fields = new Map<string, string>();
  let filePart: PartHeaders | undefined;
  try {
    if (isMultipart(c)) {
      const budget = { bytes: BODY_LIMITS.multipartOverhead };
      await readMultipart(c.req.raw.body, c.req.header("content-type")!, (part) => {
        if (part.name === "content") {
          if (filePart) return null;
          filePart = part;
          return { write: (chunk) => writer.write(chunk), end: () => {} };
        }
        return fields.has(part.name) ? null : textSink(budget, (v) => fields.set(part.name, v));
      });
    } else if (c.req.raw.body) {
      const reader = c.req.raw.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await writer.write(value);
      }
    }
    const stored = await writer.finish();
    return { stored, source: r2Source(c.var.files, stored.key, stored.head, stored.size), fields, filePart };
  } catch (e) {
    await writer.abort();
    throw e;
  }
}

/**
 * Runs what makes an upload a file (checks, database row) and, if any of it fails, removes the
 * stored content, so a refused upload leaves nothing behind (its URLs are signed, never stored).
 */
export async function keepUpload<T>(c: C, upload: ReceivedUpload, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    await discardContent(c, upload.stored.key);
    throw e;
  }
}
