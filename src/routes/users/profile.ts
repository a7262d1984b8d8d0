import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { currentUser, PUBLIC, userToken } from "../../auth/access";
import { LIMITS } from "../../config";
import { publish } from "../../events/publish";
import { now } from "../../http/time";
import { ok } from "../../http/envelope";
import { ApiError } from "../../http/errors";
import { DEFAULT_SHAPE } from "../../http/params";
import { resolveUserRef } from "../../http/refs";
import { createRouter, defineRoute, errors } from "../../http/route";
import type { AppEnv } from "../../http/types";
import { discardProfileImage, IMAGE_MULTIPART_OVERHEAD, IMAGE_RULES, storeProfileImage } from "../../services/profile-images";
import { holdsBadge } from "../../stores/badges";
import { setImage, updateProfile, type ImageKind, type ProfileChange } from "../../stores/profile";
import { getUser, type UserView } from "../../stores/users";
import { codePointLength, processText } from "../../text";
import { checkEntityCounts, checkSentLength, mentionedUsers } from "../../services/text";
import { eventContext, viewContext } from "../../views/context";
import { neutralUser } from "../../views/post";
import { renderUser } from "../../views/user";
import { oneUser, userIdParam, UserQuery } from "./common";
import { prepareRaw } from "../../services/raw-core";

// The caller's profile (PUT/PATCH /users/me) and the avatar and cover images of users.

type Ctx = Context<AppEnv>;
const UPDATE_PROFILE = userToken("update_profile");

const RawItems = z
  .array(z.record(z.string(), z.unknown()), { message: "must be a list of objects" })
  .max(1, { message: "holds at most one item (user raw is mutable)" });

const ProfileBody = z
  .object({
    name: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: `Up to ${LIMITS.user.name_max_length} characters; null or "" removes it` }),
    locale: z.string().optional().openapi({ description: "A locale such as `en_US` (required on PUT)" }),
    timezone: z.string().optional().openapi({ description: "A tz database name such as `America/Chicago` (required on PUT)" }),
    content: z
      .object({
        text: z
          .string()
          .nullable()
          .optional()
          .openapi({ description: `Profile text, up to ${LIMITS.user.description_max_length} characters, with entities` }),
      })
      .passthrough()
      .nullable()
      .optional(),
    raw: z
      .record(z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, { message: "type names are 1 to 128 letters, digits, '.', '_' or '-'" }), RawItems)
      .optional()
      .openapi({ description: "Raw items by type, at most one per type; `[]` removes a type; types not named are kept" }),
    badge: z
      .union([z.object({ id: z.union([z.string(), z.number()]) }).passthrough(), z.string(), z.number()])
      .nullable()
      .optional()
      .openapi({ description: "The badge to show: one the user holds (`{id}` or its id); null shows none" }),
  })
  .passthrough()
  .openapi("ProfileUpdate");
type ProfileInput = z.infer<typeof ProfileBody>;

const LOCALE = /^[a-z]{2,3}(_[A-Z]{2})?$/;

function validTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return tz.length <= 64;
  } catch {
    return false;
  }
}

/** The change a PUT (`replace`: what is left out is removed) or PATCH body asks for; bad fields are 400s naming them. */
async function profileChange(c: Ctx, body: ProfileInput, replace: boolean): Promise<ProfileChange> {
  const me = currentUser(c);
  const change: ProfileChange = {};
  if (replace && body.locale === undefined) throw ApiError.badRequest("'locale' is required");
  if (replace && body.timezone === undefined) throw ApiError.badRequest("'timezone' is required");
  if (body.locale !== undefined) {
    if (!LOCALE.test(body.locale)) throw ApiError.badRequest("'locale' must be a locale such as 'en_US'");
    change.locale = body.locale;
  }
  if (body.timezone !== undefined) {
    if (!validTimezone(body.timezone)) throw ApiError.badRequest("'timezone' must be a tz database name such as 'America/Chicago'");
    change.timezone = body.timezone;
  }
  if (body.name !== undefined || replace) {
    const name = body.name?.trim() || null;
    if (name && codePointLength(name) > LIMITS.user.name_max_length)
      throw ApiError.badRequest(`'name' is longer than ${LIMITS.user.name_max_length} characters`);
    change.name = name;
  }
  if (body.content !== undefined || replace) {
    const text = body.content?.text ?? "";
    if (!text.trim()) change.description = null;
    else {
      checkSentLength(text, LIMITS.user.description_max_length, "content.text");
      const users = await mentionedUsers(c, text, "content.text");
      const processed = processText(text, { schemaBase: c.env.SCHEMA_BASE, itemType: "User", users });
      const max = LIMITS.user.description_max_length;
      if (processed.length > max) throw ApiError.badRequest(`'content.text' is longer than ${max} characters`);
      checkEntityCounts(processed, "content.text");
      change.description = { content: { text: processed.text, html: processed.html, entities: processed.entities }, markdown: text };
    }
  }
  if (body.raw !== undefined) {
    // Mutable raw: each type named replaces that type (`[]` removes it); the others are kept.
    const merged: Record<string, unknown[]> = { ...((me.raw as Record<string, unknown[]> | null) ?? {}) };
    for (const [type, items] of Object.entries(await prepareRaw(c, body.raw, "user"))) {
      if (items.length) merged[type] = items;
      else delete merged[type];
    }
    const size = new TextEncoder().encode(JSON.stringify(merged)).length;
    if (size > LIMITS.raw.max_length) throw ApiError.badRequest(`'raw' would be longer than ${LIMITS.raw.max_length} bytes when serialized`);
    change.raw = Object.keys(merged).length ? merged : null;
  }
  if (body.badge !== undefined || replace) {
    const given = body.badge && typeof body.badge === "object" ? body.badge.id : body.badge;
    if (given === undefined || given === null || given === "") change.badgeId = null;
    else {
      if (!/^\d{1,18}$/.test(String(given))) throw ApiError.badRequest("'badge' must name a badge by its integer id");
      if (!(await holdsBadge(c.var.db, me.id, Number(given)))) throw ApiError.badRequest("'badge' must be a badge you hold");
      change.badgeId = Number(given);
    }
  }
  return change;
}

/** The `user` event of a profile change: the user for no particular viewer, with its raw (as post events carry theirs). */
function publishUser(c: Ctx, user: UserView, seq?: number) {
  const view = { ...eventContext(c), shape: { ...DEFAULT_SHAPE, userRaw: true } };
  publish(c, { seq, type: "user", data: renderUser(neutralUser(user), view), route: { actorId: user.id, userIds: [user.id] } });
}

const profileRoute = (method: "put" | "patch") =>
  defineRoute(UPDATE_PROFILE, {
    method,
    path: "/users/me",
    tags: ["Profile"],
    summary: method === "put" ? "Replace the caller's profile" : "Update parts of the caller's profile",
    description:
      (method === "put"
        ? "Replaces the profile: `locale` and `timezone` are required; `name`, `content.text` and `badge` left out are removed. "
        : "Changes only the fields given. ") +
      "`raw` is merged either way (a type given replaces that type, `[]` removes it, others stay). Other fields of a User object " +
      "sent along are ignored. Needs a user token with `update_profile`. Emits a `user` event.",
    request: { query: UserQuery, body: { content: { "application/json": { schema: ProfileBody } }, required: true } },
    responses: { 200: oneUser("The updated user"), ...errors(400, 401, 403, 415) },
  });

/** What the `user` event's outbox row needs (reserved in the change's batch). */
const userEvent = (c: Ctx) => ({ origin: eventContext(c).origin, at: now(c) });

async function saveProfile(c: Ctx, body: ProfileInput, replace: boolean) {
  const me = currentUser(c);
  const { user, seq } = await updateProfile(c.var.db, me.id, await profileChange(c, body, replace), userEvent(c));
  if (!user) throw ApiError.notFound("no such user");
  publishUser(c, user, seq);
  return ok(c, renderUser(user, viewContext(c)));
}

/** `w` and `h`: the only query a redirect passes on, so its Location stays short whatever the request's query. */
const scale = (what: string) =>
  z
    .string()
    .regex(/^[1-9]\d{0,4}$/, { message: "must be a whole number of pixels from 1 (at most 5 digits)" })
    .optional()
    .openapi({
      description: `A ${what} to scale the image down to (aspect kept; \`w\` wins when both are given): passed on to the image URL, which serves it at that size`,
    });
export const ScaleQuery = z.object({ w: scale("width"), h: scale("height") });

const getImageRoute = (kind: ImageKind) =>
  defineRoute(PUBLIC, {
    method: "get",
    path: `/users/{user_id}/${kind}`,
    tags: ["Profile"],
    summary: `302 to a user's current ${kind} image`,
    description: `No token needed. Redirects to \`content.${kind}_image.url\` (the default image when the user has none), with \`w\` and \`h\` passed on (nothing else of the query); the image URL serves it scaled down to that width (or height). Emits nothing.`,
    request: { params: userIdParam, query: ScaleQuery },
    responses: { 302: { description: `Redirect to the ${kind} image` }, ...errors(400, 401, 404) },
  });

/** Upload bodies are read by the handler (services/profile-images.ts): documented as plain schemas, so no validator consumes them first. */
const uploadSchema = (kind: ImageKind) => ({
  type: "object" as const,
  properties: { [kind]: { type: "string" as const, format: "binary", description: `The ${kind} image file` } },
  required: [kind],
});
const fromUrlSchema = {
  type: "object" as const,
  properties: { from_url: { type: "string" as const, format: "uri", description: "A public http(s) URL of the image to download" } },
  required: ["from_url"],
};

const postImageRoute = (kind: ImageKind) =>
  defineRoute(UPDATE_PROFILE, {
    method: "post",
    path: `/users/me/${kind}`,
    bodyLimit: IMAGE_RULES[kind].maxBytes + IMAGE_MULTIPART_OVERHEAD,
    tags: ["Profile"],
    summary: `Upload a new ${kind} image`,
    description:
      `Multipart/form-data with the image as the file part \`${kind}\`, or JSON \`{"from_url": "https://…"}\` (a public image to download). ` +
      `The image must be ${IMAGE_RULES[kind].describe}; its type is read from its bytes. It is stored as given (not cropped or scaled). ` +
      "Needs a user token with `update_profile`. Emits a `user` event.",
    request: {
      query: UserQuery,
      body: {
        required: true,
        content: {
          "multipart/form-data": { schema: uploadSchema(kind) },
          "application/json": { schema: fromUrlSchema },
        },
      },
    },
    responses: { 200: oneUser("The updated user"), ...errors(400, 401, 403, 413, 415) },
  });

const deleteImageRoute = (kind: ImageKind) =>
  defineRoute(UPDATE_PROFILE, {
    method: "delete",
    path: `/users/me/${kind}`,
    tags: ["Profile"],
    summary: `Remove the caller's ${kind} image (back to the default)`,
    description: "Needs a user token with `update_profile`. Emits a `user` event when there was an image.",
    request: { query: UserQuery },
    responses: { 200: oneUser("The updated user"), ...errors(401, 403) },
  });

async function replaceImage(c: Ctx, kind: ImageKind, remove: boolean) {
  const me = currentUser(c);
  const image = remove ? null : await storeProfileImage(c, kind, viewContext(c).origin);
  const { user, previous, seq } = await setImage(c.var.db, me.id, kind, image, userEvent(c));
  if (!user) throw ApiError.notFound("no such user");
  discardProfileImage(c, previous);
  if (image || previous) publishUser(c, user, seq);
  return ok(c, renderUser(user, viewContext(c)));
}

export const profileRoutes = createRouter()
  .openapi(profileRoute("put"), (c) => saveProfile(c, c.req.valid("json"), true))
  .openapi(profileRoute("patch"), (c) => saveProfile(c, c.req.valid("json"), false))
  .openapi(getImageRoute("avatar"), (c) => imageRedirect(c, "avatar", c.req.valid("param").user_id, c.req.valid("query")))
  .openapi(getImageRoute("cover"), (c) => imageRedirect(c, "cover", c.req.valid("param").user_id, c.req.valid("query")))
  .openapi(postImageRoute("avatar"), (c) => replaceImage(c, "avatar", false))
  .openapi(postImageRoute("cover"), (c) => replaceImage(c, "cover", false))
  .openapi(deleteImageRoute("avatar"), (c) => replaceImage(c, "avatar", true))
  .openapi(deleteImageRoute("cover"), (c) => replaceImage(c, "cover", true));

/** 302 to the user's image URL with the validated `w` and `h` (never the rest of the query, which could be any size). */
async function imageRedirect(c: Ctx, kind: ImageKind, ref: string, size: { w?: string; h?: string }) {
  const id = await resolveUserRef(c, ref);
  const user = await getUser(c.var.db, id, null);
  if (!user) throw ApiError.notFound("no such user");
  const images = renderUser(user, viewContext(c)).content;
  const url = new URL(images[`${kind}_image`].url);
  for (const k of ["w", "h"] as const) if (size[k] !== undefined) url.searchParams.set(k, size[k]!);
  c.header("Cache-Control", "no-store");
  return c.redirect(url.toString(), 302);
}
