import type { MiddlewareHandler } from "hono";
import { BODY_LIMITS } from "../config";
import { ApiError } from "./errors";
import type { AppEnv } from "./types";

// Every request body is bounded while it streams in, in one place: `boundBody` (app-wide) puts a
// counting stream in front of the body with the default limit, and `limitBody` (added by
// `defineRoute` to every route) sets the route's own limit before anything reads the body. So
// JSON is never parsed, nor an upload buffered, past its limit, whoever reads the body.

/** The bound on one request's body. */
export interface BodyBound {
  /** The limit in force: the app default until the route's middleware sets its own. */
  limit: number;
  /** The declared Content-Length, or null for a chunked body. */
  declared: number | null;
  /** Why reading the body was stopped (too large, stalled, cut off): the answer to give. */
  failure?: ApiError;
}

const tooLarge = (limit: number) => new ApiError(413, `the request body is larger than this endpoint accepts (${limit} bytes)`);
const stalled = () => ApiError.badRequest(`the request body stalled: no bytes arrived for ${BODY_LIMITS.idleSeconds} seconds before it was complete`);
const cutOff = () => ApiError.badRequest("the request body was cut off before its declared Content-Length");

function declaredLength(req: Request): number | null {
  const v = req.headers.get("content-length");
  return v !== null && /^\d{1,16}$/.test(v) ? Number(v) : null;
}

/**
 * App-wide: bounds the body of every request. A declared length over the largest limit of any
 * route is a 413 at once; otherwise the body is replaced by a counting stream that refuses to go
 * past the limit in force when it is read (see `limitBody`). If reading stopped on the bound,
 * the answer is that refusal, whatever the reader made of the error (e.g. "malformed JSON").
 */
export const boundBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  const body = c.req.raw.body;
  if (!body) return next();
  const bound: BodyBound = { limit: BODY_LIMITS.json, declared: declaredLength(c.req.raw) };
  if (bound.declared !== null && bound.declared > BODY_LIMITS.upload) throw tooLarge(BODY_LIMITS.upload);
  c.set("bodyBound", bound);
  c.req.raw = new Request(c.req.raw, { body: boundedStream(body, bound) });
  await next();
  // Whatever the reader made of the failure (a "malformed JSON", a field missing), the answer is the failure.
  if (bound.failure && c.error !== bound.failure) throw bound.failure;
};

/** Route middleware (see `defineRoute`): the route's body limit; a declared length over it is a 413 before reading. */
export function limitBody(limit: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const bound = c.get("bodyBound");
    if (bound) {
      bound.limit = limit;
      if (bound.declared !== null && bound.declared > limit) throw tooLarge(limit);
    }
    await next();
  };
}

/**
 * The body as a pull stream (nothing is read ahead of the consumer) that counts bytes against
 * `bound.limit` and gives up on a body idle for `BODY_LIMITS.idleSeconds`.
 */
function boundedStream(source: ReadableStream<Uint8Array>, bound: BodyBound): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let seen = 0;
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: ApiError) => {
    bound.failure ??= error;
    controller.error(error);
    (reader ?? source).cancel(error).catch(() => {});
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!reader) {
          // A declared length over the route's limit: refused before a byte is read.
          if (bound.declared !== null && bound.declared > bound.limit) return fail(controller, tooLarge(bound.limit));
          reader = source.getReader();
        }
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await readWithin(reader, BODY_LIMITS.idleSeconds * 1000);
        } catch (e) {
          return fail(controller, e instanceof ApiError ? e : cutOff());
        }
        if (chunk.done) return controller.close();
        seen += chunk.value.byteLength;
        if (seen > bound.limit) return fail(controller, tooLarge(bound.limit));
        controller.enqueue(chunk.value);
      },
      cancel: (reason) => (reader ?? source).cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** One read, or a "stalled" error when nothing arrives within `ms`. */
async function readWithin<T>(reader: ReadableStreamDefaultReader<T>, ms: number): Promise<ReadableStreamReadResult<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(stalled()), ms);
  });
  try {
    return await Promise.race([reader.read(), idle]);
  } finally {
    clearTimeout(timer);
  }
}
