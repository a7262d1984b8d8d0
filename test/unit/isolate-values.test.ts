import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { bindParams, boundShape, compile, isolateValue, placeholder } from "../../src/db/batch";

// A value statements take from the isolate when they run (db/batch.ts `isolateValue`), e.g. the
// clients a D1 render leaves out (stores/app-refs.ts).
let current = "first";
const known = isolateValue("testKnown", () => current);

describe("isolate values", () => {
  it("are bound when a statement runs, not when it is compiled", () => {
    const q = compile(sql`select ${placeholder("viewer")}, ${known}`);
    current = "first";
    expect(bindParams(q.params, { viewer: 7 })).toEqual([7, "first"]);
    current = "second";
    expect(bindParams(q.params, { viewer: 7 })).toEqual([7, "second"]);
  });

  it("stay placeholders in a statement composed into one compiled once (boundShape), and are bound when that one runs", () => {
    // As the post render inside the interactions page: built with the viewer as a placeholder.
    const render = compile(sql`select ${placeholder("viewer")}, ${known}`);
    const composed = () => sql.raw(render.sql); // the text; its params follow
    current = "at compile";
    const bound = (viewer: number) =>
      boundShape(
        "test-isolate-composed",
        () =>
          sql`${composed()} -- ${sql.join(
            bindParams(render.params, { viewer: sql.placeholder("viewer") }).map((p) => sql`${p}`),
            sql`, `,
          )}`,
        { viewer },
      );
    expect(bound(1).query.params).toEqual([1, "at compile"]);
    current = "later";
    expect(bound(2).query.params).toEqual([2, "later"]);
  });

  it("stay placeholders in a composed statement without any other placeholder too", () => {
    const anonymous = compile(sql`select ${known}`);
    current = "at compile";
    const bound = () =>
      boundShape(
        "test-isolate-anonymous",
        () =>
          sql`${sql.join(
            bindParams(anonymous.params).map((p) => sql`${p}`),
            sql`, `,
          )}`,
        {},
      );
    expect(bound().query.params).toEqual(["at compile"]);
    current = "later";
    expect(bound().query.params).toEqual(["later"]);
  });
});
