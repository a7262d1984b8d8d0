import { describe, expect, it } from "vitest";
import { call, makeUser, must, openStream, userToken } from "../support/client";
import { ALL_SCOPES, appWithToken, createStream, ofType, socket } from "../support/streams";

// App streams honour the connection query parameters the reference lists for them
// (how-to/app-streams.md, "Connection Query Parameters"): every frame of a socket, live or
// replayed with `since`, is rendered as that socket asked.

const raw = { "com.example.raw": [{ a: 1 }] };

describe("app stream connection parameters", () => {
  it("include_html, include_raw and include_<object>_raw shape each socket's frames; the default carries html and no raw", async () => {
    const { app, token } = await appWithToken();
    await createStream(token, { object_types: ["post", "message", "user"], key: "shape" });
    const plain = await socket("/app?key=shape", token);
    const shaped = await socket("/app?key=shape&include_html=0&include_post_raw=1&include_user_raw=1", token);
    for (const s of [plain, shaped]) await s.next((f) => f.meta?.connection_id !== undefined);
    const u = await makeUser();
    const t = await userToken(app, u, `${ALL_SCOPES} update_profile`);

    const post = (await must(call("POST", "/posts", { token: t, json: { text: "shaped post", raw } }), 201)).data.id;
    const p0 = await plain.next(ofType("post", (f) => f.data[0].id === post));
    const p1 = await shaped.next(ofType("post", (f) => f.data[0].id === post));
    expect(p0.data[0].raw).toBeUndefined();
    expect(p0.data[0].content.html).toContain("shaped post");
    expect(p1.data[0].raw).toEqual(raw);
    expect(p1.data[0].content).not.toHaveProperty("html");
    expect(p1.data[0].content.text).toBe("shaped post");
    expect(p1.data[0].user.content).not.toHaveProperty("html");

    const ch = (await must(call("POST", "/channels", { token: t, json: { type: "com.example.chat" } }), 201)).data.id;
    await must(call("POST", `/channels/${ch}/messages`, { token: t, json: { text: "shaped message", raw } }), 201);
    const m0 = await plain.next(ofType("message", (f) => f.data[0].channel_id === ch));
    const m1 = await shaped.next(ofType("message", (f) => f.data[0].channel_id === ch));
    expect(m0.data[0].raw).toBeUndefined();
    expect(m1.data[0].raw).toBeUndefined(); // include_message_raw was not asked for
    expect(m1.data[0].content).not.toHaveProperty("html");

    await must(call("PATCH", "/users/me", { token: t, json: { raw } }));
    const u0 = await plain.next(ofType("user", (f) => f.data.id === u.id));
    const u1 = await shaped.next(ofType("user", (f) => f.data.id === u.id));
    expect(u0.data.raw).toBeUndefined();
    expect(u1.data.raw).toEqual(raw);
    for (const s of [plain, shaped]) s.ws.close(1000);
  });

  it("include_raw covers every object; a replay after `since` is shaped as the new socket asks", async () => {
    const { app, token } = await appWithToken();
    await createStream(token, { object_types: ["message"], key: "replay" });
    const first = await socket("/app?key=replay", token);
    const hello = await first.next((f) => f.meta?.connection_id !== undefined);
    const u = await makeUser();
    const t = await userToken(app, u, ALL_SCOPES);
    const ch = (await must(call("POST", "/channels", { token: t, json: { type: "com.example.chat" } }), 201)).data.id;
    await must(call("POST", `/channels/${ch}/messages`, { token: t, json: { text: "missed", raw } }), 201);
    const live = await first.next(ofType("message", (f) => f.data[0].channel_id === ch));
    expect(live.data[0].raw).toBeUndefined();
    first.ws.close(1000);

    const again = await socket(`/app?key=replay&include_raw=1&since=${hello.meta.cursor}`, token);
    const replayed = await again.next(ofType("message", (f) => f.data[0].channel_id === ch));
    expect(replayed.meta.id).toBe(live.meta.id);
    expect(replayed.data[0].raw).toEqual(raw);
    expect(replayed.data[0].content.html).toContain("missed");
    again.ws.close(1000);
  });

  it("refuses a connection parameter that is not a flag (400)", async () => {
    const { token } = await appWithToken();
    await createStream(token, { object_types: ["post"], key: "bad" });
    const res = (await openStream("/app?key=bad&include_html=maybe", token)) as { status: number; body: any };
    expect(res.status).toBe(400);
    expect(res.body.meta.error_message).toMatch(/include_html/);
  });
});
