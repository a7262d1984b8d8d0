import { describe, expect, it } from "vitest";
import { actor, call, makeApp, makeUser, must, openStream, userToken } from "../support/client";
import { DB } from "../support/db";
import { ALL_SCOPES, appStream, eventsOf, socket, subscribe, userStream } from "../support/streams";

// Access is checked when an event is delivered, not only when a subscription was made: whoever
// may no longer read something (removed from a channel's ACL, blocked, muted, token deleted,
// user disabled) receives nothing of it on any stream from then on.

const post = async (token: string, text: string) => (await must(call("POST", "/posts", { token, json: { text } }), 201)).data.id as string;
/** Lets deliveries made in the same publish as a frame already seen by another socket land. */
const settle = () => new Promise((r) => setTimeout(r, 300));
const ofChannel = (ch: string) => (f: any) => JSON.stringify(f.data ?? null).includes(`"${ch}"`) || f.meta?.channel_id === ch;

/** A private channel of `owner` that `reader` may read (ACL read), `reader` subscribed to it. */
async function sharedChannel(owner: { token: string }, reader: { token: string; user: { id: string } }) {
  const json = { type: "com.example.chat", acl: { read: { any_user: false, public: false, user_ids: [reader.user.id] } } };
  const ch = (await must(call("POST", "/channels", { token: owner.token, json }), 201)).data.id as string;
  await must(call("PUT", `/channels/${ch}/subscribe`, { token: reader.token }));
  return ch;
}

/** Subscribes a connection to every endpoint about channel `ch`; the subscription ids. */
const subscribeChannel = async (ch: string, token: string, cid: string) => [
  await subscribe(`/channels/${ch}/messages`, token, cid),
  await subscribe(`/channels/${ch}/subscribers`, token, cid),
  await subscribe(`/channels/${ch}/presence?include_not_followed=1`, token, cid),
  await subscribe("/users/me/channels/subscribed", token, cid),
];

describe("channel access rechecked at delivery", () => {
  it("sends nothing of a private channel to a user removed from its ACL (messages, subscribers, presence, channel changes)", async () => {
    const owner = await userStream();
    const reader = await userStream();
    const ch = await sharedChannel(owner, reader);
    await subscribeChannel(ch, owner.token, owner.cid);
    await subscribeChannel(ch, reader.token, reader.cid);

    // While the reader may read the channel, its messages reach the reader's stream.
    await must(call("POST", `/channels/${ch}/messages`, { token: owner.token, json: { text: "before" } }), 201);
    expect((await reader.s.next((f) => f.meta?.type === "message" && f.data[0].content.text === "before")).meta.subscription_ids).toHaveLength(2);

    // The owner removes the reader from the ACL: REST reads now 404 for the reader.
    await must(call("PATCH", `/channels/${ch}`, { token: owner.token, json: { acl: { read: { user_ids: [] } } } }));
    expect((await call("GET", `/channels/${ch}/messages`, { token: reader.token })).status).toBe(404);
    const seen = eventsOf(reader.s).length;

    const third = await actor(ALL_SCOPES);
    await must(call("POST", `/channels/${ch}/messages`, { token: owner.token, json: { text: "after" } }), 201);
    await must(call("PATCH", `/channels/${ch}`, { token: owner.token, json: { acl: { read: { user_ids: [third.user.id] } } } }));
    await must(call("PUT", `/channels/${ch}/subscribe`, { token: third.token }));
    await must(call("PUT", `/users/me/presence/channels/${ch}`, { token: owner.token, json: { presence: "here" } }));
    await must(call("PATCH", `/channels/${ch}`, { token: owner.token, json: { raw: { "io.example.core.chat-settings": [{ name: "renamed" }] } } }));

    // The owner's stream receives every one of them (so they were delivered), the reader's none.
    await owner.s.next((f) => f.meta?.type === "message" && f.data[0].content.text === "after");
    await owner.s.next((f) => f.meta?.type === "channel_subscription" && f.data.user.id === third.user.id);
    const presence = await owner.s.next((f) => f.meta?.type === "user_channel_presence");
    // Frames are numbered per connection in delivery order: the rename is the channel event after the presence.
    await owner.s.next((f) => f.meta?.type === "channel" && Number(f.meta.id) > Number(presence.meta.id));
    await settle();
    expect(eventsOf(reader.s).slice(seen).filter(ofChannel(ch))).toEqual([]);
    owner.s.ws.close(1000);
    reader.s.ws.close(1000);
  });

  it("sends a channel's messages again to a user added back to its ACL", async () => {
    const owner = await actor(ALL_SCOPES);
    const reader = await userStream();
    const ch = await sharedChannel(owner, reader);
    const [messagesSub] = await subscribeChannel(ch, reader.token, reader.cid);
    await must(call("PATCH", `/channels/${ch}`, { token: owner.token, json: { acl: { read: { user_ids: [] } } } }));
    await must(call("PATCH", `/channels/${ch}`, { token: owner.token, json: { acl: { read: { user_ids: [reader.user.id] } } } }));
    await must(call("POST", `/channels/${ch}/messages`, { token: owner.token, json: { text: "welcome back" } }), 201);
    const frame = await reader.s.next((f) => f.meta?.type === "message");
    expect(frame.meta.subscription_ids).toContain(messagesSub);
    reader.s.ws.close(1000);
  });

  it("leaves app streams of a user removed from a private channel without its events", async () => {
    const owner = await actor(ALL_SCOPES);
    const { app, s } = await appStream(["message"]);
    // The reader authorized only `app`: the app hears of the channel through the reader alone.
    const readerUser = await makeUser();
    const reader = { user: readerUser, token: await userToken(app, readerUser, ALL_SCOPES) };
    const ch = await sharedChannel(owner, reader);
    await must(call("POST", `/channels/${ch}/messages`, { token: owner.token, json: { text: "seen by the app" } }), 201);
    await s.next((f) => f.meta?.type === "message" && f.data[0].content.text === "seen by the app");

    await must(call("PATCH", `/channels/${ch}`, { token: owner.token, json: { acl: { read: { user_ids: [] } } } }));
    await must(call("POST", `/channels/${ch}/messages`, { token: owner.token, json: { text: "not for the app" } }), 201);
    // A public post of the reader's, published after the message, is the fence.
    await post(reader.token, "fence");
    await settle();
    expect(s.frames.some((f) => f.meta?.type === "message" && f.data[0].content.text === "not for the app")).toBe(false);
    s.ws.close(1000);
  });
});

describe("subscribers rechecked at delivery", () => {
  /** A follower with an open stream subscribed to their home timeline, and the followed author. */
  async function follower() {
    const author = await actor(ALL_SCOPES);
    const reader = await userStream();
    await must(call("PUT", `/users/${author.user.id}/follow`, { token: reader.token }));
    const sub = await subscribe("/posts/streams/me", reader.token, reader.cid);
    await post(author.token, "visible");
    expect((await reader.s.next((f) => f.meta?.type === "post")).meta.subscription_ids).toEqual([sub]);
    return { author, reader };
  }

  /** The reader's stream receives none of the author's posts made after `change`, while the author's own stream does. */
  async function receivesNothingAfter(change: (a: Awaited<ReturnType<typeof follower>>) => Promise<unknown>) {
    const f = await follower();
    const own = await socket("/user", f.author.token);
    const cid = (await own.next()).meta.connection_id;
    await subscribe("/users/me/posts", f.author.token, cid);
    await change(f);
    const seen = eventsOf(f.reader.s).length;
    await post(f.author.token, "hidden");
    await own.next((fr) => fr.meta?.type === "post" && fr.data[0].content.text === "hidden");
    await settle();
    expect(eventsOf(f.reader.s).slice(seen)).toEqual([]);
    own.ws.close(1000);
    f.reader.s.ws.close(1000);
  }

  it("a block by the author", () => receivesNothingAfter(({ author, reader }) => must(call("PUT", `/users/${reader.user.id}/block`, { token: author.token }))));

  it("a mute by the reader", () => receivesNothingAfter(({ author, reader }) => must(call("PUT", `/users/${author.user.id}/mute`, { token: reader.token }))));

  it("a token deleted without its event reaching the stream (the row is gone)", () =>
    receivesNothingAfter(async ({ reader }) => {
      const tokenId = (await DB.prepare("SELECT token_id FROM stream_subscriptions WHERE connection_id = ?").bind(reader.cid).first<{ token_id: number }>())!
        .token_id;
      expect(tokenId).toBeGreaterThan(0);
      await DB.prepare("DELETE FROM tokens WHERE id = ?").bind(tokenId).run();
    }));

  it("a disabled user", () =>
    receivesNothingAfter(({ reader }) => DB.prepare("UPDATE users SET is_disabled = 1 WHERE id = ?").bind(Number(reader.user.id)).run()));
});

describe("user stream sockets per token", () => {
  it("accepts at most 10 open sockets per token; another token of the same user has its own 10", async () => {
    const app = await makeApp();
    const user = await makeUser();
    const token = await userToken(app, user, "stream");
    const open = [];
    for (let i = 0; i < 10; i++) open.push(await socket("/user", token));
    const refused = await openStream("/user", token);
    expect(refused).toMatchObject({
      status: 429,
      body: { meta: { code: 429, error_message: expect.stringMatching(/already has 10 open user stream sockets/) } },
    });

    const other = await socket("/user", await userToken(app, user, "stream"));
    // Resuming one of the token's own connections takes its socket over: not a further socket.
    const first = await open[0].next();
    const resumed = await socket(`/user?connection_id=${first.meta.connection_id}`, token);
    expect((await resumed.next()).meta.connection_id).toBe(first.meta.connection_id);
    // Closing one makes room for one.
    open[1].ws.close(1000);
    await open[1].closed;
    await new Promise((r) => setTimeout(r, 100));
    const again = await socket("/user", token);
    for (const s of [...open.slice(2), other, resumed, again]) s.ws.close(1000);
  });
});
