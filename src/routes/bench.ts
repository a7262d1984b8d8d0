import { z } from "@hono/zod-openapi";
import { PUBLIC } from "../auth/access";
import { ok } from "../http/envelope";
import { ApiError } from "../http/errors";
import { createRouter, defineRoute, Envelope, errors, idString } from "../http/route";
import { userExists } from "../stores/users";

// The benchmark's two floors, served only when BENCH_FLOORS is "1" (npm run bench sets it):
// the cost of the pipeline with a constant envelope, and with exactly one indexed D1 read.
const enabled = (env: Env) => env.BENCH_FLOORS === "1";

export const benchRoutes = createRouter()
  .openapi(
    defineRoute(PUBLIC, {
      method: "get",
      path: "/sys/bench/constant",
      tags: ["Benchmark"],
      summary: "Benchmark floor: a constant envelope (only when BENCH_FLOORS=1)",
      description:
        "Only served (and listed here) when `BENCH_FLOORS` is `\"1\"`, as `npm run bench` sets it: the whole request pipeline with a constant answer, the most any endpoint could do. Anyone; emits nothing.",
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
        "Only served (and listed here) when `BENCH_FLOORS` is `\"1\"`: the pipeline plus exactly one indexed read of the user with this id. Anyone; emits nothing.",
      request: { params: z.object({ id: idString() }) },
      responses: { 200: Envelope(z.object({ exists: z.boolean() }), "One read", { exists: true }), ...errors(404) },
    }),
    async (c) => {
      if (!enabled(c.env)) throw ApiError.notFound();
      return ok(c, { exists: await userExists(c.var.db, Number(c.req.valid("param").id)) });
    },
  );
