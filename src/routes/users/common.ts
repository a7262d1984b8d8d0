import { z } from "@hono/zod-openapi";
import { pageQuery } from "../../http/pagination";
import { userParams } from "../../http/params";
import { Envelope, userRef } from "../../http/route";
import { exampleUser } from "../../http/examples";
import { UserSchema } from "../../http/schemas";

// What the user routers share: the example User, the query fragments and response helpers.

/** A User as the examples of the OpenAPI document show it. */
export const EXAMPLE_USER = exampleUser;

/** Query of routes that return users (the general user parameters). */
export const UserQuery = z.object(userParams);
/** Query of paginated lists of users. */
export const UserListQuery = z.object({ ...pageQuery, ...userParams });

export const userIdParam = z.object({ user_id: userRef.openapi({ param: { name: "user_id", in: "path" }, example: "me" }) });

export const oneUser = (d: string) => Envelope(UserSchema, d, EXAMPLE_USER);
export const userList = (d: string, paginated = true) =>
  Envelope(
    z.array(UserSchema),
    d,
    [paginated ? { ...EXAMPLE_USER, pagination_id: "57" } : EXAMPLE_USER],
    paginated ? { more: false, min_id: "57", max_id: "57" } : {},
  );
