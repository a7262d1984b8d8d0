import type { Db } from "../db";
import { signUrlsAt } from "../services/file-urls";
import { getChannel } from "../stores/channels";
import { getFileRow } from "../stores/files";
import { getMarker } from "../stores/markers";
import { getUser } from "../stores/users";
import { renderChannel } from "../views/channel";
import type { ViewContext } from "../views/context";
import { renderFile } from "../views/file";
import { renderMarker } from "../views/marker";
import { renderUser } from "../views/user";
import type { OutboxRef, OutboxRow } from "./outbox";

/**
 * The relay's renderers (src/events/outbox-render.ts) of `channel`, `channel_subscription`,
 * `file` and `marker` events reserved in their write's batch: the `data` the writer would have published,
 * read as it is at delivery; undefined when the object is gone.
 */
export async function renderChannelOrFileRef(db: Db, env: Env, row: OutboxRow, ref: OutboxRef, view: ViewContext): Promise<unknown> {
  const actorId = ref.route?.actorId ?? null;
  if (row.type === "marker" && actorId !== null && ref.key !== undefined) {
    const marker = await getMarker(db, actorId, ref.key);
    return marker ? renderMarker(marker) : undefined;
  }
  if (ref.id === undefined) return undefined;
  if (row.type === "channel") {
    // Read as the actor, as the writer read it back; rendered for no viewer.
    const ch = await getChannel(db, ref.id, actorId);
    return ch && renderChannel(ch, view, { raw: true });
  }
  if (row.type === "channel_subscription" && actorId !== null) {
    const [ch, user] = await Promise.all([getChannel(db, ref.id, actorId), getUser(db, actorId, null)]);
    // The writer renders the acting user's own record: no relationship flags.
    return ch && user && { user: renderUser({ ...user, youFollow: undefined }, view), channel: renderChannel(ch, view, { raw: true }) };
  }
  if (row.type === "file") {
    const file = await getFileRow(db, ref.id, actorId);
    if (!file) return undefined;
    await signUrlsAt(env, db, row.created_at, [file]);
    return renderFile(file, view, { isDeleted: ref.isDeleted ?? false });
  }
  return undefined;
}

/** The route of a reserved event whose object the batch created: the channel id filled in from the reference. */
export const routeWithObject = (type: OutboxRow["type"], ref: OutboxRef): OutboxRef["route"] =>
  (type === "channel" || type === "channel_subscription") && ref.id !== undefined && ref.route?.channelId === undefined
    ? { ...ref.route, channelId: ref.id }
    : ref.route;
