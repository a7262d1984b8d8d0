import { describe, expect, it } from "vitest";
import { actor, call } from "../support/client";

// Every message and poll call of a client library written for the public service (pnut-butter's
// messages and polls modules), made as that library makes it: the same paths (including the older
// PUT /polls/{id}/response/{position}), query strings (lists joined with commas, camelCase
// parameter names turned to snake_case) and bodies (JSON only when there is data; PUT and DELETE
// without a body). Each must succeed against /v1 (issue 18).

const SCOPES = "basic stream write_post follow update_profile presence messages public_messages files polls";

describe("a client library's message and poll calls", { timeout: 60_000 }, () => {
  it("all succeed", async () => {
    const me = await actor(SCOPES);
    const other = await actor(SCOPES);
    const token = me.token;
    const channel = await call("POST", "/channels", { token, json: { type: "com.example.chat", acl: { read: { public: true }, write: { any_user: true } } } });
    expect(channel.status).toBe(201);
    const cid = channel.body.data.id;
    const first = await call("POST", `/channels/${cid}/messages`, { token, json: { text: "first" } });
    const mid = first.body.data.id;
    const reply = await call("POST", `/channels/${cid}/messages`, { token: other.token, json: { text: "second", reply_to: mid } });
    const rid = reply.body.data.id;

    const calls: [string, string, { json?: unknown }?][] = [
      // messages.js
      ["GET", `/channels/${cid}/messages/${mid}`],
      ["GET", `/channels/${cid}/messages/${mid}?include_raw=1`],
      ["GET", `/channels/${cid}/messages/${mid}/thread`],
      ["GET", `/channels/messages?ids=${mid},${rid}`],
      ["GET", `/channels/${cid}/messages`],
      ["GET", `/channels/${cid}/messages?count=5&include_deleted=0`],
      ["GET", "/users/me/messages"],
      ["POST", `/channels/${cid}/messages`, { json: { text: "A message" } }],
      ["POST", "/channels/pm/messages", { json: { destinations: [other.user.id], text: "A PM" } }],
      ["POST", "/channels/pm/messages", { json: { destinations: [Number(other.user.id)], text: "Another PM" } }],
      ["PUT", `/channels/${cid}/messages/${rid}/sticky`],
      ["GET", `/channels/${cid}/sticky_messages`],
      ["DELETE", `/channels/${cid}/messages/${rid}/sticky`],
      ["GET", `/channels/messages/search?channel_ids=${cid},${cid}`],
      ["GET", `/channels/messages/search?channel_ids=${cid}&q=first`],
      ["DELETE", `/channels/${cid}/messages/${rid}`],
    ];
    for (const [method, path, opts] of calls) {
      const res = await call(method, path, { token, ...opts });
      expect([200, 201], `${method} ${path}: ${res.text.slice(0, 200)}`).toContain(res.status);
    }

    // polls.js: createPoll with the library's own example, then its other calls on that poll.
    const created = await call("POST", "/polls", {
      token,
      json: { type: "com.example.site", prompt: "Do you like Pnut?", options: [{ text: "Yes" }, { text: "Of course" }], duration: "60", is_anonymous: "false" },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ is_anonymous: false, is_public: false });
    const pollId = created.body.data.id;
    const pollCalls: [string, string][] = [
      ["PUT", `/polls/${pollId}/response/2`],
      ["GET", `/polls/${pollId}`],
      ["GET", "/users/me/polls"],
      ["DELETE", `/polls/${pollId}`],
    ];
    for (const [method, path] of pollCalls) {
      const res = await call(method, path, { token });
      expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(200);
    }
    // Deleted through the library: gone afterwards.
    expect((await call("GET", `/polls/${pollId}`, { token })).status).toBe(404);
  });

  it("the response path records the chosen option", async () => {
    const me = await actor("polls");
    const created = await call("POST", "/polls", {
      token: me.token,
      json: { type: "com.example.site", prompt: "Do you like Pnut?", options: [{ text: "Yes" }, { text: "Of course" }], duration: "60", is_anonymous: "false" },
    });
    const res = await call("PUT", `/polls/${created.body.data.id}/response/2`, { token: me.token });
    expect(res.status).toBe(200);
    expect(res.body.data.options.map((o: any) => o.is_your_response)).toEqual([false, true]);
  });
});
