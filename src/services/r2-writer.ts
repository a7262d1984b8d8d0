import { UPLOAD_STREAMING } from "../config";
import type { ApiError } from "../http/errors";

/** Content written to R2 by an `R2ContentWriter`. */
export interface StoredContent {
  key: string;
  size: number;
  /** SHA-256 of the content, hex, computed as the bytes passed. */
  sha256: string;
  /** The first bytes (`UPLOAD_STREAMING.headBytes`), for type detection. */
  head: Uint8Array;
}

const hex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * Writes content to R2 as it arrives, holding at most one part in memory: content up to one
 * part is one `put`; larger content is an R2 multipart upload of equal parts (R2 needs a known
 * length for a stream, which an upload in a multipart body does not give). The SHA-256 is
 * computed on the way (DigestStream) and the first bytes are kept for detection. On any failure
 * the caller calls `abort`, which leaves nothing behind in the bucket.
 */
export class R2ContentWriter {
  private size = 0;
  private readonly digest = new crypto.DigestStream("SHA-256");
  private readonly digestWriter = this.digest.getWriter();
  private readonly head = new Uint8Array(UPLOAD_STREAMING.headBytes);
  private headLength = 0;
  private part: Uint8Array | null = null;
  private partLength = 0;
  private upload: R2MultipartUpload | null = null;
  private readonly parts: R2UploadedPart[] = [];

  constructor(
    private readonly bucket: R2Bucket,
    readonly key: string,
    /** Largest content accepted; `tooLarge` is thrown past it. */
    private readonly limit: number,
    private readonly tooLarge: () => ApiError,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    this.size += chunk.length;
    if (this.size > this.limit) throw this.tooLarge();
    await this.digestWriter.write(chunk);
    if (this.headLength < this.head.length) {
      const n = Math.min(chunk.length, this.head.length - this.headLength);
      this.head.set(chunk.subarray(0, n), this.headLength);
      this.headLength += n;
    }
    this.part ??= new Uint8Array(UPLOAD_STREAMING.partBytes);
    for (let at = 0; at < chunk.length; ) {
      const n = Math.min(chunk.length - at, this.part.length - this.partLength);
      this.part.set(chunk.subarray(at, at + n), this.partLength);
      this.partLength += n;
      at += n;
      if (this.partLength === this.part.length) await this.flushPart();
    }
  }

  /** Uploads the full part buffer as the next part (starting the multipart upload on the first). */
  private async flushPart() {
    this.upload ??= await this.bucket.createMultipartUpload(this.key);
    // Awaited before the buffer is refilled: R2 reads it during the call.
    this.parts.push(await this.upload.uploadPart(this.parts.length + 1, this.part!.subarray(0, this.partLength)));
    this.partLength = 0;
  }

  async finish(): Promise<StoredContent> {
    const rest = this.part ? this.part.subarray(0, this.partLength) : new Uint8Array(0);
    if (!this.upload) await this.bucket.put(this.key, rest);
    else {
      if (this.partLength) await this.flushPart();
      await this.upload.complete(this.parts);
    }
    this.part = null;
    await this.digestWriter.close();
    return { key: this.key, size: this.size, sha256: hex(await this.digest.digest), head: this.head.slice(0, this.headLength) };
  }

  /** Removes whatever was written (an unfinished multipart upload, or the object). */
  async abort(): Promise<void> {
    this.part = null;
    this.digestWriter.abort().catch(() => {});
    await Promise.all([this.upload?.abort().catch(() => {}), this.bucket.delete(this.key).catch(() => {})]);
  }
}
