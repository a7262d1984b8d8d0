import { sql } from "drizzle-orm";
import type { Db } from "../db";
import type { Page } from "../http/pagination";
import { PM_TYPE, pageBoundsSql } from "./channel-sql";
import { channelColumnsSql, channelFrom } from "./channels";
import { filterSql, readChannels, type ChannelExtras, type ChannelFilters, type ChannelRead } from "./channel-lists";

// The channel explore streams (the reference's "Explore Streams" of channels): pre-built lists of
// public channels. Each walks an index on (read_public, key) from the page bound, so a page reads
// about a page of rows (indexes channels_public_activity and channels_public_id).

/** The channel explore streams, in the order GET /channels/streams/explore lists them. */
export const CHANNEL_EXPLORE_STREAMS = [
  {
    slug: "conversations",
    title: "Conversations",
    description: "Public channels with messages, the most recently active first (paginated by the id of their newest message).",
    key: "c.recent_message_id",
  },
  { slug: "new", title: "New channels", description: "Public channels, the newest first (paginated by channel id).", key: "c.id" },
] as const;
export type ChannelExploreSlug = (typeof CHANNEL_EXPLORE_STREAMS)[number]["slug"];

/**
 * A page of an explore stream as the viewer sees it: public channels (never private-message
 * channels; deactivated ones only with include_inactive=1), filtered by the general channel
 * parameters; the pagination id is the stream's key.
 */
export async function exploreChannels(
  db: Db,
  slug: ChannelExploreSlug,
  viewerId: number | null,
  page: Page,
  f: ChannelFilters,
  want: ChannelExtras,
): Promise<ChannelRead> {
  const key = CHANNEL_EXPLORE_STREAMS.find((s) => s.slug === slug)!.key;
  const dir = sql.raw(page.newestFirst ? "DESC" : "ASC");
  const { read } = await readChannels(
    db,
    sql`SELECT ${channelColumnsSql(viewerId)}, ${sql.raw(key)} AS pagination_id FROM ${channelFrom}
      WHERE c.read_public = 1 AND ${sql.raw(key)} IS NOT NULL AND ${pageBoundsSql(key, page)}
        AND c.type <> ${PM_TYPE} AND ${filterSql(f, viewerId)}
      ORDER BY c.read_public ${dir}, ${sql.raw(key)} ${dir} LIMIT ${page.limit + 1}`,
    viewerId,
    want,
  );
  return read;
}
