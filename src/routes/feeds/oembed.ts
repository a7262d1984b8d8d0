import { z } from "@hono/zod-openapi";
import { fitWithin } from "../../services/image-codec";
import { PUBLIC } from "../../auth/access";
import { ApiError } from "../../http/errors";
import { createRouter, defineRoute, errors } from "../../http/route";
import { iso } from "../../http/time";
import { parseShortCode, shortCodeMatches, signUrls } from "../../services/file-urls";
import { getFileRow } from "../../stores/files";
import { readPostsByIds } from "../../stores/posts";
import { escapeAttr, escapeHtml } from "../../text/process";
import { viewContext } from "../../views/context";
import { fileOembed } from "../../views/raw-embeds";
import type { Ctx } from "../posts/common";

// GET /oembed (the reference's "oEmbed"): the JSON oEmbed of a post (`rich`) or of a public image,
// audio or video file (`photo`, `audio`, `video`), by the URL this server gives them: a post's
// `{origin}/v1/posts/{post_id}` and a file's `url_short`. JSON only.

const PROVIDER_NAME = "Edge social network";
/** The width of a post's embed when `maxwidth` does not ask for less (the common tweet-embed width). */
const POST_WIDTH = 550;

const dimension = (name: string) =>
  z
    .string()
    .regex(/^\d{1,5}$/, { message: `'${name}' must be a positive integer` })
    .optional()
    .openapi({ description: `Largest ${name.slice(3)} the consumer can show, in pixels` });

const OembedSchema = z
  .object({ version: z.literal("1.0"), type: z.enum(["rich", "photo", "video", "audio"]), provider_name: z.string(), provider_url: z.string() })
  .passthrough()
  .openapi("Oembed");

const EXAMPLE = {
  version: "1.0",
  type: "rich",
  provider_name: PROVIDER_NAME,
  provider_url: "https://api.example.social",
  url: "https://api.example.social/v1/posts/2375",
  author_name: "ada",
  author_url: "https://api.example.social/v1/users/1",
  title: "Good times #oldies",
  html: '<blockquote class="example-post" cite="https://api.example.social/v1/posts/2375">…</blockquote>',
  width: 550,
  height: null,
};

/** What the `url` names on this server: a post or a file's short link; null for anything else. */
function target(url: string, origin: string): { post: number } | { file: string } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw ApiError.badRequest("'url' must be an absolute URL");
  }
  if (u.origin !== origin) return null;
  const post = /^\/v1\/posts\/(\d{1,18})\/?$/.exec(u.pathname);
  if (post) return { post: Number(post[1]) };
  const file = /^\/v1\/f\/([^/]+)$/.exec(u.pathname);
  return file ? { file: file[1] } : null;
}

async function postOembed(c: Ctx, id: number, origin: string, maxWidth?: number) {
  const set = await readPostsByIds(c.var.db, [id], viewContext(c).viewerId, { liveOnly: true });
  const found = set.page[0];
  const shown = found?.post.repostOf != null ? set.byId.get(found.post.repostOf) : found;
  if (!shown || shown.post.isDeleted || !shown.user) throw ApiError.notFound("no such post");
  const p = shown.post;
  const user = shown.user;
  const url = `${origin}/v1/posts/${p.id}`;
  const byline = `${user.name ? `${escapeHtml(user.name)} ` : ""}(@${escapeHtml(user.username)})`;
  // The post's html is the server's own processed, escaped markup (text processing).
  const html =
    `<blockquote class="example-post" cite="${escapeAttr(url)}"><p>${p.html ?? escapeHtml(p.text ?? "")}</p>` +
    `&mdash; ${byline} <a href="${escapeAttr(url)}">${iso(p.createdAt)}</a></blockquote>`;
  return {
    version: "1.0",
    type: "rich",
    provider_name: PROVIDER_NAME,
    provider_url: origin,
    url,
    author_name: user.username,
    author_url: `${origin}/v1/users/${user.id}`,
    title: p.text ?? "",
    html,
    width: Math.min(POST_WIDTH, maxWidth ?? POST_WIDTH),
    // A post's height depends on its text and the consumer's fonts: unknown, as tweet embeds give it.
    height: null,
  };
}

async function fileOembedOf(c: Ctx, code: string, origin: string, maxWidth?: number, maxHeight?: number) {
  const parsed = parseShortCode(code);
  const row = parsed ? await getFileRow(c.var.db, parsed.fileId, null) : undefined;
  if (!parsed || !row || !row.file.isPublic || !row.file.isComplete || !shortCodeMatches(parsed.check, row.file.fileTokenRead)) {
    throw ApiError.notFound("no such public file");
  }
  await signUrls(c, [row], 60);
  const embed = fileOembed(row, origin);
  if (!embed) throw ApiError.notFound("no oEmbed for this file: only image, audio and video files with their media information have one");
  const sized =
    typeof embed.width === "number" && typeof embed.height === "number"
      ? fitWithin(embed.width, embed.height as number, maxWidth || Infinity, maxHeight || Infinity)
      : {};
  return {
    ...embed,
    ...sized,
    provider_name: PROVIDER_NAME,
    provider_url: origin,
    author_name: row.user.username,
    author_url: `${origin}/v1/users/${row.file.userId}`,
  };
}

export const oembedRoutes = createRouter().openapi(
  defineRoute(PUBLIC, {
    method: "get",
    path: "/oembed",
    tags: ["Feeds"],
    summary: "The oEmbed of a post or of a public file",
    description:
      "`url`: a post's `{origin}/v1/posts/{post_id}` (a `rich` oEmbed: the post's html in a blockquote; a repost gives its original) or a public " +
      "file's `url_short` (a `photo`, `video` or `audio` oEmbed with the file's `url`). Only this server's own URLs; a deleted post, a private or " +
      "deleted file, or any other URL is a 404. `maxwidth`/`maxheight` bound the dimensions given (a photo's are scaled down, aspect kept). " +
      "JSON only: another `format` is a 400. No token needed; emits nothing.",
    request: {
      query: z.object({
        url: z
          .string({ message: "is required" })
          .max(2048)
          .openapi({ description: "The post's or file's URL", example: "https://api.example.social/v1/posts/2375" }),
        format: z.string().optional().openapi({ description: "`json` (the only format)" }),
        maxwidth: dimension("maxwidth"),
        maxheight: dimension("maxheight"),
      }),
    },
    responses: { 200: { description: "The oEmbed", content: { "application/json": { schema: OembedSchema, example: EXAMPLE } } }, ...errors(400, 404) },
  }),
  async (c) => {
    const q = c.req.valid("query");
    if (q.format !== undefined && q.format !== "json") throw ApiError.badRequest("'format' must be json: only the JSON oEmbed is served");
    const origin = viewContext(c).origin;
    const maxWidth = q.maxwidth ? Number(q.maxwidth) || undefined : undefined;
    const maxHeight = q.maxheight ? Number(q.maxheight) || undefined : undefined;
    const t = target(q.url, origin);
    if (!t) throw ApiError.notFound("no oEmbed for this URL: only this server's post URLs and public files' url_short have one");
    const body = "post" in t ? await postOembed(c, t.post, origin, maxWidth) : await fileOembedOf(c, t.file, origin, maxWidth, maxHeight);
    return c.json(body, 200) as never;
  },
);
