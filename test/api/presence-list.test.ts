import { describe, expect, it } from "vitest";
import { actor, call } from "../support/client";
import { DB } from "../support/db";

// GET /presence serves a rendered list again while nothing in it changed (issue 19). Whatever it
// keeps, a reader never sees the list as it was before a write that returned: each kind of write
// that changes the list is made between two reads here, and the second read must show it.

type Item = { id: string; username: string; name?: string; avatar_image: string; presence: string };
async function online(token: string, now?: number) {
  const res = await call("GET", "/presence", { token, now });
  expect(res.status).toBe(200);
  return { items: res.body.data as Item[], calls: Number(res.headers.get("x-debug-db-calls")) };
}
const find = (items: Item[], id: string) => items.find((p) => p.id === id);

describe("GET /presence after writes", () => {
  it("an unchanged list costs one round trip (token and version together); a changed one is read again", async () => {
    const reader = await actor("basic presence");
    await online(reader.token);
    const again = await online(reader.token);
    expect(again.calls).toBe(1);
    const other = await actor("basic presence update_profile");
    expect((await call("PUT", "/users/me/presence", { token: other.token, json: { presence: "here" } })).status).toBe(200);
    const after = await online(reader.token);
    expect(after.calls).toBe(2);
    expect(find(after.items, other.user.id)?.presence).toBe("here");
  });

  it("shows a new status, a changed status, a rename, a new avatar and going offline at once", async () => {
    const reader = await actor("basic presence");
    const other = await actor("basic presence update_profile");
    await call("PUT", "/users/me/presence", { token: other.token, json: { presence: "first" } });
    expect(find((await online(reader.token)).items, other.user.id)?.presence).toBe("first");
    await online(reader.token);

    await call("PUT", "/users/me/presence", { token: other.token, json: { presence: "second" } });
    expect(find((await online(reader.token)).items, other.user.id)?.presence).toBe("second");

    expect((await call("PATCH", "/users/me", { token: other.token, json: { name: "Renamed Person" } })).status).toBe(200);
    expect(find((await online(reader.token)).items, other.user.id)?.name).toBe("Renamed Person");

    await DB.prepare("UPDATE users SET avatar_url = 'https://img.example/a.png' WHERE id = ?").bind(Number(other.user.id)).run();
    expect(find((await online(reader.token)).items, other.user.id)?.avatar_image).toBe("https://img.example/a.png");

    await call("PUT", "/users/me/presence", { token: other.token, json: { presence: "offline" } });
    expect(find((await online(reader.token)).items, other.user.id)).toBeUndefined();
  });

  it("drops a disabled user, and a status once it lapses, without any write", async () => {
    const reader = await actor("basic presence");
    const other = await actor("basic presence");
    const third = await actor("basic presence");
    const t0 = Math.floor(Date.now() / 1000);
    await call("PUT", "/users/me/presence", { token: other.token, json: { presence: "here" }, now: t0 });
    await call("PUT", "/users/me/presence", { token: third.token, json: { presence: "here" }, now: t0 });
    expect(find((await online(reader.token, t0)).items, third.user.id)).toBeDefined();
    await DB.prepare("UPDATE users SET is_disabled = 1 WHERE id = ?").bind(Number(third.user.id)).run();
    expect(find((await online(reader.token, t0)).items, third.user.id)).toBeUndefined();

    const { items } = await online(reader.token, t0 + 60);
    expect(find(items, other.user.id)).toBeDefined();
    const row = await DB.prepare("SELECT expires_at FROM presence WHERE user_id = ?").bind(Number(other.user.id)).first<{ expires_at: number }>();
    expect(find((await online(reader.token, row!.expires_at)).items, other.user.id)).toBeUndefined();
  });
});
