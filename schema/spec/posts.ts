/** Schema spec: Posts and what hangs off them: changes, revisions, mentions, home timelines, bookmarks, reports, search facets, interactions. (See ./columns.ts for the column kinds.) */

import { table, id, int8, int, text, flag, json, createdAt, counter, index, unique } from "./columns";

export const posts = table(
  "posts",
  {
    id: id(),
    userId: int8().notNull(),
    appId: int8().notNull(),
    threadId: int8().notNull(),
    replyTo: int8(),
    repostOf: int8(),
    text: text(),
    html: text(),
    entities: json(),
    isNsfw: flag(),
    isDeleted: flag(),
    isRevised: flag(),
    raw: json(),
    createdAt: createdAt(),
    revisedAt: int8().doc("When the current version was written (creation or last revision)."),
    bookmarks: counter(),
    replies: counter(),
    reposts: counter(),
    threads: counter(),
    isNewcomer: flag().doc("Explore `newcomers`: an original post among the first 50 of its author's, set at insert."),
    isConversation: flag().doc("Explore `conversations`: a thread root with a live reply by someone else, kept at reply and delete."),
  },
  {
    indexes: [
      index("posts_user", ["userId", "id"]),
      index("posts_thread", ["threadId", "id"]),
      index("posts_reply_to", ["replyTo"]),
      index("posts_repost_of", ["repostOf", "userId"]),
      index("posts_user_text", ["userId", "createdAt"]),
      index("posts_created", ["createdAt"], { doc: "Recent posts (trending, suggested users): ids grow with time, this finds where a window starts." }),
      index("posts_newcomer", ["id"], {
        where: "is_newcomer = 1",
        doc: "The explore streams walk these partial indexes newest first: each holds the posts that meet the stream's stored condition, so a page reads about a page (the query repeats each WHERE).",
      }),
      index("posts_conversation", ["id"], { where: "is_conversation = 1" }),
      index("posts_popular", ["id"], { where: "replies + reposts + bookmarks >= 3" }),
      index("posts_unanswered", ["id"], { where: "replies = 0 and reposts = 0 and bookmarks = 0" }),
      index("posts_256", ["id"], { where: "length(text) = 256" }),
    ],
  },
);

export const postChanges = table(
  "post_changes",
  {
    id: id(),
    postId: int8().notNull(),
    userId: int8().notNull(),
    threadId: int8().notNull(),
    isRepost: flag(),
    isDeletion: flag(),
    mark: int8().notNull(),
  },
  {
    indexes: [index("post_changes_mark", ["mark"])],
    doc: "Revisions and deletions of posts (reposts' removals too: their rows are gone), for polling clients' `meta.revised_ids` / `meta.deleted_ids`. `mark` is the newest post id when the change was made: a poll with `since_id` S missed the changes with mark >= S (made after post S was).",
  },
);

export const postRevisions = table(
  "post_revisions",
  {
    postId: int8().notNull(),
    revision: int().notNull(),
    text: text(),
    html: text(),
    entities: json(),
    isNsfw: flag(),
    raw: json(),
    createdAt: createdAt(),
  },
  {
    primaryKey: ["postId", "revision"],
    doc: "Earlier versions of a post; `revision` counts from 0.",
  },
);

export const postMentions = table(
  "post_mentions",
  {
    postId: int8().notNull(),
    userId: int8().notNull(),
  },
  {
    primaryKey: ["userId", "postId"],
    doc: "Mentions of users in posts, for /users/me/mentions.",
  },
);

export const homeItems = table(
  "home_items",
  {
    userId: int8().notNull(),
    postId: int8().notNull(),
  },
  {
    primaryKey: ["userId", "postId"],
    doc: "Home timelines fanned out on write: one row per post per user whose /posts/streams/me shows it (the author, and each follower unless the author is in `merged_authors`). Written with the post, backfilled on follow, cleared on unfollow; the list's other rules are applied when it is read.",
  },
);

export const mergedAuthors = table(
  "merged_authors",
  {
    userId: int8().primaryKey(),
  },
  {
    doc: "Authors whose posts are not fanned out to followers (too many followers, or too many posts to backfill on a follow): home timelines merge their posts at read time. Never removed: an author leaves it only with a backfill of every follower, which nothing does.",
  },
);

export const bookmarks = table(
  "bookmarks",
  {
    id: id(),
    userId: int8().notNull(),
    postId: int8().notNull(),
    note: text().doc("Shown only to the user who bookmarked (up to 128 characters)."),
    createdAt: createdAt(),
  },
  {
    indexes: [unique("bookmarks_user_post", ["userId", "postId"]), index("bookmarks_user", ["userId", "id"]), index("bookmarks_post", ["postId", "id"])],
    doc: "Bookmarks; `id` orders a user's bookmarks (and pages them), newest first.",
  },
);

export const postReports = table(
  "post_reports",
  {
    id: id(),
    postId: int8().notNull(),
    reporterId: int8().notNull(),
    reason: text().enum(["account_type", "nsfw", "soliciting", "user_abuse"]).notNull(),
    createdAt: createdAt(),
  },
  {
    indexes: [unique("post_reports_once", ["postId", "reporterId", "reason"])],
    doc: "Reports of posts (POST /posts/{id}/report): the same reporter, post and reason are stored once.",
  },
);

export const postFacets = table(
  "post_facets",
  {
    postId: int8().notNull(),
    facet: text().notNull().doc("mention | leading_mention | copy_mention | tag | url | url_domain | raw_type | file | file_kind | poll | oembed"),
    value: text().notNull(),
  },
  {
    primaryKey: ["facet", "value", "postId"],
    indexes: [index("post_facets_post", ["postId", "facet"])],
    doc: "Search facets of posts, written with the post (one row per value): what post search filters on and what the tag and explore streams walk (the primary key is their index, newest post last).",
  },
);

export const interactionGroups = table(
  "interaction_groups",
  {
    id: id(),
    userId: int8().notNull().doc("The user the interaction is about (the post's author, the followed user, the poll's creator)."),
    action: text().enum(["bookmark", "reply", "repost", "follow", "poll_response"]).notNull(),
    objectId: int8().notNull(),
    latestEventId: int8().notNull().doc("Id of the group's most recent event: the item's pagination_id."),
    latestAt: int8().notNull(),
  },
  {
    indexes: [
      index("interaction_groups_page", ["userId", "latestEventId"]),
      index("interaction_groups_action_page", ["userId", "action", "latestEventId"], {
        doc: "Pages of some actions only (`filters`/`exclude`): one bounded range scan per action.",
      }),
      index("interaction_groups_object", ["userId", "action", "objectId", "latestAt"]),
    ],
    doc: "Interactions are merged at write time: an event joins the newest group for the same (user, action, object) while it is within 24 hours of the group's latest event, so a page read is an indexed range scan that does not grow with the user's history.",
  },
);

export const interactionEvents = table(
  "interaction_events",
  {
    id: id(),
    groupId: int8().notNull(),
    actorId: int8().notNull(),
    createdAt: createdAt(),
  },
  {
    indexes: [
      index("interaction_events_group", ["groupId", "id", "actorId"], { doc: "Covering for the actors of a page: a group's newest events and who they are." }),
      unique("interaction_events_actor", ["groupId", "actorId"], {
        doc: "One event per actor and group (its latest): a group's newest events are its newest actors.",
      }),
    ],
  },
);

export const postsTables = [
  posts,
  postChanges,
  postRevisions,
  postMentions,
  homeItems,
  mergedAuthors,
  bookmarks,
  postReports,
  postFacets,
  interactionGroups,
  interactionEvents,
];
