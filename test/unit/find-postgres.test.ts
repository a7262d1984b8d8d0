import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script (scripts/pg), without type declarations
import { findPostgresBin, installAdvice } from "../../scripts/pg/find-postgres.mjs";

/** A machine with `files` (full paths) on `platform`, PATH and pg_config as given. */
function machine(platform: string, files: string[], { PATH = "", PG_BIN, pgConfig }: { PATH?: string; PG_BIN?: string; pgConfig?: string } = {}) {
  return {
    platform,
    env: { PATH, PG_BIN },
    isFile: (f: string) => files.includes(f),
    listDir: (dir: string) => [...new Set(files.filter((f) => f.startsWith(dir + "/")).map((f) => f.slice(dir.length + 1).split("/")[0]))],
    pgConfigBindir: () => pgConfig ?? null,
  };
}
const server = (dir: string) => [`${dir}/initdb`, `${dir}/pg_ctl`];

describe("finding the Postgres server binaries", () => {
  it("Debian/Ubuntu: the newest /usr/lib/postgresql/<v>/bin (numeric order, not text)", () => {
    const m = machine("linux", [...server("/usr/lib/postgresql/9.6/bin"), ...server("/usr/lib/postgresql/16/bin"), ...server("/usr/lib/postgresql/15/bin")], {
      PATH: "/usr/bin:/bin",
    });
    expect(findPostgresBin(m)).toBe("/usr/lib/postgresql/16/bin");
  });

  it("skips a version folder without the server (client-only package)", () => {
    const m = machine("linux", ["/usr/lib/postgresql/17/bin/psql", ...server("/usr/lib/postgresql/15/bin")]);
    expect(findPostgresBin(m)).toBe("/usr/lib/postgresql/15/bin");
  });

  it("Fedora/Arch: initdb and pg_ctl on PATH; PGDG: /usr/pgsql-<v>/bin", () => {
    expect(findPostgresBin(machine("linux", server("/usr/bin"), { PATH: "/usr/local/bin:/usr/bin" }))).toBe("/usr/bin");
    expect(findPostgresBin(machine("linux", [...server("/usr/pgsql-14/bin"), ...server("/usr/pgsql-16/bin")], { PATH: "/usr/bin" }))).toBe("/usr/pgsql-16/bin");
  });

  it("macOS: Homebrew's postgresql@<v> on Apple silicon and Intel, then pg_config --bindir", () => {
    const arm = machine("darwin", [...server("/opt/homebrew/opt/postgresql@16/bin"), ...server("/opt/homebrew/opt/postgresql@17/bin")], {
      PATH: "/opt/homebrew/bin:/usr/bin",
    });
    expect(findPostgresBin(arm)).toBe("/opt/homebrew/opt/postgresql@17/bin");
    expect(findPostgresBin(machine("darwin", server("/usr/local/opt/postgresql@15/bin")))).toBe("/usr/local/opt/postgresql@15/bin");
    expect(findPostgresBin(machine("darwin", server("/opt/local/lib/postgresql16/bin"), { pgConfig: "/opt/local/lib/postgresql16/bin" }))).toBe(
      "/opt/local/lib/postgresql16/bin",
    );
  });

  it("PG_BIN wins over everything else", () => {
    const m = machine("linux", [...server("/usr/lib/postgresql/16/bin"), ...server("/opt/pg/bin")], { PG_BIN: "/opt/pg/bin" });
    expect(findPostgresBin(m)).toBe("/opt/pg/bin");
  });

  it("none: null, and the advice names the package of each OS", () => {
    expect(findPostgresBin(machine("linux", ["/usr/bin/psql"], { PATH: "/usr/bin" }))).toBeNull();
    expect(installAdvice("linux")).toMatch(
      /apt-get install -y --no-install-recommends postgresql[\s\S]*dnf install -y postgresql-server[\s\S]*pacman -S postgresql/,
    );
    expect(installAdvice("darwin")).toContain("brew install postgresql@17");
    expect(installAdvice("win32")).toContain("WSL");
  });
});
