import { describe, expect, it } from "vitest";
import { actor, call, makeUser } from "../support/client";
import * as fx from "../fixtures/media";

// Every user, post and explore call of a client library written for the public service
// (pnut-butter's users, posts and explore modules), made as that library makes it: the same
// paths (including older ones such as /posts/tag/{tag}, /posts/{id}/actions, /users/me/actions,
// /presence/{id}), query strings (lists joined with commas) and bodies (JSON only when there is
// data; uploads as multipart form fields). Each must succeed against /v1 (issue 17).

const SCOPES = "basic stream write_post follow update_profile presence messages public_messages files polls";

describe("a client library's user, post and explore calls", { timeout: 60_000 }, () => {
  it("all succeed", async () => {
    const me = await actor(SCOPES);
    const [other, third] = await Promise.all([actor(SCOPES), makeUser()]);
    const token = me.token;
    const form = (field: string, bytes: Uint8Array) => {
      const f = new FormData();
      f.append(field, new Blob([bytes]), "image.png");
      return f;
    };
    const created = await call("POST", "/posts", { token, json: { text: "Hello #MondayNightDanceParty", is_nsfw: 1 } });
    expect(created.status).toBe(201);
    const postId = created.body.data.id;
    const theirs = await call("POST", "/posts", { token: other.token, json: { text: "from the other user" } });
    const otherPost = theirs.body.data.id;

    const calls: [string, string, { json?: unknown; body?: BodyInit }?][] = [
      // users.js
      ["GET", `/users/${other.user.id}`],
      ["GET", `/users/${other.user.id}/avatar`],
      ["POST", "/users/me/avatar", { body: form("avatar", fx.png) }],
      ["GET", `/users/${other.user.id}/cover`],
      ["GET", `/users?ids=${me.user.id},${other.user.id},${third.id}`],
      ["GET", `/users/${me.user.id}/mentions`],
      ["GET", `/users/${other.user.id}/posts`],
      ["PUT", "/users/me", { json: { locale: "de_DE", timezone: "Europe/Berlin" } }],
      ["PATCH", "/users/me", { json: { timezone: "Europe/Berlin", name: "Robert" } }],
      ["GET", `/users/${me.user.id}/following`],
      ["GET", `/users/${me.user.id}/followers`],
      ["PUT", `/users/${other.user.id}/follow`],
      ["DELETE", `/users/${other.user.id}/follow`],
      ["GET", "/users/me/muted"],
      ["PUT", `/users/${third.id}/mute`],
      ["DELETE", `/users/${third.id}/mute`],
      ["GET", "/users/me/blocked"],
      ["PUT", `/users/${third.id}/block`],
      ["DELETE", `/users/${third.id}/block`],
      ["GET", "/presence"],
      ["GET", `/presence/${me.user.id}`],
      ["PUT", "/users/me/presence", { json: { presence: "my status" } }],
      ["PUT", "/users/me/presence"],
      ["GET", "/users/search?q=news&types=feed"],
      // posts.js
      ["GET", "/posts/streams/global"],
      ["GET", "/posts/streams/me"],
      ["GET", "/posts/streams/unified"],
      ["GET", `/posts/${postId}`],
      ["GET", `/posts?ids=${postId},${otherPost}`],
      ["GET", `/posts/${postId}/revisions`],
      ["GET", `/posts/tag/${encodeURI("MondayNightDanceParty")}`],
      ["GET", `/posts/${postId}/thread`],
      ["GET", `/posts/${postId}/actions`],
      ["GET", "/users/me/actions"],
      ["POST", "/posts", { json: { text: "A reply", reply_to: otherPost, entities: { parse_links: 1, parse_markdown_links: 1 } } }],
      ["PUT", `/posts/${postId}`, { json: { text: "Hello again #MondayNightDanceParty" } }],
      ["PUT", `/posts/${otherPost}/repost`],
      ["DELETE", `/posts/${otherPost}/repost`],
      ["GET", `/users/${me.user.id}/bookmarks`],
      ["PUT", `/posts/${otherPost}/bookmark`],
      ["DELETE", `/posts/${otherPost}/bookmark`],
      ["GET", "/posts/search?tags=mndp,MondayNightDanceParty"],
      ["DELETE", `/posts/${postId}`],
      // explore.js
      ["GET", "/posts/streams/explore"],
      ["GET", "/posts/streams/explore/conversations"],
      ["GET", "/posts/streams/explore/photos"],
      ["GET", "/posts/streams/explore/trending"],
      ["GET", "/posts/streams/explore/missed_conversations"],
    ];
    for (const [method, path, opts] of calls) {
      const res = await call(method, path, { token, ...opts });
      expect([200, 201, 302], `${method} ${path}: ${res.text.slice(0, 200)}`).toContain(res.status);
    }
    // A cover is uploaded the same way (form field `cover`); this image is too small for one.
    const coverRes = await call("POST", "/users/me/cover", { token, body: form("cover", fx.png) });
    expect(coverRes.status).toBe(400);
    expect(coverRes.body.meta.error_message).toContain("960");
  });
});
