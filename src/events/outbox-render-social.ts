import { sql } from "drizzle-orm";
import type { Db } from "../db";
import { allRows } from "../db/batch";
import { DEFAULT_SHAPE } from "../http/params";
import { readPostsByIds, type AppRef, type PostView } from "../stores/posts";
import { getUser, type UserView } from "../stores/users";
import type { ViewContext } from "../views/context";
import { neutralUser, renderPostForEvent } from "../views/post";
import { renderUser } from "../views/user";
import type { OutboxRef } from "./outbox";
import type { EventType } from "./publish";

/**
 * Renderers from the outbox reference (src/events/outbox-render.ts) of the social writes: post
 * revisions, deletions, reposts and their removal, bookmarks, follows, mutes, blocks and profile
 * changes. Each renders what the writer would have, from the database at delivery (for no viewer).
 */

/** The reference of a removed repost keeps the row it deleted (src/stores/post-writes.ts `deleteRepost`). */
export interface RemovedRepost {
  repostOf: number;
  appId: number;
  isNsfw: number | boolean;
  createdAt: number;
}

export interface SocialRef extends OutboxRef {
  repost?: RemovedRepost;
}

/** The key naming the user acted on in `{user, <key>}` events. */
const GRAPH_KEYS: Partial<Record<EventType, string>> = { follow: "followed_user", mute: "muted_user", block: "blocked_user" };

const neutral = (u: UserView, view: ViewContext) => renderUser(neutralUser(u), view);

/** The event data of one social reference; undefined when its objects are gone (or the type is not one of these). */
export async function renderSocialRef(db: Db, type: EventType, ref: SocialRef, view: ViewContext): Promise<unknown> {
  const actorId = ref.route?.actorId;
  const key = GRAPH_KEYS[type];
  if (key) {
    const targetId = ref.route?.userIds?.[0];
    if (actorId === undefined || targetId === undefined) return undefined;
    const [actor, target] = await Promise.all([getUser(db, actorId, null), getUser(db, targetId, null)]);
    return actor && target ? { user: neutral(actor, view), [key]: neutral(target, view) } : undefined;
  }
  if (type === "user" && ref.id !== undefined) {
    // As the writer: the user as they see themselves, without viewer flags, with raw.
    const user = await getUser(db, ref.id, ref.id);
    return user ? renderUser(neutralUser(user), { ...view, shape: { ...DEFAULT_SHAPE, userRaw: true } }) : undefined;
  }
  if (type === "bookmark" && ref.id !== undefined && actorId !== undefined) {
    const [posts, user] = await Promise.all([readPostsByIds(db, [ref.id], null), getUser(db, actorId, null)]);
    const post = posts.byId.get(ref.id);
    return post && user ? { user: neutral(user, view), post: renderPostForEvent(post, posts.byId, view) } : undefined;
  }
  if (type === "post" && ref.repost && ref.id !== undefined && actorId !== undefined) return removedRepost(db, ref.id, actorId, ref.repost, view);
  return undefined;
}

/** A repost the write removed, rendered as it was (the writer read it back before its delete). */
async function removedRepost(db: Db, id: number, userId: number, r: RemovedRepost, view: ViewContext) {
  const [posts, user, apps] = await Promise.all([
    readPostsByIds(db, [r.repostOf], null),
    getUser(db, userId, null),
    allRows<{ client_id: string; name: string; url: string; deleted_at: number | null }>(
      db,
      sql`SELECT client_id, name, url, deleted_at FROM apps WHERE id = ${r.appId}`,
    ),
  ]);
  const original = posts.byId.get(r.repostOf);
  if (!original || !user) return undefined;
  const app: AppRef | null = apps[0] ? { clientId: apps[0].client_id, name: apps[0].name, url: apps[0].url, deletedAt: apps[0].deleted_at } : null;
  const repost: PostView = {
    post: {
      ...original.post,
      id,
      userId,
      appId: r.appId,
      threadId: id,
      replyTo: null,
      repostOf: r.repostOf,
      text: null,
      html: null,
      entities: null,
      raw: null,
      isNsfw: r.isNsfw === true || Number(r.isNsfw) === 1,
      isDeleted: false,
      isRevised: false,
      createdAt: r.createdAt,
      revisedAt: r.createdAt,
      bookmarks: 0,
      replies: 0,
      reposts: 0,
      threads: 0,
    },
    user,
    app,
    youBookmarked: false,
    youReposted: false,
  };
  return renderPostForEvent(repost, posts.byId, view);
}
