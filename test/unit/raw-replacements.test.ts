import { describe, expect, it } from "vitest";
import { FILE_KEY, findReplacements, POLL_KEY } from "../../src/services/raw-replacements";

// Where replacement values are found and how a malformed one is named (no database here).

const message = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  return "no error";
};

describe("findReplacements", () => {
  it("finds file and poll values by item, keeping their position and the field that names them", () => {
    const raw = {
      "com.example.x": [{ plain: 1 }, { [FILE_KEY]: { file_id: "7", file_token: "t", format: "url" } }],
      "io.example.core.poll-notice": [{ [POLL_KEY]: { poll_id: 3, poll_token: "p" }, "+com.other.thing": {} }],
    };
    const found = findReplacements(raw);
    expect(found.files).toEqual([{ field: `raw.com.example.x.1.${FILE_KEY}`, type: "com.example.x", index: 1, id: 7, token: "t", format: "url" }]);
    expect(found.polls).toEqual([{ field: `raw.io.example.core.poll-notice.0.${POLL_KEY}`, type: "io.example.core.poll-notice", index: 0, id: 3, token: "p" }]);
    expect(findReplacements({ "com.example.x": [{ a: { [FILE_KEY]: {} } }] })).toEqual({ files: [], polls: [] }); // only item-level keys
    expect(findReplacements(null)).toEqual({ files: [], polls: [] });
  });

  it("names the field of a malformed value", () => {
    const at = `raw.io.example.core.oembed.0.${FILE_KEY}`;
    const file = (v: unknown) => message(() => findReplacements({ "io.example.core.oembed": [{ [FILE_KEY]: v }] }));
    expect(file({ file_id: "x", file_token: "t", format: "oembed" })).toContain(`'${at}.file_id'`);
    expect(file({ file_id: "99999999999999999999", file_token: "t", format: "oembed" })).toContain(`'${at}.file_id'`);
    expect(file({ file_id: "1", file_token: "", format: "oembed" })).toContain(`'${at}.file_token'`);
    expect(file({ file_id: "1", file_token: "t", format: "gif" })).toContain(`'${at}.format'`);
    expect(file([])).toContain(`'${at}' must be an object`);
    expect(message(() => findReplacements({ t: [{ [POLL_KEY]: { poll_id: "1" } }] }))).toContain(`'raw.t.0.${POLL_KEY}.poll_token'`);
  });
});
