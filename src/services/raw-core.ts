import type { Context } from "hono";
import type { z } from "zod";
import { RAW_REPLACEMENTS } from "../config";
import { ApiError } from "../http/errors";
import type { AppEnv } from "../http/types";
import { channelAccess, getChannel } from "../stores/channels";
import { processText } from "../text";
import { CHAT_DESCRIPTION_MAX, CORE_PREFIX, CORE_TYPES, type RawTarget } from "./raw-core-schemas";
import { applyRawReplacements, FILE_KEY, POLL_KEY } from "./raw-replacements";
import { checkEntityCounts, checkSentLength, mentionedUsers } from "./text";

// The raw of every write (posts, messages and PMs, channels, polls, files, the user profile)
// goes through `prepareRaw`: the core types (`io.example.core.*`, the reference's io.pnut.core)
// are checked against the shapes the reference defines (raw-core-schemas.ts), after the
// replacement values are replaced, so a stored core item always has its documented shape. A
// wrong shape is a 400 naming the field, e.g. `raw.io.example.core.language[0].language`, and
// nothing is written. Then what the reference says the server adds is added: the chat room
// description's entities and html, the invited channel's name.

type Raw = Record<string, Record<string, unknown>[]>;

const CHAT_SETTINGS = "io.example.core.chat-settings";
const CHANNEL_INVITE = "io.example.core.channel.invite";
const CHAT_TYPE = "io.example.core.chat";

const bad = (field: string, detail: string) => ApiError.badRequest(`'${field}' ${detail}`);
const itemField = (field: string, type: string, index: number) => `${field}.${type}[${index}]`;

/** "a", "a and b", "a, b and c". */
const listed = (l: string[]) => (l.length > 1 ? `${l.slice(0, -1).join(", ")} and ${l.at(-1)}` : l[0]);

/** `a.b[0].c` from a zod issue path. */
function pathText(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
}

function valueAt(item: unknown, path: readonly PropertyKey[]): unknown {
  let v = item;
  for (const p of path) v = v && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  return v;
}

/** The first issue of a failed parse, as the error message names it. */
function issueError(at: string, item: unknown, issue: z.core.$ZodIssue): ApiError {
  const missing = valueAt(item, issue.path) === undefined;
  const message =
    missing && issue.code !== "custom"
      ? "is required"
      : issue.code === "invalid_type"
        ? `must be ${issue.expected === "object" ? "an object" : `a ${issue.expected}`}`
        : issue.message;
  return bad(`${at}${pathText(issue.path)}`, message);
}

/** Rules that hold for what the client sent: known core types, on the objects they belong to, made by the replacement they need. */
function checkSent(raw: Raw, on: RawTarget, field: string): void {
  for (const [type, items] of Object.entries(raw)) {
    if (!type.startsWith(CORE_PREFIX)) continue;
    const core = CORE_TYPES[type];
    if (!core)
      throw bad(`${field}.${type}`, `is not a core raw type; the ${CORE_PREFIX}* types are the server's (known: ${Object.keys(CORE_TYPES).join(", ")})`);
    if (core.on && !core.on.includes(on)) throw bad(`${field}.${type}`, `can only be attached to ${listed(core.on.map((t) => `${t}s`))}`);
    if (!core.madeBy || !Array.isArray(items)) continue;
    items.forEach((item, i) => {
      const value = item?.[core.madeBy!.key] as { format?: unknown } | undefined;
      if (!value || value.format !== core.madeBy!.format) {
        throw bad(`${itemField(field, type, i)}.${core.madeBy!.key}`, `is required, with format '${core.madeBy!.format}'`);
      }
    });
  }
}

/**
 * Each core item against its schema, after replacement. An item a replacement value made is the
 * server's own object (from a real file or poll) and is not re-checked, except where the type
 * needs that replacement (the channel images, whose size is checked on what it made).
 */
function checkShapes(sent: Raw, raw: Raw, field: string): void {
  for (const [type, items] of Object.entries(raw)) {
    const core = CORE_TYPES[type];
    if (!core) continue;
    items.forEach((item, i) => {
      const original = sent[type]?.[i];
      if (!core.madeBy && original && typeof original === "object" && (FILE_KEY in original || POLL_KEY in original)) return;
      const result = core.schema.safeParse(item);
      if (!result.success) throw issueError(itemField(field, type, i), item, result.error.issues[0]);
    });
  }
}

/** The reference (how-to chat rooms): the description is processed like a post's text, up to 256 characters. */
async function processDescriptions(c: Context<AppEnv>, raw: Raw, field: string): Promise<void> {
  const items = raw[CHAT_SETTINGS] ?? [];
  for (const [i, item] of items.entries()) {
    if (item.description === undefined) continue;
    const d = item.description;
    const at = `${itemField(field, CHAT_SETTINGS, i)}.description${typeof d === "string" ? "" : ".text"}`;
    const text = typeof d === "string" ? d : (d as { text: string }).text;
    checkSentLength(text, CHAT_DESCRIPTION_MAX, at);
    const users = await mentionedUsers(c, text, at);
    const done = checkEntityCounts(processText(text, { schemaBase: c.env.SCHEMA_BASE, itemType: "Post", users }), at);
    if (done.length > CHAT_DESCRIPTION_MAX) throw bad(at, `is longer than ${CHAT_DESCRIPTION_MAX} characters`);
    item.description = { text: done.text, html: done.html, entities: done.entities };
  }
}

/**
 * The reference (channel invite): the channel must exist (here: one the writer can read, so an
 * invite tells nothing of a channel the writer cannot see), and a chat room's name is added.
 */
async function resolveInvites(c: Context<AppEnv>, raw: Raw, field: string): Promise<void> {
  const items = raw[CHANNEL_INVITE] ?? [];
  if (!items.length) return;
  if (items.length > RAW_REPLACEMENTS.perWrite) throw bad(`${field}.${CHANNEL_INVITE}`, `holds more than ${RAW_REPLACEMENTS.perWrite} invites`);
  const viewerId = c.var.auth?.user?.id ?? null;
  const ids = [...new Set(items.map((item) => Number(item.channel_id)))];
  const found = await Promise.all(ids.map((id) => getChannel(c.var.db, id, viewerId)));
  const channels = new Map(found.filter((ch) => ch && ch.isActive && channelAccess(ch, viewerId).read).map((ch) => [ch!.id, ch!]));
  items.forEach((item, i) => {
    const ch = channels.get(Number(item.channel_id));
    if (!ch) throw bad(`${itemField(field, CHANNEL_INVITE, i)}.channel_id`, "names no channel you can read");
    item.channel_id = String(ch.id);
    const name = ch.type === CHAT_TYPE ? ((ch.raw as Raw | null)?.[CHAT_SETTINGS]?.[0]?.name as string | undefined) : undefined;
    if (name !== undefined) item.name = name;
  });
}

/**
 * `raw` as it is stored: replacement values replaced (raw-replacements.ts), core types checked
 * and completed. `on` is the object it is attached to. Call before the write; store what it
 * returns (`raw` itself when it holds no core type and no replacement value).
 */
export async function prepareRaw<T>(c: Context<AppEnv>, raw: T, on: RawTarget, field = "raw"): Promise<T> {
  if (!raw || typeof raw !== "object") return raw;
  checkSent(raw as Raw, on, field);
  const replaced = (await applyRawReplacements(c, raw, field)) as Raw;
  if (!Object.keys(replaced).some((type) => CORE_TYPES[type])) return replaced as T;
  checkShapes(raw as Raw, replaced, field);
  if (!replaced[CHAT_SETTINGS]?.length && !replaced[CHANNEL_INVITE]?.length) return replaced as T;
  const out = replaced === (raw as unknown) ? structuredClone(replaced) : replaced;
  await Promise.all([processDescriptions(c, out, field), resolveInvites(c, out, field)]);
  return out as T;
}
