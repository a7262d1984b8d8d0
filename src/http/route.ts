import { OpenAPIHono, createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { requireAccess, type Access } from "../auth/access";
import { ApiError, describeIssues } from "./errors";
import type { AppEnv } from "./types";

/** A router for one resource; validation failures become 400 envelopes naming the field. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw ApiError.badRequest(describeIssues(result.error.issues));
    },
  });
}

/** 415 for a JSON endpoint called without `Content-Type: application/json`. */
export const requireJson: MiddlewareHandler<AppEnv> = async (c, next) => {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError(415, "this endpoint takes a JSON body with 'Content-Type: application/json'");
  }
  await next();
};

type RouteInput = Omit<RouteConfig, "middleware">;

/**
 * Declares a route: its OpenAPI description, validation schemas and who may call it. The
 * access rule and the JSON content-type check run as route middleware before validation.
 */
export function defineRoute<const R extends RouteInput>(access: Access, r: R) {
  const body = r.request?.body?.content;
  const jsonOnly = !!body && Object.keys(body).length === 1 && "application/json" in body;
  const middleware: MiddlewareHandler<AppEnv>[] = [requireAccess(access), ...(jsonOnly ? [requireJson] : [])];
  return createRoute({
    ...r,
    middleware,
    ...(access.token === "none" ? {} : { security: [{ bearer: access.scope ? [access.scope] : [] }] }),
    "x-access": access,
  } as R & { middleware: MiddlewareHandler<AppEnv>[] });
}

/** An id path or query parameter: integers only (decisions §1: anything else is 400). */
export const idString = (what = "id") => z.string().regex(/^\d{1,18}$/, { message: `must be an integer ${what}` });

/** A user reference in a path: an integer id, `me`, or `@username`. */
export const userRef = z.string().regex(/^(\d{1,18}|me|@[A-Za-z0-9_]{1,20})$/, { message: "must be an integer id, 'me' or '@username'" });

export const Envelope = <T extends z.ZodTypeAny>(data: T, description: string) => ({
  content: {
    "application/json": {
      schema: z.object({ meta: z.object({ code: z.number() }).passthrough(), data }),
    },
  },
  description,
});

export const ErrorEnvelope = {
  content: {
    "application/json": {
      schema: z
        .object({ meta: z.object({ code: z.number(), error_message: z.string(), error_id: z.string().optional() }) })
        .openapi("Error"),
    },
  },
  description: "Error envelope",
};

/** Standard error responses to list on a route. */
export const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorEnvelope]));
