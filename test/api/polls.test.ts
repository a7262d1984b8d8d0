import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { renderPollEvent } from "../../src/views/poll";
import type { LoadedPoll } from "../../src/stores/polls";
import { actor, appToken, call, makeApp, makeUser, openStream, userToken, type TestApp } from "../support/client";
import { DB } from "../support/db";

/** The test clock starts at real time, so alarms the polls arm do not fire during the run. */
const T0 = Math.floor(Date.now() / 1000);
const DAY = 86400;

const NEW = { type: "com.example.poll", prompt: "Tea or coffee?", options: [{ text: "Tea" }, { text: "Coffee" }, { text: "Water" }] };

async function createPoll(token: string, fields: Record<string, unknown> = {}, now = T0) {
  const res = await call("POST", "/polls", { token, json: { ...NEW, ...fields }, now });
  if (res.status !== 201) throw new Error(`createPoll: ${res.status} ${res.text}`);
  return res.body.data;
}

/** Another user of the same app, with a token for the given scopes. */
async function other(app: TestApp, scope = "polls", fields: Record<string, unknown> = {}) {
  const user = await makeUser(fields);
  return { user, token: await userToken(app, user, scope) };
}

const respond = (token: string, id: string, positions: unknown, opts: { now?: number; query?: string; json?: Record<string, unknown> } = {}) =>
  call("PUT", `/polls/${id}/response${opts.query ?? ""}`, { token, json: { positions, ...opts.json }, now: opts.now ?? T0 + 10 });

describe("POST /polls", () => {
  it("creates a private, anonymous poll by default and shows its poll_token to the creator", async () => {
    const { app, user, token } = await actor("polls");
    const res = await call("POST", "/polls", { token, json: NEW, now: T0 });
    expect(res.status).toBe(201);
    expect(res.body.meta.code).toBe(201);
    const poll = res.body.data;
    expect(poll).toMatchObject({
      type: "com.example.poll",
      prompt: "Tea or coffee?",
      is_anonymous: true,
      is_public: false,
      max_options: 1,
      source: { id: app.client_id, name: app.name },
      user: { id: user.id, username: user.username },
    });
    expect(poll.id).toMatch(/^\d+$/);
    expect(poll.poll_token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(Date.parse(poll.created_at) / 1000).toBe(T0);
    expect(Date.parse(poll.closed_at) / 1000).toBe(T0 + 1440 * 60);
    expect(poll.options).toEqual([
      { text: "Tea", position: 1, is_your_response: false },
      { text: "Coffee", position: 2, is_your_response: false },
      { text: "Water", position: 3, is_your_response: false },
    ]);
  });

  it("takes duration in minutes (numeric strings too), closed_at, string flags and explicit option positions", async () => {
    const { token } = await actor("polls");
    const a = await createPoll(token, { duration: "90", is_anonymous: "false", is_public: "true", max_options: 2 });
    expect(Date.parse(a.closed_at) / 1000).toBe(T0 + 90 * 60);
    expect(a).toMatchObject({ is_anonymous: false, is_public: true, max_options: 2 });
    const closedAt = new Date((T0 + 3 * DAY) * 1000).toISOString();
    const b = await createPoll(token, {
      closed_at: closedAt,
      options: [
        { text: "B", position: 2 },
        { text: "A", position: 1 },
        { text: "C", position: 3 },
      ],
    });
    expect(Date.parse(b.closed_at)).toBe(Date.parse(closedAt.slice(0, 19) + "Z"));
    expect(b.options.map((o: any) => [o.position, o.text])).toEqual([
      [1, "A"],
      [2, "B"],
      [3, "C"],
    ]);
    const c = await createPoll(token, { options: ["yes", "no"] });
    expect(c.options.map((o: any) => o.text)).toEqual(["yes", "no"]);
  });

  it("counts prompt and option length in code points, not UTF-16 units", async () => {
    const { token } = await actor("polls");
    const emoji = "😀"; // 2 UTF-16 units, 1 code point
    const ok = await call("POST", "/polls", {
      token,
      json: { ...NEW, prompt: emoji.repeat(256), options: [{ text: emoji.repeat(64) }, { text: "x" }] },
      now: T0,
    });
    expect(ok.status).toBe(201);
    expect([...ok.body.data.prompt].length).toBe(256);
    const longPrompt = await call("POST", "/polls", { token, json: { ...NEW, prompt: emoji.repeat(257) }, now: T0 });
    expect(longPrompt.status).toBe(400);
    expect(longPrompt.body.meta.error_message).toContain("'prompt'");
    const longOption = await call("POST", "/polls", { token, json: { ...NEW, options: [{ text: "a".repeat(65) }, { text: "b" }] }, now: T0 });
    expect(longOption.status).toBe(400);
    expect(longOption.body.meta.error_message).toContain("'options.0.text'");
  });

  it.each([
    [{ prompt: "   " }, "'prompt'"],
    [{ prompt: undefined }, "'prompt'"],
    [{ options: [{ text: "only" }] }, "'options'"],
    [{ options: Array.from({ length: 11 }, (_, i) => ({ text: `o${i}` })) }, "'options'"],
    [{ options: [{ text: "a" }, { text: "" }] }, "'options.1.text'"],
    [{ options: [{ text: "a" }, 5] }, "'options.1.text'"],
    [
      {
        options: [
          { text: "a", position: 1 },
          { text: "b", position: 1 },
        ],
      },
      "'options' positions",
    ],
    [{ duration: 0 }, "'duration'"],
    [{ duration: 20161 }, "'duration'"],
    [{ duration: 1.5 }, "'duration'"],
    [{ closed_at: "tomorrow" }, "'closed_at'"],
    [{ closed_at: new Date((T0 + 30) * 1000).toISOString() }, "'closed_at'"],
    [{ closed_at: new Date((T0 + 15 * DAY) * 1000).toISOString() }, "'closed_at'"],
    [{ duration: 60, closed_at: new Date((T0 + DAY) * 1000).toISOString() }, "'duration' or 'closed_at'"],
    [{ max_options: 0 }, "'max_options'"],
    [{ max_options: 4 }, "'max_options'"],
    [{ type: "nodots" }, "'type'"],
    [{ type: 7 }, "'type'"],
    [{ is_public: "maybe" }, "'is_public'"],
  ])("refuses %j with a 400 naming the field", async (fields, field) => {
    const { token } = await actor("polls");
    const res = await call("POST", "/polls", { token, json: { ...NEW, ...fields }, now: T0 });
    expect(res.status).toBe(400);
    expect(res.body.meta.error_message).toContain(field);
    expect(res.body).not.toHaveProperty("data");
  });

  it("needs a user token with the polls scope; polls:<type> covers only that type", async () => {
    const none = await actor("basic");
    expect((await call("POST", "/polls", { token: none.token, json: NEW, now: T0 })).status).toBe(403);
    expect((await call("POST", "/polls", { json: NEW, now: T0 })).status).toBe(401);
    expect((await call("POST", "/polls", { token: await appToken(none.app), json: NEW, now: T0 })).status).toBe(403);
    const narrow = await actor("polls:com.example.poll");
    expect((await call("POST", "/polls", { token: narrow.token, json: NEW, now: T0 })).status).toBe(201);
    const wrongType = await call("POST", "/polls", { token: narrow.token, json: { ...NEW, type: "com.example.other" }, now: T0 });
    expect(wrongType.status).toBe(403);
    expect(wrongType.body.meta.error_message).toContain("com.example.other");
  });

  it("refuses a non-JSON body with 415", async () => {
    const { token } = await actor("polls");
    const res = await call("POST", "/polls", { token, form: { type: "com.example.poll" }, now: T0 });
    expect(res.status).toBe(415);
  });
});

describe("access to private and public polls", () => {
  it("needs the poll_token on a private poll unless the caller created or responded to it", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: false });
    const stranger = await other(creator.app);

    const missing = await call("GET", `/polls/${poll.id}`, { token: stranger.token, now: T0 + 5 });
    expect(missing.status).toBe(403);
    expect(missing.body.meta.error_message).toContain("'poll_token'");
    const wrong = await call("GET", `/polls/${poll.id}?poll_token=nope`, { token: stranger.token, now: T0 + 5 });
    expect(wrong.status).toBe(403);

    const right = await call("GET", `/polls/${poll.id}?poll_token=${poll.poll_token}`, { token: stranger.token, now: T0 + 5 });
    expect(right.status).toBe(200);
    expect(right.body.data.id).toBe(poll.id);
    expect(right.body.data).not.toHaveProperty("poll_token");

    const own = await call("GET", `/polls/${poll.id}`, { token: creator.token, now: T0 + 5 });
    expect(own.status).toBe(200);
    expect(own.body.data.poll_token).toBe(poll.poll_token);

    // Responding also needs the token; afterwards access is guaranteed without it.
    expect((await respond(stranger.token, poll.id, [1])).status).toBe(403);
    expect((await respond(stranger.token, poll.id, [1], { query: "?poll_token=bad" })).status).toBe(403);
    expect((await respond(stranger.token, poll.id, [1], { query: `?poll_token=${poll.poll_token}` })).status).toBe(200);
    const after = await call("GET", `/polls/${poll.id}`, { token: stranger.token, now: T0 + 20 });
    expect(after.status).toBe(200);
    expect(after.body.data.options[0].is_your_response).toBe(true);

    // The token may also come in the JSON body.
    const third = await other(creator.app);
    expect((await respond(third.token, poll.id, [2], { json: { poll_token: poll.poll_token } })).status).toBe(200);
  });

  it("opens a public poll to any user token with the polls scope, without poll_token", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true });
    const reader = await other(creator.app);
    const res = await call("GET", `/polls/${poll.id}`, { token: reader.token, now: T0 + 5 });
    expect(res.status).toBe(200);
    expect(res.body.data).not.toHaveProperty("poll_token");
    expect((await respond(reader.token, poll.id, [3])).status).toBe(200);
  });

  it("requires a user token with polls for every lookup", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true });
    const noScope = await other(creator.app, "basic");
    const app = await appToken(creator.app);
    for (const path of [`/polls/${poll.id}`, `/polls?ids=${poll.id}`, "/users/me/polls", "/users/me/polls/responses"]) {
      expect((await call("GET", path, { token: noScope.token, now: T0 })).status, path).toBe(403);
      expect((await call("GET", path, { token: app, now: T0 })).status, path).toBe(403);
      expect((await call("GET", path, { now: T0 })).status, path).toBe(401);
    }
    const narrow = await other(creator.app, "polls:com.example.other");
    const res = await call("GET", `/polls/${poll.id}`, { token: narrow.token, now: T0 });
    expect(res.status).toBe(403);
    expect((await call("GET", `/polls?ids=${poll.id}`, { token: narrow.token, now: T0 })).body.data).toEqual([]);
  });

  it("answers 404 for unknown polls and 400 for ids that are not integers", async () => {
    const { token } = await actor("polls");
    expect((await call("GET", "/polls/999999999", { token, now: T0 })).status).toBe(404);
    const bad = await call("GET", "/polls/abc", { token, now: T0 });
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("'poll_id'");
    const badIds = await call("GET", "/polls?ids=1,x", { token, now: T0 });
    expect(badIds.status).toBe(400);
    expect(badIds.body.meta.error_message).toContain("'ids'");
    expect((await call("GET", "/polls", { token, now: T0 })).status).toBe(400);
  });
});

describe("PUT /polls/{id}/response", () => {
  it("validates positions against the options and max_options, and lets a response change or clear", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true, max_options: 2, is_anonymous: false });
    const voter = await other(creator.app);
    for (const [positions, text] of [
      [[4], "'positions'"],
      [[0], "'positions'"],
      [[1, 1], "'positions'"],
      [[1, 2, 3], "max_options"],
      [["1"], "'positions"],
      ["1", "'positions'"],
    ] as const) {
      const res = await respond(voter.token, poll.id, positions);
      expect(res.status, JSON.stringify(positions)).toBe(400);
      expect(res.body.meta.error_message).toContain(text);
    }
    const two = await respond(voter.token, poll.id, [3, 1]);
    expect(two.status).toBe(200);
    expect(two.body.data.options.map((o: any) => o.is_your_response)).toEqual([true, false, true]);
    expect(two.body.data.options[0]).not.toHaveProperty("respondents");
    const changed = await respond(voter.token, poll.id, [2]);
    expect(changed.body.data.options.map((o: any) => o.is_your_response)).toEqual([false, true, false]);
    const cleared = await respond(voter.token, poll.id, []);
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.options.map((o: any) => o.is_your_response)).toEqual([false, false, false]);
    const again = await respond(voter.token, poll.id, [1]);
    expect(again.status).toBe(200);

    // Counts once closed: only the final choice of each respondent counts.
    const closed = await call("GET", `/polls/${poll.id}`, { token: creator.token, now: T0 + 2 * DAY });
    expect(closed.body.data.options.map((o: any) => o.respondents)).toEqual([1, 0, 0]);
    expect(closed.body.data.options.map((o: any) => o.respondent_ids)).toEqual([[voter.user.id], [], []]);
  });

  it("refuses responses once closed_at passes (injectable clock)", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true, duration: 10 });
    const voter = await other(creator.app);
    expect((await respond(voter.token, poll.id, [1], { now: T0 + 599 })).status).toBe(200);
    const late = await respond(voter.token, poll.id, [2], { now: T0 + 600 });
    expect(late.status).toBe(400);
    expect(late.body.meta.error_message).toMatch(/closed/);
    const res = await call("GET", `/polls/${poll.id}`, { token: voter.token, now: T0 + 600 });
    expect(res.body.data.options.map((o: any) => [o.is_your_response, o.respondents])).toEqual([
      [true, 1],
      [false, 0],
      [false, 0],
    ]);
  });

  it("lets only human accounts respond", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true });
    const bot = await other(creator.app, "polls", { type: "bot" });
    const res = await respond(bot.token, poll.id, [1]);
    expect(res.status).toBe(403);
    expect(res.body.meta.error_message).toMatch(/human/);
  });

  it("keeps option counters exact under concurrent responses", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true, is_anonymous: false, max_options: 2 });
    const voters = await Promise.all(Array.from({ length: 8 }, () => other(creator.app)));
    const results = await Promise.all(voters.map((v, i) => respond(v.token, poll.id, i % 2 ? [1, 2] : [1])));
    expect(results.map((r) => r.status)).toEqual(voters.map(() => 200));
    // Half of them change their minds at the same time.
    await Promise.all(voters.slice(0, 4).map((v) => respond(v.token, poll.id, [3], { now: T0 + 20 })));
    const res = await call("GET", `/polls/${poll.id}`, { token: creator.token, now: T0 + 2 * DAY });
    expect(res.body.data.options.map((o: any) => o.respondents)).toEqual([4, 2, 4]);
    expect(res.body.data.options[2].respondent_ids.sort()).toEqual(
      voters
        .slice(0, 4)
        .map((v) => v.user.id)
        .sort(),
    );
  });

  it("records a poll_response interaction for the poll's creator in the same write", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true });
    const voter = await other(creator.app);
    await respond(voter.token, poll.id, [1]);
    await respond(voter.token, poll.id, [2], { now: T0 + 30 }); // a change is not a new interaction
    await respond(creator.token, poll.id, [1]); // nor is the creator's own response
    const rows = await DB.prepare(
      `select g.action, g.object_id, e.actor_id from interaction_groups g join interaction_events e on e.group_id = g.id
       where g.user_id = ? order by e.id`,
    )
      .bind(Number(creator.user.id))
      .all();
    expect(rows.results).toEqual([{ action: "poll_response", object_id: Number(poll.id), actor_id: Number(voter.user.id) }]);
  });

  it("answers 404 for a deleted poll", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true });
    await call("DELETE", `/polls/${poll.id}`, { token: creator.token, now: T0 + 1 });
    expect((await respond(creator.token, poll.id, [1])).status).toBe(404);
  });
});

describe("anonymity", () => {
  it("never reveals who responded to an anonymous poll, before or after it closes", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true, is_anonymous: true, duration: 60 });
    const voters = await Promise.all([other(creator.app), other(creator.app)]);
    await respond(voters[0].token, poll.id, [1]);
    await respond(voters[1].token, poll.id, [2]);
    const ids = voters.map((v) => v.user.id);

    const open = await call("GET", `/polls/${poll.id}`, { token: creator.token, now: T0 + 30 });
    for (const o of open.body.data.options) {
      expect(o).not.toHaveProperty("respondents");
      expect(o).not.toHaveProperty("respondent_ids");
    }
    const closed = await call("GET", `/polls/${poll.id}`, { token: creator.token, now: T0 + 3600 });
    expect(closed.body.data.options.map((o: any) => o.respondents)).toEqual([1, 1, 0]);
    for (const o of closed.body.data.options) expect(o).not.toHaveProperty("respondent_ids");

    const list = await call("GET", `/polls?ids=${poll.id}`, { token: creator.token, now: T0 + 3600 });
    const mine = await call("GET", "/users/me/polls", { token: creator.token, now: T0 + 3600 });
    const responses = await call("GET", `/users/me/polls/responses?ids=${poll.id}`, { token: creator.token, now: T0 + 3600 });
    expect(responses.body.data).toHaveLength(2);
    for (const item of responses.body.data) expect(item).not.toHaveProperty("user");
    for (const body of [closed.text, list.text, mine.text, responses.text]) {
      for (const id of ids) expect(body).not.toContain(`"${id}"`);
    }
  });

  it("names respondents of a non-anonymous poll only once it is closed", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true, is_anonymous: false, duration: 60 });
    const voter = await other(creator.app);
    await respond(voter.token, poll.id, [2]);
    const open = await call("GET", `/polls/${poll.id}`, { token: voter.token, now: T0 + 3599 });
    expect(open.body.data.options[1]).toEqual({ text: "Coffee", position: 2, is_your_response: true });
    const closed = await call("GET", `/polls/${poll.id}`, { token: voter.token, now: T0 + 3600 });
    expect(closed.body.data.options[1]).toEqual({ text: "Coffee", position: 2, is_your_response: true, respondents: 1, respondent_ids: [voter.user.id] });
  });

  it("leaves the respondent out of poll events of anonymous polls (the creator stays named)", async () => {
    const creator = await makeUser();
    const responder = await makeUser();
    const loaded = (isAnonymous: boolean): LoadedPoll => ({
      poll: {
        id: 1,
        userId: Number(creator.id),
        appId: 1,
        type: "com.example.poll",
        prompt: "?",
        content: null,
        isAnonymous,
        isPublic: true,
        maxOptions: 1,
        pollToken: "secret",
        isDeleted: false,
        raw: null,
        createdAt: T0,
        closedAt: T0 + 60,
      },
      user: { ...creator, id: Number(creator.id), createdAt: T0, bookmarks: 0, clients: 0, followers: 0, following: 0, posts: 0 } as any,
      app: null,
      myPositions: [1],
      options: [{ position: 1, text: "a", respondents: 1 }],
      respondentIds: new Map([[1, [Number(responder.id)]]]),
    });
    const view = { viewerId: Number(responder.id), schemaBase: "https://schema.example.io", origin: "https://api.test", now: T0 + 120 };
    const asUser = { ...(responder as any), id: Number(responder.id), createdAt: T0, bookmarks: 0, clients: 0, followers: 0, following: 0, posts: 0 };
    const anon = renderPollEvent(loaded(true), asUser, view);
    expect(anon).not.toHaveProperty("user");
    expect(JSON.stringify(anon)).not.toContain(`"${responder.id}"`);
    expect(anon.poll).not.toHaveProperty("poll_token");
    expect(anon.poll.options[0]).not.toHaveProperty("is_your_response");
    expect(renderPollEvent(loaded(true), loaded(true).user, view).user?.id).toBe(creator.id);
    const named = renderPollEvent(loaded(false), asUser, view);
    expect(named.user?.id).toBe(responder.id);
    expect(named.poll.options[0].respondent_ids).toEqual([responder.id]);
  });
});

describe("GET /polls?ids=", () => {
  it("returns the polls asked for in order, leaving out those the caller cannot open", async () => {
    const creator = await actor("polls");
    const pub = await createPoll(creator.token, { is_public: true });
    const priv = await createPoll(creator.token, { is_public: false });
    const priv2 = await createPoll(creator.token, { is_public: false });
    const gone = await createPoll(creator.token, { is_public: true });
    await call("DELETE", `/polls/${gone.id}`, { token: creator.token, now: T0 + 1 });
    const reader = await other(creator.app);
    const ids = [priv.id, gone.id, pub.id, "999999999", priv2.id].join(",");

    const without = await call("GET", `/polls?ids=${ids}`, { token: reader.token, now: T0 + 5 });
    expect(without.status).toBe(200);
    expect(without.body.data.map((p: any) => p.id)).toEqual([pub.id]);

    const withToken = await call("GET", `/polls?ids=${ids}&poll_token_${priv2.id}=${priv2.poll_token}&poll_token_${priv.id}=wrong`, {
      token: reader.token,
      now: T0 + 5,
    });
    expect(withToken.body.data.map((p: any) => p.id)).toEqual([pub.id, priv2.id]);
    for (const p of withToken.body.data) expect(p).not.toHaveProperty("poll_token");

    const own = await call("GET", `/polls?ids=${ids}`, { token: creator.token, now: T0 + 5 });
    expect(own.body.data.map((p: any) => p.id)).toEqual([priv.id, pub.id, priv2.id]);
  });

  it(`returns at most the first 100 found`, async () => {
    const creator = await actor("polls");
    const app = await DB.prepare("select id from apps where client_id = ?").bind(creator.app.client_id).first<{ id: number }>();
    const inserts = Array.from({ length: 105 }, (_, i) =>
      DB.prepare(
        `insert into polls (user_id, app_id, type, prompt, is_anonymous, is_public, max_options, poll_token, created_at, closed_at)
         values (?, ?, 'com.example.poll', ?, 1, 1, 1, 'tok', ?, ?) returning id`,
      ).bind(Number(creator.user.id), app!.id, `seeded ${i}`, T0, T0 + DAY),
    );
    const ids = (await DB.batch<{ id: number }>(inserts)).map((r) => r.results[0].id);
    await DB.batch(
      ids.flatMap((id) => [1, 2].map((pos) => DB.prepare("insert into poll_options (poll_id, position, text) values (?, ?, ?)").bind(id, pos, `o${pos}`))),
    );
    const reader = await other(creator.app);
    const asked = ["999999998", ...ids.map(String).reverse()];
    const res = await call("GET", `/polls?ids=${asked.join(",")}`, { token: reader.token, now: T0 + 5 });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(100);
    expect(res.body.data.map((p: any) => p.id)).toEqual(asked.slice(1, 101));
    expect(res.body.data[0].options).toHaveLength(2);
  });
});

describe("DELETE /polls/{id}", () => {
  it("lets only the creator delete; a deleted poll is gone everywhere", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true });
    const stranger = await other(creator.app);
    const refused = await call("DELETE", `/polls/${poll.id}`, { token: stranger.token, now: T0 + 1 });
    expect(refused.status).toBe(403);
    const res = await call("DELETE", `/polls/${poll.id}`, { token: creator.token, now: T0 + 1 });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: poll.id, is_deleted: true, prompt: poll.prompt });
    expect((await call("GET", `/polls/${poll.id}`, { token: creator.token, now: T0 + 2 })).status).toBe(404);
    expect((await call("DELETE", `/polls/${poll.id}`, { token: creator.token, now: T0 + 2 })).status).toBe(404);
    const mine = await call("GET", "/users/me/polls", { token: creator.token, now: T0 + 2 });
    expect(mine.body.data.map((p: any) => p.id)).not.toContain(poll.id);
  });
});

describe("GET /users/me/polls", () => {
  it("pages the caller's own polls newest first, with their poll_tokens", async () => {
    const creator = await actor("polls");
    const polls = [];
    for (let i = 0; i < 3; i++) polls.push(await createPoll(creator.token, { prompt: `p${i}`, is_public: i === 0 }));
    const otherUser = await other(creator.app);
    await createPoll(otherUser.token);

    const first = await call("GET", "/users/me/polls?count=2", { token: creator.token, now: T0 + 5 });
    expect(first.status).toBe(200);
    expect(first.body.data.map((p: any) => p.prompt)).toEqual(["p2", "p1"]);
    expect(first.body.meta).toMatchObject({ code: 200, more: true, max_id: polls[2].id, min_id: polls[1].id });
    expect(first.body.data[0]).toMatchObject({ pagination_id: polls[2].id, poll_token: polls[2].poll_token });
    const next = await call("GET", `/users/me/polls?count=2&before_id=${first.body.meta.min_id}`, { token: creator.token, now: T0 + 5 });
    expect(next.body.data.map((p: any) => p.prompt)).toEqual(["p0"]);
    expect(next.body.meta.more).toBe(false);
    const oldest = await call("GET", "/users/me/polls?count=-1", { token: creator.token, now: T0 + 5 });
    expect(oldest.body.data.map((p: any) => p.prompt)).toEqual(["p0"]);
  });
});

describe("GET /users/me/polls/responses", () => {
  it("lists responses to the caller's polls as abbreviated polls, newest first, with an ids filter", async () => {
    const creator = await actor("polls");
    const a = await createPoll(creator.token, { is_public: true, is_anonymous: false, prompt: "A?" });
    const b = await createPoll(creator.token, { is_public: true, is_anonymous: false, prompt: "B?" });
    const [v1, v2] = await Promise.all([other(creator.app), other(creator.app)]);
    await respond(v1.token, a.id, [1], { now: T0 + 10 });
    await respond(v2.token, b.id, [2], { now: T0 + 20 });
    await respond(v2.token, a.id, [2], { now: T0 + 30 });
    await respond(v1.token, b.id, [1], { now: T0 + 40 });
    await respond(v1.token, b.id, [], { now: T0 + 50 }); // cleared: no longer a response

    const res = await call("GET", "/users/me/polls/responses", { token: creator.token, now: T0 + 60 });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: any) => [r.prompt, r.user.id])).toEqual([
      ["A?", v2.user.id],
      ["B?", v2.user.id],
      ["A?", v1.user.id],
    ]);
    const item = res.body.data[0];
    expect(item).toEqual({
      id: a.id,
      prompt: "A?",
      closed_at: a.closed_at,
      created_at: new Date((T0 + 30) * 1000).toISOString().slice(0, 19) + "Z",
      poll_token: a.poll_token,
      options: [
        { text: "Tea", position: 1 },
        { text: "Coffee", position: 2 },
        { text: "Water", position: 3 },
      ],
      user: expect.objectContaining({ id: v2.user.id }),
      pagination_id: expect.stringMatching(/^\d+$/),
    });
    expect(res.body.meta).toMatchObject({ more: false, max_id: item.pagination_id });

    const onlyB = await call("GET", `/users/me/polls/responses?ids=${b.id}`, { token: creator.token, now: T0 + 60 });
    expect(onlyB.body.data.map((r: any) => r.id)).toEqual([b.id]);
    const paged = await call("GET", "/users/me/polls/responses?count=1", { token: creator.token, now: T0 + 60 });
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.meta.more).toBe(true);
    const rest = await call("GET", `/users/me/polls/responses?before_id=${paged.body.meta.min_id}`, { token: creator.token, now: T0 + 60 });
    expect(rest.body.data).toHaveLength(2);

    // Responders see nothing here: these are responses to polls the caller created.
    const theirs = await call("GET", "/users/me/polls/responses", { token: v1.token, now: T0 + 60 });
    expect(theirs.body.data).toEqual([]);
  });
});

describe("closing by time", () => {
  it("arms a Durable Object alarm at closed_at that publishes the close event with the results", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { is_public: true, is_anonymous: false, duration: 30 });
    const voter = await other(creator.app);
    await respond(voter.token, poll.id, [2]);
    const closedAt = Date.parse(poll.closed_at) / 1000;
    const stub = env.POLL_CLOSER.get(env.POLL_CLOSER.idFromName(poll.id));
    await vi.waitFor(async () => {
      expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBe(closedAt * 1000);
    });
    // Woken early it re-arms and publishes nothing; at closed_at it publishes {poll, user} with the results.
    expect(await runInDurableObject(stub, (o) => o.close(closedAt - 1))).toBeNull();
    const event: any = await runInDurableObject(stub, (o) => o.close(closedAt));
    expect(event).toMatchObject({ type: "poll", data: { poll: { id: poll.id }, user: { id: creator.user.id } } });
    expect(event.data.poll.options[1]).toMatchObject({ respondents: 1, respondent_ids: [voter.user.id] });
    expect(event.data.poll).not.toHaveProperty("poll_token");
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBeNull();
    expect(await runDurableObjectAlarm(stub)).toBe(false);
  });

  it("publishes nothing for a poll deleted before it closes", async () => {
    const creator = await actor("polls");
    const poll = await createPoll(creator.token, { duration: 30 });
    const stub = env.POLL_CLOSER.get(env.POLL_CLOSER.idFromName(poll.id));
    await vi.waitFor(async () => {
      expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    });
    await call("DELETE", `/polls/${poll.id}`, { token: creator.token, now: T0 + 1 });
    expect(await runInDurableObject(stub, (o) => o.close(Date.parse(poll.closed_at) / 1000))).toBeNull();
  });
});

describe("poll events on app streams", () => {
  it("publishes create, response, close and delete as {poll, user}, never naming respondents of anonymous polls", async () => {
    const streamApp = await makeApp();
    const appTok = await appToken(streamApp);
    const made = await call("POST", "/streams", { token: appTok, json: { type: "long_poll", object_types: ["poll"], key: "polls" } });
    expect(made.status, made.text).toBe(200);
    const s = await openStream("/app?key=polls", appTok);
    if (!("ws" in s)) throw new Error(`stream refused: ${s.status}`);
    await s.next((f) => f.meta?.connection_id !== undefined);
    const of =
      (id: string, match: (f: any) => boolean = () => true) =>
      (f: any) =>
        f.meta?.type === "poll" && f.data?.poll?.id === id && match(f);

    const creator = await actor("polls");
    const voter = await other(creator.app);
    const anon = await createPoll(creator.token, { is_public: true, is_anonymous: true, duration: 30 });
    const created = await s.next(of(anon.id));
    expect(created.data.user.id).toBe(creator.user.id);
    expect(created.data.poll).not.toHaveProperty("poll_token");
    expect(created.meta.is_deleted).toBeUndefined();

    await respond(voter.token, anon.id, [1]);
    const anonResponse = await s.next(of(anon.id));
    expect(anonResponse.data).not.toHaveProperty("user");
    expect(JSON.stringify(anonResponse)).not.toContain(`"${voter.user.id}"`);

    const named = await createPoll(creator.token, { is_public: true, is_anonymous: false, duration: 30 });
    await s.next(of(named.id));
    await respond(voter.token, named.id, [2]);
    const namedResponse = await s.next(of(named.id));
    expect(namedResponse.data.user.id).toBe(voter.user.id);
    expect(namedResponse.data.poll.options[1]).not.toHaveProperty("respondent_ids");

    // Closing (the poll's alarm, run here at closed_at): the results, still without respondents.
    const stub = env.POLL_CLOSER.get(env.POLL_CLOSER.idFromName(anon.id));
    await vi.waitFor(async () => {
      expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    });
    await runInDurableObject(stub, (o) => o.close(Date.parse(anon.closed_at) / 1000));
    const closed = await s.next(of(anon.id));
    expect(closed.data.poll.options.map((o: any) => o.respondents)).toEqual([1, 0, 0]);
    expect(JSON.stringify(closed)).not.toContain(`"${voter.user.id}"`);

    await call("DELETE", `/polls/${anon.id}`, { token: creator.token, now: T0 + 60 });
    const deleted = await s.next(of(anon.id));
    expect(deleted.meta.is_deleted).toBe(true);
    expect(deleted.data.user.id).toBe(creator.user.id);
    s.ws.close();
  });
});
