import type { Context } from "hono";
import { timingSafeEqual } from "../auth/crypto";
import { RAW_REPLACEMENTS } from "../config";
import { ApiError } from "../http/errors";
import type { AppEnv } from "../http/types";
import { fileSourcesQuery, toFileSources } from "../stores/files";
import { pollNoticeQueries } from "../stores/polls";
import { viewContext } from "../views/context";
import { fileMetadataEmbed, fileOembed, fileUrlEmbed, pollNotice, type EmbeddableFile } from "../views/raw-embeds";
import { signUrls } from "./file-urls";

// Raw replacement values (object-metadata `+io.pnut.core.file` / `+io.pnut.core.poll`, here
// io.example): a raw item holding `{"+io.example.core.file": {file_id, file_token, format}}` or
// `{"+io.example.core.poll": {poll_id, poll_token}}` is stored as the object the token grants
// (the file's oEmbed, URL or metadata; the poll notice), merged with the item's other values. The
// token is checked first: a wrong one is a 400 naming it, and nothing is written. The writer's
// `file_token` (which lets anyone change or delete the file) is never stored.

export const FILE_KEY = "+io.example.core.file";
export const POLL_KEY = "+io.example.core.poll";
const OEMBED_TYPE = "io.example.core.oembed";
/** Keys in the core namespace are the server's: one it does not know is refused rather than stored as sent. */
const CORE_KEY_PREFIX = "+io.example.core.";
/** oEmbed keys a client may set next to a file replacement (the reference); the server's win for all others. */
const OEMBED_OVERRIDES = ["provider_name", "provider_url", "embeddable_url"] as const;
const FORMATS = ["oembed", "url", "metadata"] as const;
type Format = (typeof FORMATS)[number];

interface Ref {
  /** The field as errors name it, e.g. `raw.io.example.core.oembed.0.+io.example.core.file`. */
  field: string;
  type: string;
  index: number;
  id: number;
  token: string;
}
export interface FileRef extends Ref {
  format: Format;
}
export type PollRef = Ref;

const ID = /^\d{1,18}$/;
const bad = (field: string, detail: string) => ApiError.badRequest(`'${field}' ${detail}`);

function idOf(v: unknown, field: string, what: string): number {
  if ((typeof v !== "string" && typeof v !== "number") || !ID.test(String(v)) || !Number.isSafeInteger(Number(v))) {
    throw bad(field, `is required: the ${what} id`);
  }
  return Number(v);
}

function tokenOf(v: unknown, field: string): string {
  if (typeof v !== "string" || !v) throw bad(field, "is required: a non-empty string");
  return v;
}

function objectValue(v: unknown, field: string, keys: string): Record<string, unknown> {
  if (!v || typeof v !== "object" || Array.isArray(v)) throw bad(field, `must be an object with ${keys}`);
  return v as Record<string, unknown>;
}

/**
 * The replacement values of a raw (`{"<type>": [item, ...]}`): each item's `+io.example.core.file`
 * and `+io.example.core.poll`, their shape checked (400 naming the field). Pure.
 */
export function findReplacements(raw: unknown, field = "raw"): { files: FileRef[]; polls: PollRef[] } {
  const files: FileRef[] = [];
  const polls: PollRef[] = [];
  if (!raw || typeof raw !== "object") return { files, polls };
  for (const [type, items] of Object.entries(raw as Record<string, unknown>)) {
    if (!Array.isArray(items)) continue;
    items.forEach((item: unknown, index) => {
      if (!item || typeof item !== "object" || Array.isArray(item)) return;
      for (const [key, value] of Object.entries(item)) {
        if (!key.startsWith("+")) continue;
        const at = `${field}.${type}.${index}.${key}`;
        if (key === FILE_KEY) {
          const v = objectValue(value, at, "file_id, file_token and format");
          const format = v.format;
          if (typeof format !== "string" || !(FORMATS as readonly string[]).includes(format)) throw bad(`${at}.format`, `must be one of ${FORMATS.join(", ")}`);
          if (format === "oembed" && type !== OEMBED_TYPE) throw bad(`${at}.format`, `oembed is only allowed in ${OEMBED_TYPE} items`);
          files.push({
            field: at,
            type,
            index,
            id: idOf(v.file_id, `${at}.file_id`, "file"),
            token: tokenOf(v.file_token, `${at}.file_token`),
            format: format as Format,
          });
        } else if (key === POLL_KEY) {
          const v = objectValue(value, at, "poll_id and poll_token");
          polls.push({ field: at, type, index, id: idOf(v.poll_id, `${at}.poll_id`, "poll"), token: tokenOf(v.poll_token, `${at}.poll_token`) });
        } else if (key.startsWith(CORE_KEY_PREFIX)) {
          throw bad(at, `is not a replacement value; the known ones are ${FILE_KEY} and ${POLL_KEY}`);
        }
      }
    });
  }
  if (files.length + polls.length > RAW_REPLACEMENTS.perWrite) {
    throw bad(field, `holds more than ${RAW_REPLACEMENTS.perWrite} replacement values`);
  }
  return { files, polls };
}

type Poll = { id: number; pollToken: string; prompt: string; closedAt: number };
type Option = { pollId: number; position: number; text: string };

/** Files and polls the values name, in one database round trip. */
async function loadSources(c: Context<AppEnv>, fileIds: number[], pollIds: number[]) {
  const db = c.var.db;
  const queries = [...(fileIds.length ? [fileSourcesQuery(db, fileIds)] : []), ...(pollIds.length ? pollNoticeQueries(db, pollIds) : [])];
  const results = [...((await db.batch(queries as unknown as Parameters<typeof db.batch>[0])) as unknown as unknown[])];
  const fileRows = fileIds.length ? toFileSources(results.shift() as Parameters<typeof toFileSources>[0]) : [];
  const [polls, options] = pollIds.length ? (results as [Poll[], Option[]]) : [[], []];
  return { files: new Map(fileRows.map((r) => [r.file.id, r as EmbeddableFile])), polls: new Map(polls.map((p) => [p.id, p])), options };
}

/**
 * `raw` with its replacement values replaced by what their tokens grant (see the top of this
 * file); `raw` itself when it has none (no database read). A missing file or poll, a wrong token,
 * a file without content, or an oEmbed of a file that is not an image, video or audio is a 400
 * naming the field. Call before the write; store what it returns.
 */
export async function applyRawReplacements<T>(c: Context<AppEnv>, raw: T, field = "raw"): Promise<T> {
  const { files: fileRefs, polls: pollRefs } = findReplacements(raw, field);
  if (!fileRefs.length && !pollRefs.length) return raw;
  const sources = await loadSources(c, [...new Set(fileRefs.map((r) => r.id))], [...new Set(pollRefs.map((r) => r.id))]);

  for (const ref of fileRefs) {
    const src = sources.files.get(ref.id);
    if (!src) throw bad(`${ref.field}.file_id`, "names no file");
    if (!timingSafeEqual(ref.token, src.file.fileToken)) throw bad(`${ref.field}.file_token`, "is not the file's file_token");
    if (ref.format !== "metadata" && !src.file.isComplete) throw bad(`${ref.field}.file_id`, "names a file whose content is not uploaded yet");
  }
  for (const ref of pollRefs) {
    const poll = sources.polls.get(ref.id);
    if (!poll) throw bad(`${ref.field}.poll_id`, "names no poll");
    if (!timingSafeEqual(ref.token, poll.pollToken)) throw bad(`${ref.field}.poll_token`, "is not the poll's poll_token");
  }

  // URLs stored in raw (immutable on posts and messages) are signed to last.
  await signUrls(c, [...sources.files.values()], RAW_REPLACEMENTS.urlMinRemainingSeconds);
  const origin = viewContext(c).origin;
  const out = structuredClone(raw) as Record<string, Record<string, unknown>[]>;

  for (const ref of fileRefs) {
    const src = sources.files.get(ref.id)!;
    const { [FILE_KEY]: _value, ...others } = out[ref.type][ref.index];
    let made: Record<string, unknown>;
    if (ref.format === "oembed") {
      const oembed = fileOembed(src, origin);
      if (!oembed) throw bad(`${ref.field}.file_id`, "names a file that is not an image, video or audio file; format oembed needs one");
      const overrides = Object.fromEntries(OEMBED_OVERRIDES.filter((k) => others[k] !== undefined).map((k) => [k, others[k]]));
      made = { ...others, ...oembed, ...overrides };
    } else {
      made = { ...others, ...(ref.format === "url" ? fileUrlEmbed(src, origin) : fileMetadataEmbed(src, origin)) };
    }
    out[ref.type][ref.index] = made;
  }
  for (const ref of pollRefs) {
    const poll = sources.polls.get(ref.id)!;
    const { [POLL_KEY]: _value, ...others } = out[ref.type][ref.index];
    out[ref.type][ref.index] = {
      ...others,
      ...pollNotice(
        poll,
        sources.options.filter((o) => o.pollId === poll.id),
      ),
    };
  }
  return out as T;
}
