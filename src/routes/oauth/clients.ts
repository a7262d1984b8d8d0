import { z } from "@hono/zod-openapi";
import { userParams } from "../../http/params";
import { ANY_TOKEN } from "../../auth/access";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, Envelope, errors } from "../../http/route";
import { ClientSchema } from "../../http/schemas";
import { exampleClient } from "../../http/examples";
import { getPublicApp } from "../../stores/apps";
import { renderClientDetail } from "../../views/client";
import { viewContext } from "../../views/context";

export const clientRoutes = createRouter().openapi(
  defineRoute(ANY_TOKEN, {
    method: "get",
    path: "/clients/{client_id}",
    tags: ["Clients"],
    summary: "A public client (detail view)",
    description:
      "A client (app) registered as public: name, URL, logo, description, post count and its owner. Any token, user or app; emits nothing. Apps that are not public, and deleted ones, are 404.",
    request: {
      params: z.object({
        client_id: z.string().min(1).max(64).openapi({ description: "The client's `client_id` (its public id).", example: "pbx_3Fq9LwZt7XkR2mNv" }),
      }),
      query: z.object(userParams),
    },
    responses: { 200: Envelope(ClientSchema, "Client object", exampleClient), ...errors(401, 404) },
  }),
  async (c) => {
    const found = await getPublicApp(c.var.db, c.req.valid("param").client_id);
    if (!found) throw ApiError.notFound("no such client");
    return ok(c, renderClientDetail(found.app, found.owner, viewContext(c)));
  },
);
