import { beforeEach, describe, expect, it } from "vitest";
import { isPostgres } from "../../src/db";
import {
  APP_REF_TTL_MS,
  APP_REFS_MAX,
  clearAppRefs,
  knownAppIds,
  rememberApp,
  rememberDeletedApp,
  rememberedApp,
  renderedApp,
} from "../../src/stores/app-refs";

const ref = (n: number) => ({ clientId: `client${n}`, name: `App ${n}`, url: `https://app${n}.example`, deletedAt: null });
/** The ids a statement bound at `now` leaves out of its `apps` join. */
const listed = (now: number) => knownAppIds(now).replace(/[{},]/g, " ").trim().split(/\s+/).filter(Boolean).map(Number);

// D1's renders leave known clients out; Postgres joins every client and remembers none.
describe.skipIf(isPostgres)("clients remembered per isolate for renders", () => {
  beforeEach(clearAppRefs);

  it("lists a client as known for its TTL only, and keeps it for renders bound before it expired", () => {
    const t = 1_000_000;
    rememberApp(7, ref(7), t);
    expect(listed(t)).toEqual([7]);
    expect(listed(t + APP_REF_TTL_MS - 1)).toEqual([7]);
    expect(listed(t + APP_REF_TTL_MS)).toEqual([]); // read again by the next render
    expect(rememberedApp(7)).toEqual(ref(7)); // a statement bound just before still decodes it
    rememberApp(7, ref(7), t + APP_REF_TTL_MS);
    expect(listed(t + APP_REF_TTL_MS)).toEqual([7]);
  });

  it("binds the list as instr finds it", () => {
    rememberApp(3, ref(3), 0);
    rememberApp(11, ref(11), 0);
    expect(knownAppIds(1)).toBe(",3,11,");
  });

  it("shows a client deleted here as deleted at once, and no read that started before undoes it", () => {
    rememberApp(5, ref(5), 0);
    rememberDeletedApp(5, { ...ref(5), deletedAt: 1 }, 10);
    expect(listed(11)).toEqual([5]); // left out of renders: the memory answers
    expect(renderedApp(5, null)?.deletedAt).toBe(1); // rendered `[REMOVED]`
    rememberApp(5, ref(5), 12); // a page read before the deletion decodes after it
    expect(rememberedApp(5)?.deletedAt).toBe(1);
  });

  it("takes the row a render read, else the remembered client", () => {
    expect(renderedApp(9, ref(9))).toEqual(ref(9));
    expect(renderedApp(9, null)).toEqual(ref(9));
    expect(renderedApp(null, null)).toBeNull();
  });

  it("when full, drops only clients expired for a further TTL, and else remembers no more", () => {
    for (let i = 1; i <= APP_REFS_MAX; i++) rememberApp(i, ref(i), 0);
    rememberApp(APP_REFS_MAX + 1, ref(APP_REFS_MAX + 1), APP_REF_TTL_MS);
    expect(rememberedApp(APP_REFS_MAX + 1)).toBeNull();
    expect(rememberedApp(1)).toEqual(ref(1));
    rememberApp(APP_REFS_MAX + 1, ref(APP_REFS_MAX + 1), 2 * APP_REF_TTL_MS);
    expect(rememberedApp(APP_REFS_MAX + 1)).toEqual(ref(APP_REFS_MAX + 1));
    expect(rememberedApp(1)).toBeNull();
  });
});
