import { sql, type SQL } from "drizzle-orm";
import { boundShape, type BoundQuery } from "../db/batch";
import type { Page } from "../http/pagination";
import type { Stream } from "./post-lists";

// Dynamic polling (reference how-to "dynamic polling"): a page asked for with `since_id` carries
// `meta.deleted_ids` and `meta.revised_ids`, the posts of the stream revised or deleted after the
// post `since_id` was created. The writes log each change in `post_changes` with `mark`, the
// newest post id at that moment (post ids grow with time), so "after post S was created" is
// `mark >= S`: an index range on post_changes_mark, read in the page's round trip. The range is
// cut at CHANGES_READ rows (the newest changes) so that an old `since_id` costs a bounded read;
// the stream's own condition is then checked on those rows. Streams count a change of a post that
// was in them when it changed; the check is the stream's defining rule, not the viewer's filters
// (a client that shows the post wants to hear of its deletion whatever it asked to hide since).

/** At most this many changes are read for one page (the newest after `since_id`). */
export const CHANGES_READ = 500;

/** The stream's rule on a logged change `c` (its post may be gone: reposts are removed). */
function member(stream: Stream): SQL | null {
  const subject = sql.placeholder("subject");
  const mentionOf = sql`exists(select 1 from post_facets mf where mf.facet = 'mention' and mf.post_id = c.post_id
    and mf.value = (select lower(mu.username) from users mu where mu.id = ${subject}))`;
  switch (stream.kind) {
    case "global":
    case "explore":
      return sql`c.is_repost = 0`;
    case "user":
      return sql`c.user_id = ${subject}`;
    case "thread":
      return sql`c.thread_id = (select tp.thread_id from posts tp where tp.id = ${subject})`;
    case "tag":
      return sql`exists(select 1 from post_facets tf where tf.facet = 'tag' and tf.value = ${subject} and tf.post_id = c.post_id)`;
    case "mentions":
      return mentionOf;
    case "personal": {
      const home = sql`(c.user_id = ${subject} or exists(select 1 from follows cf where cf.follower_id = ${subject} and cf.followed_id = c.user_id))`;
      return stream.withMentions ? sql`(${home} or ${mentionOf})` : home;
    }
    case "bookmarks":
      // Paged by bookmark id, which says nothing of when a post changed.
      return null;
  }
}

const subjectOf = (s: Stream) => (s.kind === "tag" ? s.tag : s.kind === "thread" ? s.postId : "userId" in s ? s.userId : 0);

/** The changes a page with `since_id` reports (rows: id, deleted), or null when it reports none. */
export function postChangesQuery(stream: Stream, page: Page): BoundQuery | null {
  if (page.sinceId === undefined) return null;
  const rule = member(stream);
  if (!rule) return null;
  const key = `post-changes:${stream.kind}:${stream.kind === "personal" ? stream.withMentions : ""}`;
  return boundShape(
    key,
    () => sql`select c.post_id as id, c.is_deletion as deleted from (
        select * from post_changes where mark >= ${sql.placeholder("sinceId")} order by mark desc limit ${sql.raw(String(CHANGES_READ))}
      ) c where ${rule}`,
    { subject: subjectOf(stream), sinceId: page.sinceId },
  );
}

export interface ChangedIds {
  deleted_ids?: string[];
  revised_ids?: string[];
}

/** `meta.deleted_ids` / `revised_ids` from the rows (a post revised, then deleted, is only deleted); each only when not empty. */
export function changedIds(rows: readonly Record<string, unknown>[]): ChangedIds {
  const deleted = new Set<string>();
  const revised = new Set<string>();
  for (const r of rows) (Number(r.deleted) ? deleted : revised).add(String(r.id));
  for (const id of deleted) revised.delete(id);
  const byId = (a: string, b: string) => Number(b) - Number(a);
  return {
    ...(deleted.size > 0 && { deleted_ids: [...deleted].sort(byId) }),
    ...(revised.size > 0 && { revised_ids: [...revised].sort(byId) }),
  };
}
