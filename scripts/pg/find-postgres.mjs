// Where the Postgres server binaries (initdb, pg_ctl) are on this machine. Pure: the file system,
// PATH and `pg_config --bindir` come in as arguments, so the unit test (test/unit/find-postgres.test.ts)
// can describe any machine. scripts/pg/cluster.mjs passes the real ones.

/** Version-numbered directory names newest first ("17" > "16" > "9.6"). */
const newestFirst = (names) =>
  [...names].sort((a, b) => {
    const [x, y] = [a, b].map((n) => (n.match(/\d+(?:\.\d+)?/)?.[0] ?? "0").split(".").map(Number));
    return y[0] - x[0] || (y[1] ?? 0) - (x[1] ?? 0);
  });

/**
 * The directories to look in, in order: PG_BIN, the versioned install folders of Debian/Ubuntu
 * (/usr/lib/postgresql/<v>/bin, which CI uses), PGDG on Fedora/RHEL (/usr/pgsql-<v>/bin), Homebrew
 * (/opt/homebrew and /usr/local, `postgresql@<v>` then `postgresql`), Postgres.app, then
 * `pg_config --bindir` and every PATH entry (Fedora's and Arch's packages put pg_ctl in /usr/bin).
 * @param {{ platform: string, env: Record<string,string|undefined>, listDir: (dir:string)=>string[],
 *           pgConfigBindir?: () => string | null }} machine
 * @returns {string[]}
 */
export function postgresBinCandidates({ platform, env, listDir, pgConfigBindir = () => null }) {
  const out = [];
  if (env.PG_BIN) out.push(env.PG_BIN);
  if (platform === "linux") {
    out.push(...newestFirst(listDir("/usr/lib/postgresql")).map((v) => `/usr/lib/postgresql/${v}/bin`));
    out.push(...newestFirst(listDir("/usr").filter((d) => /^pgsql-\d/.test(d))).map((d) => `/usr/${d}/bin`));
  }
  if (platform === "darwin") {
    for (const prefix of ["/opt/homebrew/opt", "/usr/local/opt"]) {
      out.push(...newestFirst(listDir(prefix).filter((d) => /^postgresql@\d/.test(d))).map((d) => `${prefix}/${d}/bin`));
      out.push(`${prefix}/postgresql/bin`);
    }
    out.push("/Applications/Postgres.app/Contents/Versions/latest/bin");
  }
  const fromPgConfig = pgConfigBindir();
  if (fromPgConfig) out.push(fromPgConfig);
  const sep = platform === "win32" ? ";" : ":";
  out.push(...(env.PATH ?? "").split(sep).filter(Boolean));
  return [...new Set(out)];
}

/**
 * The first candidate directory holding both initdb and pg_ctl, or null.
 * @param {Parameters<typeof postgresBinCandidates>[0] & { isFile: (path:string)=>boolean }} machine
 */
export function findPostgresBin(machine) {
  const exe = machine.platform === "win32" ? ".exe" : "";
  return postgresBinCandidates(machine).find((dir) => ["initdb", "pg_ctl"].every((t) => machine.isFile(`${dir}/${t}${exe}`))) ?? null;
}

/** What to install, per OS, when no Postgres server binaries were found. */
export function installAdvice(platform) {
  const where =
    "The project starts its own throwaway cluster; no system service needs to run. " +
    "Binaries elsewhere: set PG_BIN to their folder (the one holding initdb and pg_ctl).";
  if (platform === "darwin") {
    return (
      "Postgres server binaries (initdb, pg_ctl) not found. On macOS: `brew install postgresql@17` " +
      "(found under $(brew --prefix)/opt/postgresql@17/bin), or Postgres.app. " +
      where
    );
  }
  if (platform === "linux") {
    return (
      "Postgres server binaries (initdb, pg_ctl) not found. Install them:\n" +
      "  Debian/Ubuntu:  sudo apt-get install -y --no-install-recommends postgresql\n" +
      "  Fedora/RHEL:    sudo dnf install -y postgresql-server\n" +
      "  Arch:           sudo pacman -S postgresql\n" +
      where
    );
  }
  return (
    `Postgres server binaries (initdb, pg_ctl) not found, and ${platform} is not a platform the local ` +
    "cluster supports: use Linux, macOS or WSL, or point DATABASE_URL at a Postgres you run. " +
    where
  );
}
