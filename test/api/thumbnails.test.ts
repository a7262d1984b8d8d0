import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { actor, call } from "../support/client";
import * as fx from "../fixtures/media";
import { decodedSize, imageOf, pngHeaderOnly } from "../fixtures/images";
import { fileSettled as settled } from "../support/fixtures";

// The reserved derived images of image uploads (core_image_200s, core_image_960r) and scaled
// avatars and covers (`w`/`h`): every size is checked by decoding the bytes served.

async function fetchBytes(url: string) {
  const res = await SELF.fetch(url, { redirect: "manual" });
  return { status: res.status, type: res.headers.get("content-type"), location: res.headers.get("location"), bytes: new Uint8Array(await res.arrayBuffer()) };
}

async function uploadImage(token: string, bytes: Uint8Array, filename = "photo.png") {
  const form = new FormData();
  form.set("content", new Blob([bytes]), filename);
  form.set("type", "com.example.photo");
  const res = await call("POST", "/files", { token, body: form });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

describe("reserved derived images of uploads", { timeout: 60_000 }, () => {
  it("a 300x200 PNG gets core_image_200s (200x200) and core_image_960r (within 640x960, here the image itself)", async () => {
    const { token } = await actor("files");
    const png = imageOf(300, 200);
    const created = await uploadImage(token, png);
    expect(created.image_info).toEqual({ width: 300, height: 200 });
    const file = await settled(token, created.id);
    expect(Object.keys(file.derived_files).sort()).toEqual(["core_image_200s", "core_image_960r"]);
    const thumb = file.derived_files.core_image_200s;
    expect(thumb).toMatchObject({ mime_type: "image/png", name: "core_image_200s.png", image_info: { width: 200, height: 200 } });
    const thumbBytes = (await fetchBytes(thumb.url)).bytes;
    expect(thumbBytes.length).toBe(thumb.size);
    expect(decodedSize(thumbBytes)).toEqual({ width: 200, height: 200 });
    const fit = file.derived_files.core_image_960r;
    expect(fit).toMatchObject({ mime_type: "image/png", image_info: { width: 300, height: 200 } });
    expect(decodedSize((await fetchBytes(fit.url)).bytes)).toEqual({ width: 300, height: 200 });
  });

  it("a large JPEG is scaled into 640x960 (aspect kept) and cropped to a square thumbnail, both JPEG", async () => {
    const { token } = await actor("files");
    const created = await uploadImage(token, imageOf(1600, 1200, "jpeg"), "big.jpg");
    const file = await settled(token, created.id);
    expect(file.derived_files.core_image_960r).toMatchObject({ mime_type: "image/jpeg", image_info: { width: 640, height: 480 } });
    expect(decodedSize((await fetchBytes(file.derived_files.core_image_960r.url)).bytes)).toEqual({ width: 640, height: 480 });
    expect(decodedSize((await fetchBytes(file.derived_files.core_image_200s.url)).bytes)).toEqual({ width: 200, height: 200 });
    expect(file.derived_files.core_image_200s.mime_type).toBe("image/jpeg");
  });

  it("a placeholder's own uploaded core_image_200s is kept; the missing key is made when the content arrives", async () => {
    const { token } = await actor("files");
    const ph = (await call("POST", "/files", { token, json: { type: "com.example.photo", kind: "image", mime_type: "image/png" } })).body.data;
    const own = imageOf(200, 200);
    const put = (path: string, body: Uint8Array, type = "image/png") =>
      call("PUT", `/files/${ph.id}/content${path}?file_token=${ph.file_token}`, { body, headers: { "Content-Type": type } });
    expect((await put("/core_image_200s", imageOf(150, 120))).body.meta.error_message).toMatch(/exactly 200x200 px; the content is 150x120 px/);
    expect((await put("/core_image_960r", imageOf(700, 100))).body.meta.error_message).toMatch(/within 640x960 px/);
    expect((await put("/core_image_200s", imageOf(200, 200, "jpeg"), "image/jpeg")).body.meta.error_message).toMatch(/file's mime type image\/png/);
    expect((await put("/core_image_960l", imageOf(200, 200))).body.meta.error_message).toMatch(/reserved.*core_image_200s, core_image_960r/);
    expect((await put("/core_image_200s", own)).status).toBe(204);
    expect((await put("", imageOf(1000, 1000))).status).toBe(204);
    const file = await settled(token, ph.id);
    expect(file.derived_files.core_image_200s).toMatchObject({ size: own.length, name: "core_image_200s" });
    expect(file.derived_files.core_image_960r.image_info).toEqual({ width: 640, height: 640 });
  });

  it("says derived_files_pending only while they are made; non-images get none", async () => {
    const { token } = await actor("files");
    const created = await uploadImage(token, imageOf(50, 40));
    expect(created.derived_files_pending).toBe(true); // made after the response, never before it
    const file = await settled(token, created.id);
    expect(file).not.toHaveProperty("derived_files_pending");
    const audio = await uploadImage(token, fx.mp3, "a.mp3");
    expect(audio).not.toHaveProperty("derived_files_pending");
    expect((await settled(token, audio.id)).derived_files).toEqual({});
  });

  it("never decodes an image over 6 megapixels: no derived images for it", async () => {
    const { token } = await actor("files");
    const huge = await uploadImage(token, pngHeaderOnly(3000, 2001));
    expect(huge.image_info).toEqual({ width: 3000, height: 2001 });
    expect(huge).not.toHaveProperty("derived_files_pending");
    expect((await settled(token, huge.id)).derived_files).toEqual({});
  });
});

describe("avatar and cover at w/h", { timeout: 60_000 }, () => {
  it("an avatar requested at w=50 is 50 px wide (h follows); h alone scales by height; never larger than the original", async () => {
    const { token, user } = await actor("update_profile");
    const form = new FormData();
    form.set("avatar", new Blob([imageOf(300, 200)]), "me.png");
    expect((await call("POST", "/users/me/avatar", { token, body: form })).status).toBe(200);
    const at = async (query: string) => {
      const redirect = await fetchBytes(`http://api.test/v1/users/${user.id}/avatar${query}`);
      expect(redirect.status).toBe(302);
      const image = await fetchBytes(redirect.location!);
      expect(image.status).toBe(200);
      return decodedSize(image.bytes);
    };
    expect(await at("?w=50")).toEqual({ width: 50, height: 33 });
    expect(await at("?w=50")).toEqual({ width: 50, height: 33 }); // served from the stored copy
    expect(await at("?h=100")).toEqual({ width: 150, height: 100 });
    expect(await at("?w=60&h=10")).toEqual({ width: 60, height: 40 }); // w wins, as the reference says
    expect(await at("?w=1000")).toEqual({ width: 300, height: 200 });
    expect(await at("")).toEqual({ width: 300, height: 200 });
    expect((await call("GET", `/users/${user.id}/avatar?w=0`)).status).toBe(400);

    // Replaced: the original and its scaled copies are removed.
    const key = (await call("GET", `/users/${user.id}`)).body.data.content.avatar_image.url.split("/images/")[1];
    expect((await env.FILES.list({ prefix: `images/${key}/` })).objects.map((o) => o.key).sort()).toEqual([
      `images/${key}/h100`,
      `images/${key}/w50`,
      `images/${key}/w60`,
    ]);
    const again = new FormData();
    again.set("avatar", new Blob([imageOf(20, 20)]), "me.png");
    expect((await call("POST", "/users/me/avatar", { token, body: again })).status).toBe(200);
    for (let i = 0; i < 100 && (await env.FILES.list({ prefix: `images/${key}` })).objects.length; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await env.FILES.list({ prefix: `images/${key}` })).objects).toEqual([]);
  });

  it("refuses an avatar over 6 megapixels (it could not be scaled)", async () => {
    const { token } = await actor("update_profile");
    const form = new FormData();
    form.set("avatar", new Blob([pngHeaderOnly(3000, 2001)]), "huge.png");
    const res = await call("POST", "/users/me/avatar", { token, body: form });
    expect([res.status, res.body.meta.error_message]).toEqual([400, expect.stringMatching(/'avatar' must be at most 6 megapixels; the image is 3000x2001 px/)]);
  });

  it("a cover requested at w=480 is 480 px wide", async () => {
    const { token, user } = await actor("update_profile");
    const form = new FormData();
    form.set("cover", new Blob([imageOf(1000, 300)]), "c.png");
    expect((await call("POST", "/users/me/cover", { token, body: form })).status).toBe(200);
    const redirect = await fetchBytes(`http://api.test/v1/users/${user.id}/cover?w=480`);
    expect(decodedSize((await fetchBytes(redirect.location!)).bytes)).toEqual({ width: 480, height: 144 });
  });
});
