import { z } from "@hono/zod-openapi";
import { ANY_TOKEN } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { exampleOperation } from "../../http/examples";
import { getOperation } from "../../stores/operations";
import { renderOperation } from "../../views/operation";

const OperationSchema = z
  .object({
    id: z.string(),
    type: z.enum(["file_create", "file_delete"]),
    status: z.enum(["running", "dead", "completed"]),
    created_at: z.string(),
    ended_at: z.string().optional(),
  })
  .openapi("OperationStatus");

export const opsRoutes = createRouter().openapi(
  defineRoute(ANY_TOKEN, {
    method: "get",
    path: "/sys/ops/{ops_id}",
    tags: ["System"],
    summary: "Status of a long-running operation (file_create, file_delete)",
    description:
      "Where a file upload (`file_create`, from a placeholder's `meta.status_url`) or a bulk file delete (`file_delete`) stands: `running`, `completed`, or `dead` when a step failed. Any token may read an operation by its id; emits nothing.",
    request: {
      params: z.object({
        ops_id: z
          .string()
          // No regex flags: the document would carry them into the pattern.
          .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, { message: "must be a UUID" })
          .openapi({
            param: { name: "ops_id", in: "path" },
            description: "The operation's id (a UUID, from `meta.status_url`).",
            example: "514406d5-63e0-4de0-887d-4d5ebed825f4",
          }),
      }),
    },
    responses: { 200: Envelope(OperationSchema, "Operation object", exampleOperation), ...errors(400, 401, 404) },
  }),
  async (c) => {
    const op = await getOperation(c.var.db, c.req.valid("param").ops_id.toLowerCase());
    if (!op) throw ApiError.notFound("no such operation");
    return ok(c, renderOperation(op));
  },
);
