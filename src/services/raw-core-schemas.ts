import { z } from "zod";
import { POLL_LIMITS } from "../config";

// Shapes of the core raw types (object-metadata's `io.pnut.core.*`, io.example here), as the
// public reference defines them. Objects are loose: the reference lists the fields it checks and
// the oEmbed types say they accept keys it does not list, so other keys are kept as sent.
// src/services/raw-core.ts applies these after the replacement values are replaced.

/** An absolute http(s) URL: "the API will check for a valid URL" (crosspost, fallback_url). */
const httpUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}, "must be an absolute http or https URL");

const text = z.string().min(1, "must be a non-empty string");
/** Integers of the reference; some of its own examples send them as digit strings (`"release": "1"`). */
const COUNT = "must be a non-negative integer";
const count = z.union([z.number().int(COUNT).nonnegative(COUNT), z.string().regex(/^\d{1,9}$/, COUNT)], { error: COUNT });
const ID = "must be an object id (a string of digits)";
const id = z.union([z.string().regex(/^\d{1,18}$/, ID), z.number().int(ID).positive(ID)], { error: ID });
const isoTime = z.string().refine((s) => /^\d{4}-\d\d-\d\dT/.test(s) && !Number.isNaN(Date.parse(s)), "must be an ISO 8601 time");

export const CHAT_CATEGORIES = ["fun", "lifestyle", "profession", "language", "community", "tech", "event", "general"] as const;
/** The reference: "Description of the chat room. Up to 256 characters." */
export const CHAT_DESCRIPTION_MAX = 256;

const language = z.looseObject({
  language: z.string().regex(/^[a-z]{2}$/, "must be an ISO 639-1 code: two lowercase letters such as 'en'"),
});

const crosspost = z.looseObject({
  canonical_url: httpUrl,
  source: z.looseObject({ name: text, url: httpUrl }).optional(),
  user: z.looseObject({ username: z.string().optional(), avatar_image: httpUrl.optional() }).optional(),
});

const fallbackUrl = z.looseObject({ url: httpUrl });

const channelInvite = z.looseObject({ channel_id: id });

const chatSettings = z.looseObject({
  name: z.string().refine((s) => s.trim().length > 0, "must be a non-empty string"),
  // A plain string was the pre-1.0 form of the reference; both become {text, html, entities}.
  description: z.union([z.string(), z.looseObject({ text: z.string() })], { error: "must be an object with 'text'" }).optional(),
  categories: z
    .array(z.enum(CHAT_CATEGORIES, { error: `must be one of ${CHAT_CATEGORIES.join(", ")}` }))
    .max(3, "holds at most 3 categories")
    .refine((l) => new Set(l).size === l.length, "names a category twice")
    .optional(),
});

const OEMBED_TYPES = ["photo", "video", "html5video", "rich", "audio"] as const;
const LICENSES = ["no-rights-reserved", "all-rights-reserved", "cc-by", "cc-by-nc", "cc-by-nd", "cc-by-sa", "cc-by-nc-nd", "cc-by-nc-sa"] as const;
const TRACK_TYPES = ["original", "remix", "live", "spoken", "podcast", "demo", "loop", "sound_effect", "sample", "other"] as const;

/**
 * `io.example.core.oembed` (posts and messages) and `…oembed.metadata` (files): the same fields,
 * except that `html` is required of a `video` in the metadata form only (the oEmbed form gets the
 * reference's default `<video>` html) and `duration` of an `audio` in the oEmbed form only.
 */
function oembed(form: "oembed" | "metadata") {
  return z
    .looseObject({
      type: z.enum(OEMBED_TYPES, { error: `must be one of ${OEMBED_TYPES.join(", ")}` }),
      version: z.literal("1.0", { error: "must be '1.0'" }),
      width: count.optional(),
      height: count.optional(),
      url: text.optional(),
      html: z.string().optional(),
      sources: z
        .array(z.looseObject({ type: text, url: text }), { error: "must be a list of {type, url}" })
        .min(1)
        .max(5, "holds at most 5 sources")
        .optional(),
      embeddable_url: z.string().optional(),
      title: z.string().optional(),
      author_name: z.string().optional(),
      author_url: z.string().optional(),
      provider_name: z.string().optional(),
      provider_url: z.string().optional(),
      poster_url: z.string().optional(),
      cache_age: count.optional(),
      thumbnail_url: text.optional(),
      thumbnail_width: count.optional(),
      thumbnail_height: count.optional(),
      duration: z.number().nonnegative("must be a number of seconds").optional(),
      duration_string: z.string().optional(),
      bitrate: count.optional(),
      frame_rate: z.union([z.number().nonnegative(), z.string().regex(/^\d+(\.\d+)?$/)], { error: "must be a number" }).optional(),
      format: z.string().optional(),
      release: count.optional(),
      license: z.enum(LICENSES, { error: `must be one of ${LICENSES.join(", ")}` }).optional(),
      genre: z
        .string()
        .refine((s) => new TextEncoder().encode(s).length <= 128, "is longer than 128 bytes")
        .optional(),
      track_type: z.enum(TRACK_TYPES, { error: `must be one of ${TRACK_TYPES.join(", ")}` }).optional(),
    })
    .superRefine((o, ctx) => {
      const need = (key: string, why: string) => {
        if (o[key] === undefined) ctx.addIssue({ code: "custom", path: [key], message: `is required ${why}` });
      };
      if (o.type !== "audio") {
        need("width", "(except of an audio oEmbed)");
        need("height", "(except of an audio oEmbed)");
      }
      if (o.type === "photo") need("url", "of a photo");
      if (o.type === "rich" || (o.type === "video" && form === "metadata")) need("html", `of a ${o.type}`);
      if (o.type === "html5video") need("sources", "of an html5video");
      if (o.type === "audio" && form === "oembed") need("duration", "of an audio oEmbed");
      const thumb = ["thumbnail_url", "thumbnail_width", "thumbnail_height"].filter((k) => o[k] !== undefined);
      if (thumb.length && thumb.length < 3)
        need(["thumbnail_url", "thumbnail_width", "thumbnail_height"].find((k) => o[k] === undefined)!, "with the other thumbnail fields");
    });
}

/** The poll notice `+io.example.core.poll` makes; a notice written out by hand must have its shape. */
const pollNotice = z
  .looseObject({
    prompt: text,
    poll_token: text,
    closed_at: isoTime,
    poll_id: id.optional(),
    id: id.optional(),
    options: z
      .array(z.looseObject({ text: z.string(), position: count }))
      .min(POLL_LIMITS.minOptions, `holds at least ${POLL_LIMITS.minOptions} options`)
      .max(POLL_LIMITS.maxOptions, `holds at most ${POLL_LIMITS.maxOptions} options`),
  })
  .refine((o) => o.poll_id !== undefined || o.id !== undefined, { path: ["poll_id"], message: "is required: the poll's id" });

/** A channel image as `+io.example.core.file` made it (format metadata) with the reference's size. */
const channelImage = (width: number, height: number) =>
  z.looseObject({
    file_id: id,
    kind: z.literal("image", { error: "must name an image file" }),
    image_info: z.looseObject({
      width: z.literal(width, { error: `must be ${width} (the image must be ${width}×${height})` }),
      height: z.literal(height, { error: `must be ${height} (the image must be ${width}×${height})` }),
    }),
  });

/** The objects that take raw. */
export type RawTarget = "post" | "message" | "channel" | "file" | "poll" | "user";

export interface CoreType {
  schema: z.ZodType;
  /** Only these objects may carry it (the reference's "can only be attached to …"); all when absent. */
  on?: readonly RawTarget[];
  /** Its items must be made by this replacement value (the reference's channel images). */
  madeBy?: { key: string; format: string };
}

export const CORE_PREFIX = "io.example.core.";

/** Every core raw type the reference defines, by name. */
export const CORE_TYPES: Record<string, CoreType> = {
  "io.example.core.language": { schema: language },
  "io.example.core.crosspost": { schema: crosspost },
  "io.example.core.fallback_url": { schema: fallbackUrl },
  "io.example.core.channel.invite": { schema: channelInvite },
  "io.example.core.chat-settings": { schema: chatSettings, on: ["channel"] },
  // The reference: posts and messages; issue 29 attaches files to channels and polls with it too.
  "io.example.core.oembed": { schema: oembed("oembed"), on: ["post", "message", "channel", "poll"] },
  "io.example.core.oembed.metadata": { schema: oembed("metadata"), on: ["file"] },
  "io.example.core.poll-notice": { schema: pollNotice },
  // Not in the reference: an alias this server has read as a poll notice (stores/message-facets.ts).
  "io.example.core.poll": { schema: pollNotice },
  "io.example.core.channel.avatar": { schema: channelImage(200, 200), on: ["channel"], madeBy: { key: "+io.example.core.file", format: "metadata" } },
  "io.example.core.channel.cover": { schema: channelImage(680, 340), on: ["channel"], madeBy: { key: "+io.example.core.file", format: "metadata" } },
};
