import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { appHubFor } from "../../src/events/app-ring";
import { userHubFor } from "../../src/events/hubs";
import { OBJECT_TYPES } from "../../src/events/publish";
import { actor, call, makeApp, makeUser, openStream, userToken, type StreamSocket } from "../support/client";
import { ALL_SCOPES, appStream, appWithToken, createStream, ofType, rowsOf, socket, subscribe, userStream, viaRelay } from "../support/streams";

describe("app stream management", () => {
  it("creates, lists, reads, updates and deletes streams", async () => {
    const { token } = await appWithToken();
    const created = await createStream(token, { object_types: ["post", "follow", "post"], key: "main_1" });
    expect(created).toEqual({ key: "main_1", object_types: ["post", "follow"], endpoint: "ws://api.test/v1/app", type: "long_poll" });

    const auto = await createStream(token, { object_types: ["token"] });
    expect(auto.key).toMatch(/^\d+$/);

    const list = await call("GET", "/streams", { token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: any) => s.key)).toEqual(["main_1", auto.key]);

    const one = await call("GET", "/streams/main_1", { token });
    expect(one.body.data).toEqual(created);

    const put = await call("PUT", "/streams/main_1", { token, json: { object_types: ["message", "user_channel_presence"] } });
    expect(put.status).toBe(200);
    expect(put.body.data.object_types).toEqual(["message", "user_channel_presence"]);
    expect((await call("GET", "/streams/main_1", { token })).body.data.object_types).toEqual(["message", "user_channel_presence"]);

    const del = await call("DELETE", "/streams/main_1", { token });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ ...put.body.data, is_deleted: true });
    expect((await call("GET", "/streams/main_1", { token })).status).toBe(404);
    expect((await call("DELETE", "/streams/main_1", { token })).status).toBe(404);

    await createStream(token, { object_types: ["poll"], key: "other" });
    const all = await call("DELETE", "/streams", { token });
    expect(all.status).toBe(200);
    expect(all.body.data.map((s: any) => [s.key, s.is_deleted])).toEqual([
      [auto.key, true],
      ["other", true],
    ]);
    expect((await call("GET", "/streams", { token })).body.data).toEqual([]);
  });

  it("keeps streams per app", async () => {
    const a = await appWithToken();
    const b = await appWithToken();
    await createStream(a.token, { object_types: ["post"], key: "same" });
    await createStream(b.token, { object_types: ["follow"], key: "same" });
    expect((await call("GET", "/streams/same", { token: a.token })).body.data.object_types).toEqual(["post"]);
    expect((await call("GET", "/streams/same", { token: b.token })).body.data.object_types).toEqual(["follow"]);
  });

  it("validates type, object_types and key, naming the field", async () => {
    const { token } = await appWithToken();
    const post = (json: unknown) => call("POST", "/streams", { token, json });
    const unknown = await post({ type: "long_poll", object_types: ["post", "foo"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.meta.error_message).toBe("Bad Request: 'object_types' has unknown type 'foo'");
    expect((await post({ type: "websocket", object_types: ["post"] })).body.meta.error_message).toBe("Bad Request: 'type' must be 'long_poll'");
    expect((await post({ object_types: ["post"] })).body.meta.error_message).toBe("Bad Request: 'type' is required");
    expect((await post({ type: "long_poll" })).body.meta.error_message).toBe("Bad Request: 'object_types' is required");
    expect((await post({ type: "long_poll", object_types: "post" })).body.meta.error_message).toMatch(/^Bad Request: 'object_types' must be an array/);
    expect((await post({ type: "long_poll", object_types: [] })).body.meta.error_message).toMatch(/'object_types' must list at least one/);
    for (const key of ["has space", "dash-key", "", "k".repeat(33), "ключ"]) {
      const res = await post({ type: "long_poll", object_types: ["post"], key });
      expect(res.status, key).toBe(400);
      expect(res.body.meta.error_message).toMatch(/^Bad Request: 'key' must be 1 to 32 letters, digits or underscores/);
    }
    await createStream(token, { object_types: ["post"], key: "k".repeat(32) });
    const taken = await post({ type: "long_poll", object_types: ["follow"], key: "k".repeat(32) });
    expect(taken.status).toBe(400);
    expect(taken.body.meta.error_message).toMatch(/'key' 'k+' is already used/);

    const put = (json: unknown) => call("PUT", `/streams/${"k".repeat(32)}`, { token, json });
    expect((await put({ object_types: ["bar"] })).body.meta.error_message).toBe("Bad Request: 'object_types' has unknown type 'bar'");
    expect((await put({ object_types: ["post"], key: "renamed" })).body.meta.error_message).toMatch(/'key' cannot be changed/);
    expect((await put({ object_types: ["post"], type: "other" })).status).toBe(400);
    expect((await call("PUT", "/streams/nope", { token, json: { object_types: ["post"] } })).status).toBe(404);
    const noJson = await call("POST", "/streams", { token, body: "{}", headers: { "Content-Type": "text/plain" } });
    expect(noJson.status).toBe(415);
  });

  it("needs an app token", async () => {
    const { token: user } = await actor();
    const { token } = await appWithToken();
    expect((await call("GET", "/streams")).status).toBe(401);
    expect((await call("GET", "/streams", { token: user })).status).toBe(403);
    expect((await call("POST", "/streams", { token: user, json: { type: "long_poll", object_types: ["post"] } })).status).toBe(403);
    expect((await call("DELETE", "/streams", { token: user })).status).toBe(403);
    expect((await call("GET", "/streams", { token })).status).toBe(200);
  });

  it("never lets concurrent creates make a sixth stream", async () => {
    const { token } = await appWithToken();
    const results = await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        call("POST", "/streams", { token, json: { type: "long_poll", object_types: ["post"], ...(i % 2 ? { key: `s${i}` } : {}) } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 400, 400]);
    for (const r of results.filter((r) => r.status === 400)) {
      expect(r.body.meta.error_message).toBe("Bad Request: an app can have at most 5 streams; delete one first");
    }
    const list = await call("GET", "/streams", { token });
    expect(list.body.data).toHaveLength(5);
    expect(new Set(list.body.data.map((s: any) => s.key)).size).toBe(5);
  });
});

describe("app stream sockets", () => {
  it("refuses plain GETs, wrong tokens and unknown keys", async () => {
    const { token } = await appWithToken();
    const { token: user } = await actor();
    await createStream(token, { object_types: ["post"], key: "k1" });
    const plain = await call("GET", `/app?key=k1&access_token=${token}`);
    expect(plain.status).toBe(400);
    expect(plain.body.meta.error_message).toMatch(/Upgrade: websocket/);
    expect(await openStream("/app?key=k1")).toMatchObject({ status: 401 });
    expect(await openStream("/app?key=k1", user)).toMatchObject({ status: 403 });
    expect(await openStream("/app?key=k1", "not-a-token")).toMatchObject({ status: 401 });
    expect(await openStream("/app?key=nope", token)).toMatchObject({ status: 404, body: { meta: { code: 404 } } });
    expect(await openStream("/app", token)).toMatchObject({ status: 400, body: { meta: { error_message: "Bad Request: 'key' is required" } } });
  });

  it("sends the first frame with the connection id and the stream", async () => {
    const { token } = await appWithToken();
    await createStream(token, { object_types: ["user_presence", "token"], key: "first" });
    const s = await socket("/app?key=first", token);
    const first = await s.next();
    expect(first).toEqual({
      meta: {
        connection_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        stream: { key: "first", endpoint: "ws://api.test/v1/app", object_types: ["user_presence", "token"] },
        cursor: expect.stringMatching(/^\d+$/),
      },
    });
    s.ws.send("ping");
    expect(await s.next((f) => f === "pong")).toBe("pong");
    s.ws.close(1000, "done");
  });

  it("allows at most 2 connections per stream key", async () => {
    const { token } = await appWithToken();
    await createStream(token, { object_types: ["post"], key: "two" });
    await createStream(token, { object_types: ["post"], key: "three" });
    const a = await socket("/app?key=two", token);
    const b = await socket("/app?key=two", token);
    const c = await openStream("/app?key=two", token);
    expect(c).toMatchObject({ status: 429, body: { meta: { code: 429, error_message: expect.stringMatching(/already has 2 connections/) } } });
    const other = await socket("/app?key=three", token);
    a.ws.close(1000);
    await a.closed;
    const again = await socket("/app?key=two", token);
    for (const s of [b, other, again]) s.ws.close(1000);
  });
});

describe("app stream events", () => {
  it("delivers an event of every object type after the matching write", async () => {
    const { app, s } = await appStream(OBJECT_TYPES);
    const [u1, u2, u3] = [await makeUser(), await makeUser(), await makeUser()];

    // token: granting a user token (and, at the end, deleting one)
    const t1 = await userToken(app, u1, ALL_SCOPES);
    const granted = await s.next(ofType("token", (f) => f.data.user?.id === u1.id));
    expect(granted.meta).toEqual({ type: "token", id: expect.any(String), timestamp: expect.any(Number) });
    expect(granted.data.app.id).toBe(app.client_id);
    expect(granted.data.scopes).toContain("write_post");
    const t2 = await userToken(app, u2, ALL_SCOPES);

    // post: arrives as a list
    const post = await call("POST", "/posts", { token: t1, json: { text: `hello @${u2.username}` } });
    expect(post.status, post.text).toBe(201);
    const postFrame = await s.next(ofType("post", (f) => f.data?.[0]?.id === post.body.data.id));
    expect(postFrame.data).toHaveLength(1);
    expect(postFrame.data[0].content.text).toBe(`hello @${u2.username}`);
    expect(postFrame.meta.is_deleted).toBeUndefined();

    const bookmark = await call("PUT", `/posts/${post.body.data.id}/bookmark`, { token: t2 });
    expect(bookmark.status, bookmark.text).toBe(200);
    await s.next(ofType("bookmark", (f) => f.data.user.id === u2.id && f.data.post.id === post.body.data.id));

    expect((await call("PUT", `/users/${u2.id}/follow`, { token: t1 })).status).toBe(200);
    await s.next(ofType("follow", (f) => f.data.user.id === u1.id && f.data.followed_user.id === u2.id));
    expect((await call("PUT", `/users/${u3.id}/mute`, { token: t1 })).status).toBe(200);
    await s.next(ofType("mute", (f) => f.data.user.id === u1.id && f.data.muted_user.id === u3.id));
    expect((await call("PUT", `/users/${u3.id}/block`, { token: t1 })).status).toBe(200);
    await s.next(ofType("block", (f) => f.data.user.id === u1.id && f.data.blocked_user.id === u3.id));

    const channel = await call("POST", "/channels", { token: t1, json: { type: "com.example.chat" } });
    expect(channel.status, channel.text).toBe(201);
    const chId = channel.body.data.id;
    await s.next(ofType("channel", (f) => f.data.id === chId));
    await s.next(ofType("channel_subscription", (f) => f.data.channel.id === chId && f.data.user.id === u1.id));
    const message = await call("POST", `/channels/${chId}/messages`, { token: t1, json: { text: "hi there" } });
    expect(message.status, message.text).toBe(201);
    const msgFrame = await s.next(ofType("message", (f) => f.data?.[0]?.id === message.body.data.id));
    expect(msgFrame.data[0].channel_id).toBe(chId);

    const file = await call("POST", "/files", { token: t1, json: { kind: "other", type: "com.example.test", name: "notes.txt" } });
    expect(file.status, file.text).toBe(201);
    await s.next(ofType("file", (f) => f.data.id === file.body.data.id));

    const poll = await call("POST", "/polls", { token: t1, json: { type: "com.example.poll", prompt: "Tea?", options: ["yes", "no"], is_public: true } });
    expect(poll.status, poll.text).toBe(201);
    await s.next(ofType("poll", (f) => f.data.poll.id === poll.body.data.id));

    expect((await call("PUT", "/users/me/presence", { token: t1, form: { presence: "writing tests" } })).status).toBe(200);
    const presence = await s.next(ofType("user_presence", (f) => f.data?.[0]?.id === u1.id));
    expect(presence.data[0].presence).toBe("writing tests");

    // No write publishes `user` (profile changes) or `user_channel_presence` yet: the sink itself.
    await viaRelay([
      { type: "user", data: { id: u1.id, username: u1.username }, timestamp: 1, route: { actorId: Number(u1.id) } },
      { type: "user_channel_presence", data: [{ id: u1.id, presence: "here" }], timestamp: 2, route: { channelId: Number(chId) } },
    ]);
    expect(await s.next(ofType("user", (f) => f.data.id === u1.id))).toEqual({
      meta: { type: "user", id: expect.stringMatching(/^\d+$/), timestamp: 1 },
      data: { id: u1.id, username: u1.username },
    });
    await s.next(ofType("user_channel_presence", (f) => f.data[0].id === u1.id));

    expect((await call("DELETE", "/token", { token: t2 })).status).toBe(200);
    const revoked = await s.next(ofType("token", (f) => f.data.user?.id === u2.id && f.meta.is_deleted === true));
    expect(revoked.meta.is_deleted).toBe(true);

    const seen = new Set(s.frames.map((f) => f.meta?.type).filter(Boolean));
    expect([...seen].sort()).toEqual([...OBJECT_TYPES].sort());
    s.ws.close(1000);
  });

  it("sends only the stream's object types, and post deletions with is_deleted", async () => {
    const { app, s } = await appStream(["post"]);
    const u = await makeUser();
    const t = await userToken(app, u, ALL_SCOPES);
    expect((await call("PUT", "/users/me/presence", { token: t, form: { presence: "busy" } })).status).toBe(200);
    const post = await call("POST", "/posts", { token: t, json: { text: "to be deleted" } });
    expect(post.status).toBe(201);
    await s.next(ofType("post", (f) => f.data[0].id === post.body.data.id && !f.meta.is_deleted));
    expect((await call("DELETE", `/posts/${post.body.data.id}`, { token: t })).status).toBe(200);
    const deleted = await s.next(ofType("post", (f) => f.data[0].id === post.body.data.id && f.meta.is_deleted));
    expect(deleted.meta.is_deleted).toBe(true);
    expect(s.frames.filter((f) => f.meta?.type && f.meta.type !== "post")).toEqual([]);
    s.ws.close(1000);
  });

  it("keeps a connected stream's object types until it reconnects", async () => {
    const { app, token, s: before } = await appStream(["token"], "swap");
    const u = await makeUser();
    const t = await userToken(app, u, "presence");
    await before.next(ofType("token", (f) => f.data.user.id === u.id));

    const put = await call("PUT", "/streams/swap", { token, json: { object_types: ["user_presence"] } });
    expect(put.body.data.object_types).toEqual(["user_presence"]);
    expect((await call("PUT", "/users/me/presence", { token: t, form: { presence: "first" } })).status).toBe(200);
    // The open socket still listens for tokens only: it gets the next grant, never the presence.
    await userToken(app, u, "presence");
    await before.next(ofType("token", (f) => f.data.user.id === u.id));
    expect(before.frames.some((f) => f.meta?.type === "user_presence")).toBe(false);

    before.ws.close(1000);
    await before.closed;
    const after = await socket("/app?key=swap", token);
    expect((await after.next()).meta.stream.object_types).toEqual(["user_presence"]);
    expect((await call("PUT", "/users/me/presence", { token: t, form: { presence: "second" } })).status).toBe(200);
    await after.next(ofType("user_presence", (f) => f.data[0].id === u.id && f.data[0].presence === "second"));
    await userToken(app, u, "presence");
    expect((await call("PUT", "/users/me/presence", { token: t, form: { presence: "third" } })).status).toBe(200);
    await after.next(ofType("user_presence", (f) => f.data[0].id === u.id && f.data[0].presence === "third"));
    expect(after.frames.some((f) => f.meta?.type === "token")).toBe(false);
    after.ws.close(1000);
  });

  it("sends private objects only to apps their users authorized", async () => {
    const a = await appStream(["mute", "token", "message"]);
    const b = await appStream(["mute", "token", "message"]);
    const [ua, ub, target] = [await makeUser(), await makeUser(), await makeUser()];
    const ta = await userToken(a.app, ua, ALL_SCOPES);
    const tb = await userToken(b.app, ub, ALL_SCOPES);
    await a.s.next(ofType("token", (f) => f.data.user.id === ua.id));
    await b.s.next(ofType("token", (f) => f.data.user.id === ub.id));

    expect((await call("PUT", `/users/${target.id}/mute`, { token: ta })).status).toBe(200);
    await a.s.next(ofType("mute", (f) => f.data.user.id === ua.id));
    expect((await call("PUT", `/users/${target.id}/mute`, { token: tb })).status).toBe(200);
    await b.s.next(ofType("mute", (f) => f.data.user.id === ub.id));

    const chA = (await call("POST", "/channels", { token: ta, json: { type: "com.example.private" } })).body.data.id;
    const chB = (await call("POST", "/channels", { token: tb, json: { type: "com.example.private" } })).body.data.id;
    expect((await call("POST", `/channels/${chA}/messages`, { token: ta, json: { text: "secret a" } })).status).toBe(201);
    expect((await call("POST", `/channels/${chB}/messages`, { token: tb, json: { text: "secret b" } })).status).toBe(201);
    await a.s.next(ofType("message", (f) => f.data[0].channel_id === chA));
    await b.s.next(ofType("message", (f) => f.data[0].channel_id === chB));
    // The other app's frames, published first through the same path, would have arrived first.
    await userToken(a.app, ua, "basic");
    await a.s.next(ofType("token", (f) => f.data.user.id === ua.id && f.data.scopes.length === 1));
    const users = (s: StreamSocket) => s.frames.map((f) => f.data?.user?.id ?? f.data?.[0]?.user?.id ?? f.data?.[0]?.user_id).filter(Boolean);
    expect(users(b.s)).not.toContain(ua.id);
    expect(users(a.s)).not.toContain(ub.id);
    expect(b.s.frames.some((f) => f.data?.[0]?.channel_id === chA)).toBe(false);
    a.s.ws.close(1000);
    b.s.ws.close(1000);
  });

  it("closes the connections of a deleted stream", async () => {
    const { token, s } = await appStream(["post"], "doomed");
    expect((await call("DELETE", "/streams/doomed", { token })).status).toBe(200);
    expect(await s.closed).toEqual({ code: 4001, reason: "stream deleted" });
    expect(await openStream("/app?key=doomed", token)).toMatchObject({ status: 404 });
  });

  it("closes sockets without a client message for 60 s; a ping counts", async () => {
    const { app, token, s: quiet } = await appStream(["post"], "idle");
    const pinging = await socket("/app?key=idle", token);
    await pinging.next();
    const { hub } = await appHubFor(env, Number(app.id), "idle");
    // Both sockets' last message moves 61 s into the past; then one of them pings.
    await runInDurableObject(hub, (_instance, state) => {
      for (const ws of state.getWebSockets(`k:${app.id}:idle`)) {
        ws.serializeAttachment({ ...ws.deserializeAttachment(), at: Date.now() - 61_000 });
      }
    });
    pinging.ws.send("ping");
    await pinging.next((f) => f === "pong");
    expect(await runDurableObjectAlarm(hub)).toBe(true);
    expect(await quiet.closed).toEqual({ code: 4000, reason: "idle: no client message for 60 seconds" });
    expect(pinging.ws.readyState).toBe(WebSocket.OPEN);
    pinging.ws.close(1000);
  });
});

describe("user streams", () => {
  it("refuses plain GETs and app tokens", async () => {
    const { token } = await actor();
    const { token: app } = await appWithToken();
    expect((await call("GET", `/user?access_token=${token}`)).status).toBe(400);
    expect(await openStream("/user")).toMatchObject({ status: 401 });
    expect(await openStream("/user", app)).toMatchObject({ status: 403 });
  });

  it("subscribes with connection_id, delivers with subscription_ids, unsubscribes and deletes", async () => {
    const { app, user, token, s, cid } = await userStream();
    const presenceSub = await subscribe("/presence?include_not_followed=1", token, cid);
    expect(await subscribe("/presence?include_not_followed=1", token, cid)).toBe(presenceSub);
    const tokenSub = await subscribe("/token", token, cid);
    const tokenRes = await call("GET", `/token?connection_id=${cid}`, { token });
    expect(tokenRes.body.data.user.id).toBe(user.id);
    expect(tokenRes.body.meta).toEqual({ code: 200, subscription_id: tokenSub });
    expect(await rowsOf(cid)).toHaveLength(2);

    const other = await actor("presence");
    expect((await call("PUT", "/users/me/presence", { token: other.token, form: { presence: "around" } })).status).toBe(200);
    const presence = await s.next((f) => f.meta?.type === "user_presence" && f.data[0].id === other.user.id);
    expect(presence.meta).toEqual({ type: "user_presence", id: expect.any(String), timestamp: expect.any(Number), subscription_ids: [presenceSub] });

    // token events: the user's tokens of this app only
    await userToken(await makeApp(), user, "basic");
    await userToken(app, user, "files");
    const granted = await s.next((f) => f.meta?.type === "token");
    expect(granted.meta.subscription_ids).toEqual([tokenSub]);
    expect(granted.data.scopes).toContain("files");
    expect(granted.data.app.id).toBe(app.client_id);

    expect((await call("DELETE", `/users/me/streams/${cid}/${presenceSub}`, { token })).status).toBe(204);
    expect((await call("GET", `/users/me/streams/${cid}/${presenceSub}`, { token })).status).toBe(404);
    expect(await rowsOf(cid)).toEqual([{ id: tokenSub, endpoint: "token", channel_id: null }]);
    expect((await call("PUT", "/users/me/presence", { token: other.token, form: { presence: "still around" } })).status).toBe(200);
    await userToken(app, user, "polls");
    await s.next((f) => f.meta?.type === "token" && f.data.scopes.includes("polls"));
    expect(s.frames.filter((f) => f.meta?.type === "user_presence")).toHaveLength(1);

    // GET works as DELETE, as the published examples use it
    expect((await call("GET", `/users/me/streams/${cid}/${tokenSub}`, { token })).status).toBe(204);
    const res = await call("DELETE", `/users/me/streams/${cid}`, { token });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect(await s.closed).toEqual({ code: 4001, reason: "stream deleted" });
    expect((await call("DELETE", `/users/me/streams/${cid}`, { token })).status).toBe(404);
    expect((await call("GET", `/presence?connection_id=${cid}`, { token })).status).toBe(400);
    expect(await rowsOf(cid)).toEqual([]);
  });

  it("checks the connection_id: the caller's own, open, user token, at most 16 subscriptions", async () => {
    const { user, token, s, cid } = await userStream();
    const stranger = await actor("presence");
    const { token: appTok } = await appWithToken();
    const foreign = await call("GET", `/presence?connection_id=${cid}`, { token: stranger.token });
    expect(foreign.status).toBe(400);
    expect(foreign.body.meta.error_message).toBe("Bad Request: 'connection_id' names no open user stream of this user");
    expect((await call("GET", `/presence?connection_id=abc`, { token })).status).toBe(400);
    expect((await call("GET", `/presence?connection_id=${cid}`, { token: appTok })).status).toBe(403);
    expect((await call("DELETE", `/users/me/streams/${cid}`, { token: stranger.token })).status).toBe(404);
    // Not a subscribable endpoint: connection_id is just ignored.
    expect((await call("GET", `/users/me?connection_id=${cid}`, { token })).body.meta.subscription_id).toBeUndefined();

    // A failing request makes no subscription (here: missing scope, unknown channel).
    const scopeless = await userToken(await makeApp(), user, "basic");
    const noScope = await socket("/user", scopeless);
    const noScopeCid = (await noScope.next()).meta.connection_id;
    expect((await call("GET", `/posts/streams/me?connection_id=${noScopeCid}`, { token: scopeless })).status).toBe(403);
    expect((await call("GET", `/channels/999999999/messages?connection_id=${cid}`, { token })).status).toBe(404);
    expect(await rowsOf(noScopeCid)).toEqual([]);
    expect(await rowsOf(cid)).toEqual([]);

    const hub = userHubFor(env, Number(user.id));
    for (let i = 1; i <= 15; i++)
      expect(await hub.subscribe(Number(user.id), cid, { endpoint: "channel_messages", channelId: i, targetId: null, flags: 0, params: {} }, 0)).toMatchObject({
        created: true,
      });
    await subscribe("/presence", token, cid);
    const full = await call("GET", `/token?connection_id=${cid}`, { token });
    expect(full.status).toBe(400);
    expect(full.body.meta.error_message).toBe("Bad Request: 'connection_id' already has 16 subscriptions");
    expect(await rowsOf(cid)).toHaveLength(16);
    for (const x of [s, noScope]) x.ws.close(1000);
  });

  it("routes posts to the author's and followers' streams and mentions, leaving out muted users", async () => {
    const reader = await userStream();
    const meSub = await subscribe("/posts/streams/me", reader.token, reader.cid);
    const unifiedSub = await subscribe("/posts/streams/unified", reader.token, reader.cid);
    const mentionsSub = await subscribe("/users/me/mentions", reader.token, reader.cid);
    const [followed, stranger, muted] = [await actor(ALL_SCOPES), await actor(ALL_SCOPES), await actor(ALL_SCOPES)];
    for (const u of [followed, muted]) expect((await call("PUT", `/users/${u.user.id}/follow`, { token: reader.token })).status).toBe(200);
    expect((await call("PUT", `/users/${muted.user.id}/mute`, { token: reader.token })).status).toBe(200);

    const postBy = async (a: { token: string }, text: string) => {
      const res = await call("POST", "/posts", { token: a.token, json: { text } });
      expect(res.status, res.text).toBe(201);
      return res.body.data.id as string;
    };
    const own = await postBy(reader, "my own post");
    expect((await reader.s.next((f) => f.data?.[0]?.id === own)).meta.subscription_ids.sort()).toEqual([meSub, unifiedSub].sort());
    await postBy(stranger, "nobody follows me");
    await postBy(muted, "muted, followed");
    const fromFollowed = await postBy(followed, "followed user's post");
    const f1 = await reader.s.next((f) => f.data?.[0]?.id === fromFollowed);
    expect(f1.meta.type).toBe("post");
    expect(f1.meta.subscription_ids.sort()).toEqual([meSub, unifiedSub].sort());
    const mention = await postBy(stranger, `hey @${reader.user.username}`);
    const f2 = await reader.s.next((f) => f.data?.[0]?.id === mention);
    expect(f2.meta.subscription_ids.sort()).toEqual([mentionsSub, unifiedSub].sort());
    const texts = reader.s.frames.filter((f) => f.meta?.type === "post").map((f) => f.data[0].content.text);
    expect(texts).toEqual(["my own post", "followed user's post", `hey @${reader.user.username}`]);
    reader.s.ws.close(1000);
  });

  it("routes channel messages, channel presence, files and profile changes to their subscriptions", async () => {
    const { user, token, s, cid } = await userStream();
    const ch = (await call("POST", "/channels", { token, json: { type: "com.example.chat" } })).body.data.id;
    const chSub = await subscribe(`/channels/${ch}/messages`, token, cid);
    const filesSub = await subscribe("/users/me/files", token, cid);
    const msg = await call("POST", `/channels/${ch}/messages`, { token, json: { text: "in the channel" } });
    expect(msg.status).toBe(201);
    const mf = await s.next((f) => f.meta?.type === "message");
    expect(mf.meta.subscription_ids).toEqual([chSub]);
    expect(mf.meta.channel_type).toBe("com.example.chat");
    expect(mf.data).toEqual([expect.objectContaining({ id: msg.body.data.id, channel_id: ch })]);
    const file = await call("POST", "/files", { token, json: { kind: "other", type: "com.example.test", name: "a.txt" } });
    expect(file.status).toBe(201);
    const ff = await s.next((f) => f.meta?.type === "file");
    expect(ff.meta.subscription_ids).toEqual([filesSub]);
    expect(ff.data.id).toBe(file.body.data.id);
    // Through the sink: channel presence goes to the channel's /presence subscriptions (the
    // user's own included), a profile change to the user's own /token subscriptions.
    const tokenSub = await subscribe("/token", token, cid);
    const presenceSub = await subscribe(`/channels/${ch}/presence`, token, cid);
    await viaRelay([
      { type: "user_channel_presence", data: [{ id: user.id, presence: "here" }], timestamp: 5, route: { channelId: Number(ch) } },
      { type: "user", data: { id: user.id }, timestamp: 6, route: { actorId: Number(user.id) } },
    ]);
    expect(await s.next((f) => f.meta?.type === "user_channel_presence")).toEqual({
      meta: { type: "user_channel_presence", id: expect.stringMatching(/^\d+$/), timestamp: 5, subscription_ids: [presenceSub], channel_id: ch },
      data: [{ id: user.id, presence: "here" }],
    });
    expect((await s.next((f) => f.meta?.type === "user")).meta.subscription_ids).toEqual([tokenSub]);
    s.ws.close(1000);
  });

  it("closes the connections of a deleted token after telling its /token subscription", async () => {
    const { token, s, cid } = await userStream("basic");
    const sub = await subscribe("/token", token, cid);
    expect((await call("DELETE", "/token", { token })).status).toBe(200);
    const revoked = await s.next((f) => f.meta?.type === "token");
    expect(revoked.meta).toMatchObject({ is_deleted: true, subscription_ids: [sub] });
    expect(await s.closed).toEqual({ code: 4003, reason: "access token deleted" });
    expect(await rowsOf(cid)).toEqual([]);
  });

  it("closes idle connections, keeping their subscriptions for a resume", async () => {
    const { user, token, s, cid } = await userStream();
    await subscribe("/presence", token, cid);
    const hub = userHubFor(env, Number(user.id));
    await runInDurableObject(hub, (_instance, state) => {
      for (const ws of state.getWebSockets(`c:${cid}`)) ws.serializeAttachment({ ...ws.deserializeAttachment(), at: Date.now() - 61_000 });
    });
    expect(await runDurableObjectAlarm(hub)).toBe(true);
    expect((await s.closed).code).toBe(4000);
    // Resumable for the replay window (test/api/stream-resume.test.ts): the subscription stays routed.
    expect(await rowsOf(cid)).toHaveLength(1);
  });
});
