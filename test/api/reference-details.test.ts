import { describe, expect, it } from "vitest";
import { actor, call, makeUser, must, userToken } from "../support/client";
import { testClock } from "../support/fixtures";

// Small points where the public reference (pnut-api/api-spec v1.3.0) shows a shape or a form
// a client relies on (issue 29, item 6): the private-message channel's ACL and responding to a
// poll with `positions` in the query.

const tick = testClock(900_000, 5);

describe("the private-message channel's ACL (how-to/private-messages.md)", () => {
  it("lists every participant, the creator included, in `write`; nobody has full access", async () => {
    const a = await actor("messages");
    const b = await actor("messages");
    const c = await actor("messages");
    const sent = await must(
      call("POST", "/channels/pm/messages", { token: a.token, json: { destinations: [b.user.id, `@${c.user.username}`], text: "hi" }, now: tick() }),
      201,
    );
    const pm = sent.data.channel_id;
    const everyone = [a.user.id, b.user.id, c.user.id].sort((x, y) => Number(x) - Number(y));
    for (const who of [a, b]) {
      const ch = (await must(call("GET", `/channels/${pm}?include_limited_users=1`, { token: who.token }))).data;
      expect(ch.acl.full).toMatchObject({ immutable: true, you: false, user_ids: [] });
      expect(ch.acl.write).toMatchObject({ any_user: false, immutable: true, you: true, user_ids: everyone });
      expect(ch.acl.write.users.map((u: any) => u.id)).toEqual(everyone);
      expect(ch.acl.read).toMatchObject({ any_user: false, immutable: true, public: false, you: true, user_ids: [] });
    }
    // The same in lists and in existing_pm.
    const inbox = (await must(call("GET", "/users/me/channels/subscribed", { token: a.token }))).data;
    expect(inbox.find((x: any) => x.id === pm).acl.write.user_ids).toEqual(everyone);
    const existing = (await must(call("GET", `/users/me/channels/existing_pm?ids=${b.user.id},${c.user.id}`, { token: a.token }))).data;
    expect(existing.acl.write.user_ids).toEqual(everyone);
    // No full access: the creator cannot edit the channel (it is immutable anyway) but still
    // writes and sticks messages as every participant does.
    expect((await call("PUT", `/channels/${pm}`, { token: a.token, json: { raw: { "com.example.x": [{}] } }, now: tick() })).status).toBe(403);
    const m = await must(call("POST", `/channels/${pm}/messages`, { token: a.token, json: { text: "again" }, now: tick() }), 201);
    expect((await call("PUT", `/channels/${pm}/messages/${m.data.id}/sticky`, { token: b.token, now: tick() })).status).toBe(200);
    // An outsider still cannot see it.
    const outsider = await actor("messages");
    expect((await call("GET", `/channels/${pm}`, { token: outsider.token })).status).toBe(404);
  });
});

describe("PUT /polls/{id}/response with `positions` in the query (resources/polls/lifecycle.md)", () => {
  const NEW = {
    type: "com.example.poll",
    prompt: "Tea or coffee?",
    options: [{ text: "Tea" }, { text: "Coffee" }, { text: "Water" }],
    max_options: 2,
    is_public: true,
  };

  it("takes positions comma-separated or repeated, without a body; the query wins over a body", async () => {
    const creator = await actor("polls");
    const poll = (await must(call("POST", "/polls", { token: creator.token, json: NEW, now: tick() }), 201)).data;
    const voter = await userToken(creator.app, await makeUser(), "polls");
    const mine = (r: any) => r.body.data.options.map((o: any) => o.is_your_response);

    const csv = await call("PUT", `/polls/${poll.id}/response?positions=1,3`, { token: voter, now: tick() });
    expect(csv.status, csv.text).toBe(200);
    expect([csv.status, mine(csv)]).toEqual([200, [true, false, true]]);
    const repeated = await call("PUT", `/polls/${poll.id}/response?positions=2&positions=3`, { token: voter, now: tick() });
    expect(mine(repeated)).toEqual([false, true, true]);
    const brackets = await call("PUT", `/polls/${poll.id}/response?positions[]=1`, { token: voter, now: tick() });
    expect(mine(brackets)).toEqual([true, false, false]);
    const both = await call("PUT", `/polls/${poll.id}/response?positions=2`, { token: voter, json: { positions: [1] }, now: tick() });
    expect(mine(both)).toEqual([false, true, false]);
    const body = await call("PUT", `/polls/${poll.id}/response`, { token: voter, json: { positions: [3] }, now: tick() });
    expect(mine(body)).toEqual([false, false, true]);
    expect((await must(call("GET", `/polls/${poll.id}`, { token: voter }))).data.options.map((o: any) => o.is_your_response)).toEqual([false, false, true]);

    for (const [query, json, text] of [
      ["?positions=x", undefined, "'positions'"],
      ["?positions=1,2,3", undefined, "max_options"],
      ["?positions=4", undefined, "'positions'"],
      ["", undefined, "'positions' is required"],
      ["", {}, "'positions' is required"],
    ] as const) {
      const res = await call("PUT", `/polls/${poll.id}/response${query}`, { token: voter, ...(json ? { json } : {}), now: tick() });
      expect([res.status, res.body.meta.error_message], `${query} ${JSON.stringify(json)}`).toEqual([400, expect.stringContaining(text)]);
    }
  });
});
