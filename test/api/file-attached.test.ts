import { describe, expect, it } from "vitest";
import { actor, call, must } from "../support/client";
import * as fx from "../fixtures/media";
import { testClock } from "../support/fixtures";

// File `attached_to` (the posts, polls and messages whose raw embeds the file, through a raw
// replacement value; sampled, live ones, messages only of channels the viewer reads) and
// `total_size` (the content plus its derived files, once complete), as the reference defines them.

const tick = testClock();
const OEMBED = "io.example.core.oembed";
const FILE = "+io.example.core.file";
const SCOPES = "files write_post messages polls";

async function upload(token: string, bytes: Uint8Array) {
  const form = new FormData();
  form.set("content", new Blob([bytes]), "photo.png");
  form.set("type", "com.example.photo");
  form.set("is_public", "1");
  return (await must(call("POST", "/files", { token, body: form, now: tick() }), 201)).data;
}
const embed = (f: { id: string; file_token: string }) => ({ [OEMBED]: [{ [FILE]: { file_id: f.id, file_token: f.file_token, format: "oembed" } }] });

describe("File attached_to and total_size", { timeout: 60_000 }, () => {
  it("total_size is the content plus its derived files, only once complete", async () => {
    const { token } = await actor("files");
    const f = await upload(token, fx.png);
    // The reserved thumbnails are made after the upload's response: wait for them.
    let file = f;
    for (let i = 0; i < 100 && file.derived_files_pending; i++) {
      await new Promise((r) => setTimeout(r, 100));
      file = (await must(call("GET", `/files/${f.id}`, { token }))).data;
    }
    expect(file).not.toHaveProperty("derived_files_pending");
    const derived = Object.values(file.derived_files as Record<string, { size: number }>);
    expect(derived.length).toBeGreaterThan(0);
    expect(file.size).toBe(fx.png.length);
    expect(file.total_size).toBe(fx.png.length + derived.reduce((n, d) => n + d.size, 0));
    const placeholder = (await must(call("POST", "/files", { token, json: { type: "com.example.test", kind: "image", name: "later.png" }, now: tick() }), 201))
      .data;
    expect(placeholder).not.toHaveProperty("total_size");
  });

  it("lists the live posts, polls and readable messages the file is attached to by replacement values", async () => {
    const [alice, bob] = await Promise.all([actor(SCOPES), actor(SCOPES)]);
    const f = await upload(alice.token, fx.png);
    expect(f).not.toHaveProperty("attached_to");
    expect((await must(call("GET", `/files/${f.id}`, { token: alice.token }))).data).not.toHaveProperty("attached_to");

    let n = 0;
    const post = async () =>
      (await must(call("POST", "/posts", { token: alice.token, json: { text: `a photo ${++n}`, raw: embed(f) }, now: tick() }), 201)).data;
    const [p1, p2] = [await post(), await post()];
    const poll = (
      await must(
        call("POST", "/polls", {
          token: alice.token,
          json: { type: "com.example.poll", prompt: "Nice?", options: [{ text: "y" }, { text: "n" }], duration: 60, raw: embed(f) },
          now: tick(),
        }),
        201,
      )
    ).data;
    // A private channel: bob may not read it, so he does not learn its message's id.
    const ch = (await must(call("POST", "/channels", { token: alice.token, json: { type: "com.example.chat", acl: {} }, now: tick() }), 201)).data;
    const m = (await must(call("POST", `/channels/${ch.id}/messages`, { token: alice.token, json: { text: "here", raw: embed(f) }, now: tick() }), 201)).data;
    // A post that names no file, and one of bob's with another file, are not listed.
    await must(call("POST", "/posts", { token: alice.token, json: { text: "no file" }, now: tick() }), 201);

    const mine = (await must(call("GET", `/files/${f.id}`, { token: alice.token }))).data;
    expect(mine.attached_to).toEqual({ posts: [p2.id, p1.id], polls: [poll.id], messages: [m.id] });
    const theirs = (await must(call("GET", `/files/${f.id}`, { token: bob.token }))).data;
    expect(theirs.attached_to).toEqual({ posts: [p2.id, p1.id], polls: [poll.id] });
    // The user's file list carries it too.
    const listed = (await must(call("GET", "/users/me/files", { token: alice.token }))).data.find((x: { id: string }) => x.id === f.id);
    expect(listed.attached_to.posts).toEqual([p2.id, p1.id]);

    // A deleted post or message is no longer something the file is attached to.
    await must(call("DELETE", `/posts/${p2.id}`, { token: alice.token, now: tick() }));
    await must(call("DELETE", `/channels/${ch.id}/messages/${m.id}`, { token: alice.token, now: tick() }));
    const after = (await must(call("GET", `/files/${f.id}`, { token: alice.token }))).data;
    expect(after.attached_to).toEqual({ posts: [p1.id], polls: [poll.id] });
  });
});
