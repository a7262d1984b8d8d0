import { z } from "@hono/zod-openapi";
import { ANY_TOKEN } from "../auth/access";
import { ok } from "../http/envelope";
import { ApiError } from "../http/errors";
import { createRouter, defineRoute, Envelope, errors } from "../http/route";
import { ClientSchema } from "../http/schemas";
import { getPublicApp } from "../stores/apps";
import { renderClientDetail } from "../views/client";
import { viewContext } from "../views/context";

export const clientRoutes = createRouter().openapi(
  defineRoute(ANY_TOKEN, {
    method: "get",
    path: "/clients/{client_id}",
    tags: ["Clients"],
    summary: "A public client (detail view)",
    request: { params: z.object({ client_id: z.string().min(1).max(64) }) },
    responses: { 200: Envelope(ClientSchema, "Client object"), ...errors(401, 404) },
  }),
  async (c) => {
    const found = await getPublicApp(c.var.db, c.req.valid("param").client_id);
    if (!found) throw ApiError.notFound("no such client");
    return ok(c, renderClientDetail(found.app, found.owner, viewContext(c)));
  },
);
