import { sql } from "drizzle-orm";
import type { Db } from "../db";
import { allRows } from "../db/batch";
import { getMessage } from "../stores/messages";
import { readPostsByIds } from "../stores/posts";
import { renderMessage } from "../views/message";
import { renderPostForEvent } from "../views/post";
import type { ViewContext } from "../views/context";
import type { OutboxRef, OutboxRow } from "./outbox";
import { renderSocialRef } from "./outbox-render-social";
import { renderChannelOrFileRef, routeWithObject } from "./outbox-render-channels-files";
import type { StampedEvent } from "./publish";

/**
 * Renders, from the database, the events of outbox rows whose rendering never reached the relay
 * (the writer died between its commit and its hand-off, or the hand-off failed). The object is
 * read as it is at delivery and rendered as the writer would have (no viewer, default shape).
 * Types reserved in a write's batch have a renderer here; a row of another type without payload
 * is reported and skipped (null).
 */
export async function renderFromRefs(db: Db, env: Env, rows: OutboxRow[]): Promise<(StampedEvent | null)[]> {
  const refs = rows.map((r) => (r.ref ? (JSON.parse(r.ref) as OutboxRef) : null));
  const view = (i: number): ViewContext => ({ viewerId: null, schemaBase: env.SCHEMA_BASE, origin: refs[i]?.origin ?? "", now: rows[i].created_at });

  const postIds = rows.flatMap((r, i) => (r.type === "post" && refs[i]?.id !== undefined ? [refs[i]!.id!] : []));
  const posts = postIds.length ? await readPostsByIds(db, postIds, null) : null;

  return Promise.all(
    rows.map(async (row, i): Promise<StampedEvent | null> => {
      const ref = refs[i];
      const base = { type: row.type, isDeleted: ref?.isDeleted ?? false, route: ref?.route, timestamp: row.created_at, seq: row.id };
      if (row.type === "post" && ref?.id !== undefined) {
        const post = posts?.byId.get(ref.id);
        if (post) return { ...base, data: renderPostForEvent(post, posts!.byId, view(i)) };
      }
      if (row.type === "message" && ref?.id !== undefined) {
        // The batch may have created the channel (a private message): its id is read here.
        const channelId =
          ref.route?.channelId ?? (await allRows<{ channel_id: number }>(db, sql`SELECT channel_id FROM messages WHERE id = ${ref.id}`))[0]?.channel_id;
        // Read as its author, as the writer read it back (the channel may be private); rendered for no viewer.
        const message = channelId === undefined ? undefined : await getMessage(db, Number(channelId), ref.id, ref.route?.actorId ?? null);
        // A deletion is published without raw (the deleted message's shape).
        if (message) return { ...base, data: renderMessage(message, view(i), ref.isDeleted ? {} : { raw: true }) };
      }
      // --- Social writes (branch outbox-a): post revise/delete/repost/unrepost, bookmark, follow, mute, block, user. ---
      if (ref) {
        const data = await renderSocialRef(db, row.type, ref, view(i));
        if (data !== undefined) return { ...base, data };
      }
      // --- end of social writes ---
      // ---- channel, channel_subscription, file, marker (outbox-render-channels-files.ts) ----
      if (ref && (row.type === "channel" || row.type === "channel_subscription" || row.type === "file" || row.type === "marker")) {
        const data = await renderChannelOrFileRef(db, env, row, ref, view(i));
        if (data !== undefined) return { ...base, route: routeWithObject(row.type, ref), data };
      }
      // ---- end channel, channel_subscription, file, marker ----
      console.error(JSON.stringify({ error: "outbox row not renderable", seq: row.id, type: row.type }));
      return null;
    }),
  );
}
