import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { actor, call } from "../support/client";
import { DB } from "../support/db";

// Plans kept across requests on Postgres (src/db/pg-plans.ts): a post list's render, planned on
// every request as an unnamed statement, runs as a PL/pgSQL function made from its own text, whose
// plan the session keeps. The function must answer exactly what the statement does, and a missing
// one must cost nothing but the plain statement.

const postgres = env.DB_BACKEND === "postgres";

/** Runs `action` (a format() of the function's name, arguments and result) for every kept plan's function. */
const eachFunction = (action: string) =>
  DB.prepare(
    `DO $$ DECLARE f record; BEGIN
       FOR f IN SELECT oid, proname FROM pg_proc WHERE proname LIKE 'es_plan_%' LOOP
         EXECUTE format(${action}, f.proname, pg_get_function_identity_arguments(f.oid), pg_get_function_result(f.oid));
       END LOOP; END $$`,
  ).run();

const renderFunctions = async () =>
  (await DB.prepare("SELECT proname FROM pg_proc WHERE proname LIKE 'es_plan_%' AND prosrc LIKE '%json_build_array%'").all()).results;

describe.skipIf(!postgres)("kept plans (Postgres)", () => {
  it("a list is rendered by the function made from its statement; dropped, the statement answers and it is made again", async () => {
    const a = await actor("write_post");
    for (const text of ["kept one", "kept two", "kept three"]) expect((await call("POST", "/posts", { token: a.token, json: { text } })).status).toBe(201);
    const path = `/users/${a.user.id}/posts`;
    const first = await call("GET", path, { token: a.token });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.map((p: { content: { text: string } }) => p.content.text)).toEqual(["kept three", "kept two", "kept one"]);
    expect((await renderFunctions()).length).toBeGreaterThan(0);

    // Every kept plan's function emptied: the list comes back empty, so it is what answers.
    await eachFunction(`'CREATE OR REPLACE FUNCTION %I(%s) RETURNS %s LANGUAGE plpgsql STABLE AS ''BEGIN RETURN; END'''`);
    const emptied = await call("GET", path, { token: a.token });
    expect(emptied.status, emptied.text).toBe(200);
    expect(emptied.body.data).toEqual([]);

    // Dropped: the statement as written answers, the same as before, and the function is made again.
    await eachFunction(`'DROP FUNCTION %I(%s)'`);
    expect(await renderFunctions()).toEqual([]);
    const plain = await call("GET", path, { token: a.token });
    expect(plain.status, plain.text).toBe(200);
    expect(plain.body.data).toEqual(first.body.data);
    expect((await renderFunctions()).length).toBeGreaterThan(0);
    const kept = await call("GET", path, { token: a.token });
    expect(kept.body.data).toEqual(first.body.data);
  });
});
