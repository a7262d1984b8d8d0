import { describe, expect, it } from "vitest";
import { actor, call } from "../support/client";
import { testClock } from "../support/fixtures";

// Every channel call of a client library written for the public service (pnut-butter's
// channels module), made as that library makes it: the same paths (including the older
// /users/me/channels/num_unread/pm), query strings (rest arguments joined with commas, camelCase
// parameters turned to snake_case) and no body on PUT/DELETE. Each must succeed against /v1 (issue 18).

const SCOPES = "basic stream messages public_messages";
const tick = testClock(600_000);

describe("a client library's channel calls", { timeout: 60_000 }, () => {
  it("all succeed", async () => {
    const me = await actor(SCOPES);
    const other = await actor(SCOPES);
    const token = me.token;
    const made = async (t: string, json: unknown) => {
      const res = await call("POST", "/channels", { token: t, json, now: tick() });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const room = await made(other.token, {
      type: "io.example.core.chat",
      acl: { read: { public: true }, write: { any_user: true } },
      raw: { "io.example.core.chat-settings": [{ name: "Fun room", categories: ["fun"] }] },
    });
    const mine = await made(token, { type: "com.example.site" });
    const pm = await call("POST", "/channels/pm/messages", { token: other.token, json: { destinations: [me.user.id], text: "hi" }, now: tick() });
    expect(pm.status).toBe(201);

    const calls: [string, string, (res: any) => void][] = [
      ["GET", `/channels/${room}`, (r) => expect(r.body.data.id).toBe(room)],
      ["GET", `/channels?ids=${room},${mine}`, (r) => expect(r.body.data.map((c: any) => c.id)).toEqual([room, mine])],
      ["GET", "/users/me/channels", (r) => expect(r.body.data.map((c: any) => c.id)).toEqual([mine])],
      ["GET", `/users/me/channels/existing_pm?ids=${other.user.id}`, (r) => expect(r.body.data.id).toBe(pm.body.data.channel_id)],
      ["GET", "/users/me/channels/num_unread/pm", (r) => expect(r.body.data).toEqual({ "io.example.core.pm": 1 })],
      ["DELETE", "/users/me/channels/num_unread/pm", (r) => expect(r.body.data).toEqual({ "io.example.core.pm": 0 })],
      ["GET", "/users/me/channels/subscribed", (r) => expect(r.body.data.length).toBe(2)],
      ["GET", `/channels/${room}/subscribers`, (r) => expect(r.body.data.map((u: any) => u.id)).toEqual([other.user.id])],
      ["PUT", `/channels/${room}/subscribe`, (r) => expect(r.body.data.you_subscribed).toBe(true)],
      ["DELETE", `/channels/${room}/subscribe`, (r) => expect(r.body.data.you_subscribed).toBe(false)],
      ["GET", "/users/me/channels/muted", (r) => expect(r.body.data).toEqual([])],
      ["PUT", `/channels/${room}/mute`, (r) => expect(r.body.data.you_muted).toBe(true)],
      ["DELETE", `/channels/${room}/mute`, (r) => expect(r.body.data.you_muted).toBe(false)],
      // searchChannels({ isPublic: 1, channelTypes: "io.example.core.chat", categories: "fun" })
      [
        "GET",
        "/channels/search?is_public=1&channel_types=io.example.core.chat&categories=fun",
        (r) => expect(r.body.data.map((c: any) => c.id)).toContain(room),
      ],
      ["DELETE", `/channels/${mine}`, (r) => expect(r.body.data.is_active).toBe(false)],
    ];
    for (const [method, path, check] of calls) {
      const res = await call(method, path, { token, now: tick() });
      expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(200);
      check(res);
    }
  });
});
