/** Schema spec: Channels, their membership and subscriptions, and messages. (See ./columns.ts for the column kinds.) */

import { table, id, int8, text, flag, json, createdAt, counter, index, unique } from "./columns";

export const channels = table(
  "channels",
  {
    id: id(),
    type: text().notNull(),
    ownerId: int8().notNull(),
    appId: int8().notNull(),
    pmKey: text().doc("Sorted participant ids for private-message channels, so the same group reuses one channel."),
    readPublic: flag(),
    readAnyUser: flag(),
    writeAnyUser: flag(),
    readImmutable: flag(),
    writeImmutable: flag(),
    fullImmutable: flag(),
    isActive: flag().default(true),
    raw: json(),
    createdAt: createdAt(),
    messages: counter(),
    subscribers: counter(),
    recentMessageId: int8(),
    lastMessageId: int8().doc(
      "The newest message ever posted here, deleted or not; newer than recent_message_id only when deleted (recent_deleted_message_id), read without a probe of messages.",
    ),
  },
  {
    indexes: [
      unique("channels_pm_key", ["pmKey"], { doc: "NULLs are distinct in both SQLite and Postgres (default NULLS DISTINCT)." }),
      index("channels_owner", ["ownerId"]),
      index("channels_type", ["type"]),
      index("channels_public_activity", ["readPublic", "recentMessageId"], {
        doc: "The channel explore streams (GET /channels/streams/explore/{slug}) walk public channels by newest message (`conversations`) or by id (`new`): a page reads about a page of rows.",
      }),
      index("channels_public_id", ["readPublic", "id"]),
    ],
  },
);

export const channelAcl = table(
  "channel_acl",
  {
    channelId: int8().notNull(),
    userId: int8().notNull(),
    level: text().enum(["full", "write", "read"]).notNull(),
  },
  {
    primaryKey: ["channelId", "level", "userId"],
    indexes: [index("channel_acl_user", ["userId", "channelId"])],
    doc: "ACL membership: level is 'full', 'write' or 'read' (the owner is implicit).",
  },
);

export const subscriptions = table(
  "subscriptions",
  {
    id: id(),
    channelId: int8().notNull(),
    userId: int8().notNull(),
    createdAt: createdAt(),
    activity: counter().doc("The channel's activity key (stores/channel-sql activityKeySql), kept by the message writes: the inbox's order."),
    isUnread: flag().doc("The channel is unread by the user (stores/channel-sql unreadFlagSql), kept by message and marker writes."),
  },
  {
    indexes: [
      unique("subscriptions_user_channel", ["userId", "channelId"]),
      index("subscriptions_channel", ["channelId"]),
      index("subscriptions_user_activity", ["userId", "activity", "channelId"], {
        doc: "The inbox: a user's subscriptions, most recently active first, walked a page at a time.",
      }),
      index("subscriptions_user_unread", ["userId", "channelId"], {
        where: "is_unread = 1",
        doc: "The inbox's unread counts: a user's unread subscriptions only.",
      }),
    ],
  },
);

export const channelMutes = table(
  "channel_mutes",
  {
    id: id(),
    channelId: int8().notNull(),
    userId: int8().notNull(),
    createdAt: createdAt(),
  },
  {
    indexes: [unique("channel_mutes_user_channel", ["userId", "channelId"]), index("channel_mutes_user", ["userId", "id", "channelId"])],
  },
);

export const messages = table(
  "messages",
  {
    id: id(),
    channelId: int8().notNull(),
    userId: int8().notNull(),
    appId: int8().notNull(),
    threadId: int8().notNull(),
    replyTo: int8(),
    text: text(),
    html: text(),
    entities: json(),
    isNsfw: flag(),
    isSticky: flag(),
    isDeleted: flag(),
    deletedBy: int8().doc("Who deleted the message when it was not its author (a channel moderator); null otherwise."),
    pollId: int8().doc("Poll attached through raw `io.example.core.poll`, for search's poll_id filter."),
    raw: json(),
    createdAt: createdAt(),
    replies: counter(),
    deletedMark: int8().doc("The newest message id when the message was deleted (as post_changes.mark): polls' `meta.deleted_ids`."),
  },
  {
    indexes: [
      index("messages_deleted", ["channelId", "deletedMark"], { where: "deleted_mark is not null" }),
      index("messages_channel", ["channelId", "id"]),
      index("messages_thread", ["threadId", "id"]),
      index("messages_user", ["userId", "id"]),
      index("messages_reply_to", ["replyTo"]),
      index("messages_sticky", ["channelId", "isSticky", "id"]),
    ],
    pgDoc: "Also has the SQL-only generated column `search_vector` (see the header and 0001_message_search.sql).",
  },
);

export const messageFacets = table(
  "message_facets",
  {
    messageId: int8().notNull(),
    facet: text().notNull().doc("mention | leading_mention | tag | url | url_domain | raw_type | file | file_kind"),
    value: text().notNull(),
  },
  {
    primaryKey: ["facet", "value", "messageId"],
    indexes: [index("message_facets_message", ["messageId"])],
    doc: "Search facets of messages, written with the message (one row per value).",
  },
);

export const reports = table(
  "reports",
  {
    id: id(),
    channelId: int8().notNull(),
    messageId: int8().notNull(),
    reporterId: int8().notNull(),
    reason: text().enum(["account_type", "nsfw", "soliciting", "user_abuse"]).notNull(),
    createdAt: createdAt(),
  },
  {
    indexes: [index("reports_message", ["messageId"])],
  },
);

export const channelsTables = [channels, channelAcl, subscriptions, channelMutes, messages, messageFacets, reports];
