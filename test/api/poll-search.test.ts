import { describe, expect, it } from "vitest";
import { actor, call, makeUser, userToken } from "../support/client";

// GET /polls/search (the reference's resources/polls/search.md), the general poll parameters on
// every poll list (include_closed, include_private, poll_types, exclude_poll_types) and raw
// (include_raw / include_poll_raw), and the older response path PUT /polls/{id}/response/{position}.

const T0 = Math.floor(Date.now() / 1000);
const HOUR = 3600;
let n = 0;
/** A poll type no other test uses, so searches see only this test's polls. */
const uniqueType = () => `com.example.s${Date.now().toString(36)}${++n}`;

async function createPoll(token: string, fields: Record<string, unknown>, now = T0) {
  const res = await call("POST", "/polls", {
    token,
    json: { prompt: "Tea or coffee?", options: [{ text: "Tea" }, { text: "Coffee" }], ...fields },
    now,
  });
  if (res.status !== 201) throw new Error(`createPoll: ${res.status} ${res.text}`);
  return res.body.data;
}

const ids = (res: { status: number; text: string; body: any }) => {
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body.data.map((p: any) => p.id);
};

describe("GET /polls/search", () => {
  it("finds public polls, and private ones the caller created or responded to", async () => {
    const type = uniqueType();
    const a = await actor("polls");
    const b = await actor("polls");
    const pub = await createPoll(a.token, { type, is_public: true });
    const priv = await createPoll(a.token, { type });
    const q = `/polls/search?poll_types=${type}`;
    expect(ids(await call("GET", q, { now: T0 + 1 }))).toEqual([pub.id]);
    expect(ids(await call("GET", q, { token: b.token, now: T0 + 1 }))).toEqual([pub.id]);
    expect(ids(await call("GET", q, { token: a.token, now: T0 + 1 }))).toEqual([priv.id, pub.id]);
    // b opens the private poll with its token and responds: it is now found for b.
    const res = await call("PUT", `/polls/${priv.id}/response?poll_token=${priv.poll_token}`, { token: b.token, json: { positions: [1] }, now: T0 + 2 });
    expect(res.status).toBe(200);
    const found = await call("GET", q, { token: b.token, now: T0 + 3 });
    expect(ids(found)).toEqual([priv.id, pub.id]);
    expect(found.body.data[0]).not.toHaveProperty("poll_token");
    expect(found.body.data[0].pagination_id).toBe(priv.id);
  });

  it("filters by creator, flags, time, types, raw and file, and you_responded", async () => {
    const type = uniqueType();
    const other = uniqueType();
    const a = await actor("polls files");
    const b = await actor("polls");
    const file = await (async () => {
      const form = new FormData();
      form.set("content", new Blob([new TextEncoder().encode("hello")]), "a.txt");
      form.set("type", "com.example.test");
      const r = await call("POST", "/files", { token: a.token, body: form, now: T0 });
      if (r.status !== 201) throw new Error(`upload ${r.status} ${r.text}`);
      return r.body.data;
    })();
    const p1 = await createPoll(a.token, { type, is_public: true, is_anonymous: false, duration: 60 }, T0);
    const p2 = await createPoll(a.token, { type, is_public: true, duration: 600, raw: { "com.example.tag": [{ v: 1 }] } }, T0 + 10);
    const p3 = await createPoll(b.token, { type, is_public: true, duration: 120, raw: { "com.example.att": [{ file_id: file.id }] } }, T0 + 20);
    const p4 = await createPoll(a.token, { type: other, is_public: true }, T0 + 30);
    const now = T0 + 90 * 60; // p1 (60 min) is closed, the others open
    const get = (q: string, token?: string) => call("GET", `/polls/search?${q}`, { token, now });
    const both = `poll_types=${type},${other}`;

    expect(ids(await get(both))).toEqual([p4.id, p3.id, p2.id, p1.id]);
    expect(ids(await get(`${both}&creator_id=${b.user.id}`))).toEqual([p3.id]);
    expect(ids(await get(`${both}&creator_id=@${b.user.username}`))).toEqual([p3.id]);
    expect(ids(await get(`${both}&creator_id=me`, b.token))).toEqual([p3.id]);
    expect(ids(await get(`${both}&is_anonymous=0`))).toEqual([p1.id]);
    expect(ids(await get(`${both}&is_anonymous=1`))).toEqual([p4.id, p3.id, p2.id]);
    expect(ids(await get(`${both}&is_closed=1`))).toEqual([p1.id]);
    expect(ids(await get(`${both}&is_closed=0`))).toEqual([p4.id, p3.id, p2.id]);
    expect(ids(await get(`${both}&is_public=0`))).toEqual([]);
    const after = new Date((T0 + 5) * 1000).toISOString();
    const before = new Date((T0 + 25) * 1000).toISOString();
    expect(ids(await get(`${both}&created_after=${after}&created_before=${before}`))).toEqual([p3.id, p2.id]);
    expect(ids(await get(`poll_types=${type}`))).toEqual([p3.id, p2.id, p1.id]);
    expect(ids(await get(`${both}&exclude_poll_types=${other}`))).toEqual([p4.id, p3.id, p2.id, p1.id]); // poll_types wins
    expect(ids(await get(`creator_id=${a.user.id}&exclude_poll_types=${type}`)).includes(p4.id)).toBe(true);
    expect(ids(await get(`creator_id=${a.user.id}&exclude_poll_types=${type}`)).some((id: string) => [p1.id, p2.id].includes(id))).toBe(false);
    expect(ids(await get(`${both}&raw_types=com.example.tag,com.example.none`))).toEqual([p2.id]);
    expect(ids(await get(`${both}&file_id=${file.id}`))).toEqual([p3.id]);
    expect(ids(await get(`${both}&include_closed=0`))).toEqual([p4.id, p3.id, p2.id]);

    // you_responded
    expect((await call("PUT", `/polls/${p2.id}/response`, { token: b.token, json: { positions: [2] }, now })).status).toBe(200);
    expect(ids(await get(`${both}&you_responded=1`, b.token))).toEqual([p2.id]);
    expect(ids(await get(`${both}&you_responded=0`, b.token))).toEqual([p4.id, p3.id, p1.id]);
    expect((await get(`${both}&you_responded=1`)).status).toBe(401);

    // order=closed_at: latest closing first, paged by the poll ids of the list.
    const byClose = await get(`poll_types=${type}&order=closed_at`);
    expect(ids(byClose)).toEqual([p2.id, p3.id, p1.id]);
    const page1 = await get(`poll_types=${type}&order=closed_at&count=2`);
    expect(ids(page1)).toEqual([p2.id, p3.id]);
    expect(page1.body.meta).toMatchObject({ more: true, max_id: p2.id, min_id: p3.id });
    expect(ids(await get(`poll_types=${type}&order=closed_at&before_id=${p3.id}`))).toEqual([p1.id]);
    expect(ids(await get(`poll_types=${type}&order=closed_at&since_id=${p3.id}`))).toEqual([p2.id]);
    // order=id pages by id.
    expect(ids(await get(`poll_types=${type}&count=1&before_id=${p2.id}`))).toEqual([p1.id]);
  });

  it("rejects bad parameters with a 400 naming them", async () => {
    for (const [q, name] of [
      ["order=votes", "order"],
      ["is_public=yes", "is_public"],
      ["created_after=yesterday", "created_after"],
      ["creator_id=some one", "creator_id"],
      ["file_id=x", "file_id"],
      ["include_closed=2", "include_closed"],
    ]) {
      const res = await call("GET", `/polls/search?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.meta.error_message, q).toContain(name);
    }
  });
});

describe("general poll parameters", () => {
  it("include_closed, include_private, poll_types and exclude_poll_types filter every poll list", async () => {
    const type = uniqueType();
    const other = uniqueType();
    const a = await actor("polls");
    const b = await actor("polls");
    const closed = await createPoll(a.token, { type, is_public: true, duration: 1 }, T0);
    const priv = await createPoll(a.token, { type }, T0 + 1);
    const typed = await createPoll(a.token, { type: other, is_public: true }, T0 + 2);
    const now = T0 + HOUR;
    for (const p of [closed, priv, typed]) {
      const r = await call("PUT", `/polls/${p.id}/response${p.id === priv.id ? `?poll_token=${priv.poll_token}` : ""}`, {
        token: b.token,
        json: { positions: [1] },
        now: p.id === closed.id ? T0 + 30 : now,
      });
      expect(r.status, p.id).toBe(200);
    }
    const all = [typed.id, priv.id, closed.id];
    const filters: [string, string[]][] = [
      ["", all],
      ["include_closed=0", [typed.id, priv.id]],
      ["include_private=0", [typed.id, closed.id]],
      [`poll_types=${other}`, [typed.id]],
      [`exclude_poll_types=${other}`, [priv.id, closed.id]],
    ];
    for (const [q, want] of filters) {
      const mine = ids(await call("GET", `/users/me/polls?${q}`, { token: a.token, now }));
      expect(
        mine.filter((id: string) => all.includes(id)),
        `/users/me/polls?${q}`,
      ).toEqual(want);
      const responses = ids(await call("GET", `/users/me/polls/responses?${q}`, { token: a.token, now }));
      expect(
        responses.filter((id: string) => all.includes(id)),
        `responses?${q}`,
      ).toEqual(want);
      const byIds = ids(await call("GET", `/polls?ids=${all.join(",")}&${q}`, { token: a.token, now }));
      expect(byIds, `/polls?${q}`).toEqual(want);
    }
  });

  it("raw is stored on create and shown with include_raw=1 or include_poll_raw=1", async () => {
    const a = await actor("polls");
    const raw = { "com.example.extra": [{ note: "hi" }] };
    const poll = await createPoll(a.token, { type: uniqueType(), raw });
    expect(poll).not.toHaveProperty("raw");
    const created = await call("POST", "/polls?include_poll_raw=1", {
      token: a.token,
      json: { type: "com.example.poll", prompt: "p", options: ["a", "b"], raw },
      now: T0,
    });
    expect(created.body.data.raw).toEqual(raw);
    expect((await call("GET", `/polls/${poll.id}`, { token: a.token, now: T0 })).body.data).not.toHaveProperty("raw");
    expect((await call("GET", `/polls/${poll.id}?include_poll_raw=1`, { token: a.token, now: T0 })).body.data.raw).toEqual(raw);
    expect((await call("GET", `/polls/${poll.id}?include_raw=1`, { token: a.token, now: T0 })).body.data.raw).toEqual(raw);
    expect((await call("GET", `/polls?ids=${poll.id}&include_raw=1`, { token: a.token, now: T0 })).body.data[0].raw).toEqual(raw);
    expect((await call("GET", "/users/me/polls?include_poll_raw=1", { token: a.token, now: T0 })).body.data[0].raw).toEqual(raw);
    const bad = await call("POST", "/polls", {
      token: a.token,
      json: { type: "com.example.poll", prompt: "p", options: ["a", "b"], raw: { notatype: [{}] } },
      now: T0,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.meta.error_message).toContain("raw");
    expect((await call("GET", `/polls/${poll.id}?include_poll_raw=2`, { token: a.token, now: T0 })).status).toBe(400);
  });
});

describe("PUT /polls/{poll_id}/response/{position}", () => {
  it("responds with one option, with no body", async () => {
    const a = await actor("polls");
    const voter = await makeUser();
    const token = await userToken(a.app, voter, "polls");
    const poll = await createPoll(a.token, { type: uniqueType(), is_public: true });
    const res = await call("PUT", `/polls/${poll.id}/response/2`, { token, now: T0 + 5 });
    expect(res.status).toBe(200);
    expect(res.body.data.options.map((o: any) => o.is_your_response)).toEqual([false, true]);
    expect((await call("PUT", `/polls/${poll.id}/response/3`, { token, now: T0 + 6 })).status).toBe(400);
    expect((await call("PUT", `/polls/${poll.id}/response/x`, { token, now: T0 + 6 })).status).toBe(400);
    const priv = await createPoll(a.token, { type: uniqueType() });
    expect((await call("PUT", `/polls/${priv.id}/response/1`, { token, now: T0 + 7 })).status).toBe(403);
    expect((await call("PUT", `/polls/${priv.id}/response/1?poll_token=${priv.poll_token}`, { token, now: T0 + 7 })).status).toBe(200);
  });
});
