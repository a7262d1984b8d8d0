import { z } from "@hono/zod-openapi";
import { ANY_TOKEN } from "../auth/access";
import { ok } from "../http/envelope";
import { ApiError } from "../http/errors";
import { createRouter, defineRoute, Envelope, errors } from "../http/route";
import { getOperation } from "../stores/operations";
import { renderOperation } from "../views/operation";

const OperationSchema = z
  .object({ id: z.string(), type: z.enum(["file_create", "file_delete"]), status: z.enum(["running", "dead", "completed"]), created_at: z.string(), ended_at: z.string().optional() })
  .openapi("OperationStatus");

export const opsRoutes = createRouter().openapi(
  defineRoute(ANY_TOKEN, {
    method: "get",
    path: "/sys/ops/{ops_id}",
    tags: ["System"],
    summary: "Status of a long-running operation (file_create, file_delete)",
    request: {
      params: z.object({
        ops_id: z
          .string()
          .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { message: "must be a UUID" })
          .openapi({ param: { name: "ops_id", in: "path" } }),
      }),
    },
    responses: { 200: Envelope(OperationSchema, "Operation object"), ...errors(400, 401, 404) },
  }),
  async (c) => {
    const op = await getOperation(c.var.db, c.req.valid("param").ops_id.toLowerCase());
    if (!op) throw ApiError.notFound("no such operation");
    return ok(c, renderOperation(op));
  },
);
