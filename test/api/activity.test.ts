import { describe, expect, it } from "vitest";
import { activityDay, activityPhase } from "../../src/stores/tokens";
import { DB } from "../support/db";
import { actor, call } from "../support/client";

/** A UTC midnight far from the real clock: day D starts at M. */
const M = (Math.floor(2_000_000_000 / 86400) + 1) * 86400;
const dayOf = (at: number) => new Date(at * 1000).toISOString().slice(0, 10);

const days = async (userId: number) =>
  (await DB.prepare("SELECT day FROM user_activity WHERE user_id = ? ORDER BY day").bind(userId).all<{ day: string }>()).results.map((r) => r.day);

/** The activity write runs after the response (waitUntil): waits for the user's rows to reach `n`. */
async function rowsReach(userId: number, n: number): Promise<string[]> {
  for (let i = 0; i < 50; i++) {
    const found = await days(userId);
    if (found.length >= n) return found;
    await new Promise((r) => setTimeout(r, 40));
  }
  return days(userId);
}

describe("the daily activity write (users.active of /sys/stats)", () => {
  it("turns each user's day at its own phase after midnight: two users returning at one instant write at different times", async () => {
    let a = await actor();
    let b = await actor();
    while (activityPhase(Number(b.user.id)) === activityPhase(Number(a.user.id))) b = await actor();
    if (activityPhase(Number(a.user.id)) > activityPhase(Number(b.user.id))) [a, b] = [b, a];
    const [idA, idB] = [Number(a.user.id), Number(b.user.id)];
    const [phaseA, phaseB] = [activityPhase(idA), activityPhase(idB)];
    const [before, D] = [dayOf(M - 1), dayOf(M)];

    // Both active the evening before: one row each, for day D-1.
    await Promise.all([call("GET", "/token", { token: a.token, now: M - 43200 }), call("GET", "/token", { token: b.token, now: M - 43200 })]);
    expect(await rowsReach(idA, 1)).toEqual([before]);
    expect(await rowsReach(idB, 1)).toEqual([before]);

    // Both return at the same instant, once A's day has turned and before B's has.
    const t = M + phaseA;
    await Promise.all([call("GET", "/token", { token: a.token, now: t }), call("GET", "/token", { token: b.token, now: t })]);
    expect(await rowsReach(idA, 2)).toEqual([before, D]);
    await new Promise((r) => setTimeout(r, 200));
    expect(await days(idB)).toEqual([before]);
    expect(activityDay(idB, t)).toBe(before);

    // B writes when its own day turns, not a second earlier.
    await call("GET", "/token", { token: b.token, now: M + phaseB - 1 });
    await new Promise((r) => setTimeout(r, 200));
    expect(await days(idB)).toEqual([before]);
    await call("GET", "/token", { token: b.token, now: M + phaseB });
    expect(await rowsReach(idB, 2)).toEqual([before, D]);

    // At most once per day per token: A's later calls on its day D write nothing.
    await call("GET", "/token", { token: a.token, now: M + 86400 + phaseA - 1 });
    await new Promise((r) => setTimeout(r, 200));
    expect(await days(idA)).toEqual([before, D]);
    const stored = await DB.prepare("SELECT last_seen_day AS d FROM tokens WHERE user_id = ?").bind(idA).first<{ d: string }>();
    expect(stored?.d).toBe(D);
  });

  it("spreads a thousand consecutive user ids over the hour after midnight", () => {
    const phases = Array.from({ length: 1000 }, (_, i) => activityPhase(i + 1));
    expect(Math.min(...phases)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...phases)).toBeLessThan(3600);
    // Every minute of the hour takes some, none more than twice its share (all wrote at 00:00 before).
    const perMinute = new Map<number, number>();
    for (const p of phases) perMinute.set(Math.floor(p / 60), (perMinute.get(Math.floor(p / 60)) ?? 0) + 1);
    expect(perMinute.size).toBe(60);
    expect(Math.max(...perMinute.values())).toBeLessThanOrEqual(30);
  });
});
