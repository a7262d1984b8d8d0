import type { BoundQuery } from "../db/batch";
import { markerChannelId } from "../stores/markers";
import {
  appsAuthorizedBy,
  channelAudience,
  channelEventRecipients,
  channelPresenceAudience,
  channelSubscriberRecipients,
  followRecipients,
  ownerRecipients,
  postRecipients,
  presenceRecipients,
  type StreamEndpoint,
} from "../stores/stream-subscriptions";
import type { StampedEvent } from "./publish";

/**
 * Which app streams may hear of an event: all of them (public objects), a known list of apps,
 * or the apps a statement finds (private objects: the apps their users authorized).
 */
export type AppAudience = { kind: "all" } | { kind: "apps"; appIds: number[] } | { kind: "query"; statement: BoundQuery };

export interface RoutePlan {
  appAudience: AppAudience;
  /** Finds the user-stream subscriptions the event goes to (rows id, connection_id, user_id); null: none. */
  recipients: BoundQuery | null;
  /** Events for one user's own connections, whatever they subscribed to (markers). */
  ownConnections?: OwnConnections;
}

/**
 * Every user stream connection of `userId` but `exceptConnectionId`; each frame carries the ids
 * of that connection's subscriptions to `endpoints` (of `channelId`), possibly none.
 */
export interface OwnConnections {
  userId: number;
  exceptConnectionId?: string;
  endpoints: StreamEndpoint[];
  channelId: number | null;
}

/** The subscribable endpoints whose stream a marker belongs to (decisions §6). */
function markerEndpoints(name: string): StreamEndpoint[] {
  if (name === "personal") return ["posts_me", "posts_unified"];
  if (name === "mentions") return ["mentions"];
  return markerChannelId(name) === null ? [] : ["channel_messages"];
}

type Obj = Record<string, unknown> | undefined;

const NOBODY: AppAudience = { kind: "apps", appIds: [] };
const ALL: AppAudience = { kind: "all" };

/** Posts and messages arrive as a list (decisions §8), whether the writer passed one or a single object. */
export const LIST_TYPES = new Set(["post", "message"]);

const asList = (data: unknown): Obj[] => (Array.isArray(data) ? data : [data]) as Obj[];
const num = (v: unknown): number | undefined => (v === undefined || v === null || v === "" || Number.isNaN(Number(v)) ? undefined : Number(v));
/** The id of the user an object belongs to, embedded (`user.id`) or not (`user_id`). */
const ownerOf = (o: Obj): number | undefined => num((o?.user as Obj)?.id ?? o?.user_id);

/** Mentioned user ids in a rendered post (entities.mentions[].id: only existing users carry one); `leading`: leading mentions only. */
function mentionIds(post: Obj, leading = false): number[] | undefined {
  const mentions = ((post?.content as Obj)?.entities as Obj)?.mentions;
  if (!Array.isArray(mentions)) return undefined;
  return mentions
    .filter((m: Obj) => !leading || m?.is_leading === true)
    .map((m: Obj) => num(m?.id))
    .filter((id): id is number => id !== undefined);
}

/**
 * Decides where one event goes, from the event alone (its type, route hints and rendered
 * data); the statements it returns run together in one D1 batch per publish. Nothing here
 * looks at connections: user-stream recipients come from the indexed table of live
 * subscriptions, app-stream recipients are found by the hubs from the object type.
 *
 * User-stream subscriptions by endpoint: posts → `/posts/streams/me` and `/unified` of the
 * author and followers, `/users/me/mentions` and `/unified` of those mentioned, the author's
 * `/users/me/posts`, `/posts/{id}/thread` of the thread (muted and blocked users left out);
 * follow → `/users/me/following` of the follower and `/users/me/followers` of the followed;
 * message, channel → `/channels/{id}/messages` of that channel and `/channels` of its
 * subscribers; channel_subscription → `/channels/{id}/subscribers`; user_channel_presence →
 * `/channels/{id}/presence`; token → `/token` of the token's user through the same app; user →
 * `/token` of that user (their own profile); file → `/users/me/files` of the owner;
 * user_presence → `/presence` of followers (everyone not blocked with `include_not_followed=1`);
 * marker → every other connection of the marker's user.
 *
 * App streams: `user` (a profile change) goes only to apps the user authorized, and
 * `user_channel_presence` only to apps the present user authorized that may also see the
 * channel (it is public, or one of its members authorized them), as the public service documents.
 */
export function planRoute(e: StampedEvent): RoutePlan {
  const route = e.route ?? {};
  const data = e.data as Obj;
  switch (e.type) {
    case "post": {
      const post = asList(e.data)[0];
      const author = route.actorId ?? ownerOf(post);
      const mentioned = mentionIds(post) ?? route.userIds ?? [];
      if (author === undefined) return { appAudience: ALL, recipients: null };
      const postRoute = { authorId: author, mentionIds: mentioned, leadingMentionIds: mentionIds(post, true) ?? [], threadId: num(post?.thread_id) ?? null };
      return { appAudience: ALL, recipients: postRecipients(postRoute) };
    }
    case "bookmark":
      return { appAudience: ALL, recipients: null };
    case "follow": {
      const follower = route.actorId ?? num((data?.user as Obj)?.id);
      const followed = route.userIds?.[0] ?? num((data?.followed_user as Obj)?.id);
      return { appAudience: ALL, recipients: follower === undefined || followed === undefined ? null : followRecipients(follower, followed) };
    }
    case "user": {
      const userId = num(data?.id) ?? route.actorId;
      if (userId === undefined) return { appAudience: NOBODY, recipients: null };
      return { appAudience: authorizedBy([userId]), recipients: ownerRecipients("token", userId) };
    }
    case "marker": {
      const userId = route.actorId;
      const name = String(data?.name ?? "");
      if (userId === undefined) return { appAudience: NOBODY, recipients: null };
      const own = { userId, exceptConnectionId: route.exceptConnectionId, endpoints: markerEndpoints(name), channelId: markerChannelId(name) };
      return { appAudience: NOBODY, recipients: null, ownConnections: own };
    }
    case "user_presence": {
      const userId = num(asList(e.data)[0]?.id) ?? route.actorId;
      return { appAudience: ALL, recipients: userId === undefined ? null : presenceRecipients(userId) };
    }
    case "mute":
    case "block": {
      // Private to the user who muted or blocked: the muted or blocked user must not learn of it.
      const actor = route.actorId ?? ownerOf(data);
      return { appAudience: actor === undefined ? NOBODY : authorizedBy([actor]), recipients: null };
    }
    case "token": {
      const userId = route.actorId ?? route.userIds?.[0] ?? ownerOf(data);
      const appId = route.appId;
      return {
        appAudience: appId === undefined ? NOBODY : { kind: "apps", appIds: [appId] },
        // A deletion still reaches the deleted token's own connections (they are closed after it).
        recipients: userId === undefined || appId === undefined ? null : ownerRecipients("token", userId, appId, e.isDeleted ? route.tokenId : undefined),
      };
    }
    case "file": {
      // route.userIds names the owner; the actor may be someone holding the file token.
      const owner = route.userIds?.[0] ?? ownerOf(data) ?? route.actorId;
      if (owner === undefined) return { appAudience: NOBODY, recipients: null };
      return { appAudience: authorizedBy([owner]), recipients: ownerRecipients("files", owner) };
    }
    case "poll": {
      const poll = (data?.poll ?? data) as Obj;
      if (poll?.is_public === true) return { appAudience: ALL, recipients: null };
      // A private poll: only apps of its creator (never the responder's, which could reveal who answered).
      const creator = ownerOf(poll) ?? route.userIds?.[0];
      return { appAudience: creator === undefined ? NOBODY : authorizedBy([creator]), recipients: null };
    }
    case "user_channel_presence": {
      const channelId = route.channelId ?? channelOf(e);
      const userId = num(asList(e.data)[0]?.id) ?? route.actorId;
      if (channelId === undefined || userId === undefined) return { appAudience: NOBODY, recipients: null };
      return { appAudience: { kind: "query", statement: channelPresenceAudience(channelId, userId) }, recipients: presenceRecipients(userId, channelId) };
    }
    case "message":
    case "channel":
    case "channel_subscription": {
      const channelId = route.channelId ?? channelOf(e);
      if (channelId === undefined) return { appAudience: NOBODY, recipients: null };
      return {
        appAudience: { kind: "query", statement: channelAudience(channelId) },
        recipients: e.type === "channel_subscription" ? channelSubscriberRecipients(channelId) : channelEventRecipients(channelId),
      };
    }
  }
}

function authorizedBy(userIds: number[]): AppAudience {
  return { kind: "query", statement: appsAuthorizedBy(userIds) };
}

function channelOf(e: StampedEvent): number | undefined {
  const first = asList(e.data)[0];
  if (e.type === "message") return num(first?.channel_id);
  if (e.type === "channel") return num(first?.id);
  if (e.type === "channel_subscription") return num((first?.channel as Obj)?.id);
  return num(first?.channel_id);
}
