import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../http/types";
import { PUBLIC } from "../../auth/access";
import { ok, okEncoded } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, Envelope, errors, idString } from "../../http/route";
import { sql } from "drizzle-orm";
import { allRows, boundShape } from "../../db/batch";
import { boundPostsQuery } from "../../stores/post-statement";
import { userExists } from "../../stores/users";

// The benchmark's floors, served only when BENCH_FLOORS is "1" (npm run bench sets it): the cost
// of the pipeline with a constant envelope, with exactly one indexed D1 read, with one read
// and a body of a given size already encoded (what any endpoint answering that many bytes costs),
// and with the read a page of 20 posts renders from and a page's bytes (what a list costs before
// any of its own work: its page query, decoding, rendering and encoding).
const enabled = (env: Env) => env.BENCH_FLOORS === "1";

/** Per isolate: floor bodies encoded once per size. */
const bodies = new Map<number, Uint8Array>();
/** A JSON string of `size` bytes, encoded once per size. */
function bodyOf(size: number): Uint8Array {
  let bytes = bodies.get(size);
  if (!bytes) bodies.set(size, (bytes = new TextEncoder().encode(JSON.stringify("x".repeat(Math.max(0, size - 2))))));
  return bytes;
}

/** A floor that runs `reads` and answers a body of `size` bytes. */
function sizedFloor(path: string, reads: string, summary: string) {
  return defineRoute(PUBLIC, {
    method: "get",
    path,
    tags: ["Benchmark"],
    summary,
    description: `Only served (and listed here) when \`BENCH_FLOORS\` is \`"1"\`: the pipeline, ${reads} and \`data\` a constant string of \`size\` bytes (at most 8 MB) encoded once. Anyone; emits nothing.`,
    request: { params: z.object({ size: idString() }) },
    responses: { 200: Envelope(z.string(), "A constant string", "xxxx"), ...errors(400, 404) },
  });
}

/** A sized floor's answer: `read` run, then the body of the requested size. */
async function answerSized(c: Context<AppEnv>, read: () => Promise<unknown>) {
  if (!enabled(c.env)) throw ApiError.notFound();
  const size = Number(c.req.param("size"));
  if (size > 8 * 1024 * 1024) throw ApiError.badRequest("'size' is at most 8 MB");
  await read();
  return okEncoded(c, bodyOf(size));
}

export const benchRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/sys/bench/constant",
      tags: ["Benchmark"],
      summary: "Benchmark floor: a constant envelope (only when BENCH_FLOORS=1)",
      description:
        'Only served (and listed here) when `BENCH_FLOORS` is `"1"`, as `npm run bench` sets it: the whole request pipeline with a constant answer, the most any endpoint could do. Anyone; emits nothing.',
      responses: { 200: Envelope(z.object({}), "Constant", {}), ...errors(404) },
    }),
    (c) => {
      if (!enabled(c.env)) throw ApiError.notFound();
      return ok(c, {});
    },
  )
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/sys/bench/read/{id}",
      tags: ["Benchmark"],
      summary: "Benchmark floor: one indexed D1 read (only when BENCH_FLOORS=1)",
      description:
        'Only served (and listed here) when `BENCH_FLOORS` is `"1"`: the pipeline plus exactly one indexed read of the user with this id. Anyone; emits nothing.',
      request: { params: z.object({ id: idString() }) },
      responses: { 200: Envelope(z.object({ exists: z.boolean() }), "One read", { exists: true }), ...errors(404) },
    }),
    async (c) => {
      if (!enabled(c.env)) throw ApiError.notFound();
      return ok(c, { exists: await userExists(c.var.db, Number(c.req.valid("param").id)) });
    },
  )
  .openapi(
    sizedFloor("/sys/bench/bytes/{size}", "one indexed read", "Benchmark floor: one indexed read and a body of `size` bytes (only when BENCH_FLOORS=1)"),
    (c) => answerSized(c, () => userExists(c.var.db, 1)),
  )
  .openapi(
    sizedFloor(
      "/sys/bench/posts/{size}",
      "the statement a page of posts is rendered from (the 20 newest posts with their authors, clients and the flags of user 1 as viewer), its rows left undecoded,",
      "Benchmark floor: the render read of 20 posts and a body of `size` bytes (only when BENCH_FLOORS=1)",
    ),
    (c) =>
      answerSized(c, () =>
        allRows(
          c.var.db,
          boundPostsQuery(
            1,
            boundShape("bench:newest-posts", () => sql`select id from posts order by id desc limit 20`, {}),
            false,
          ),
        ),
      ),
  );
