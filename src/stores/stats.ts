import { sql } from "drizzle-orm";
import type { Db } from "../db";
import { runBatch } from "../db/batch";

/** Network statistics for GET /sys/stats, read in one batch. */
export async function readStats(db: Db, nowSeconds: number, activeDays = 30) {
  const since = new Date((nowSeconds - (activeDays - 1) * 86400) * 1000).toISOString().slice(0, 10);
  const [totalsRes, activeRes] = await runBatch(db, [
    sql`select
      (select count(*) from apps) as clients_created,
      (select count(*) from apps where is_public = 1 and deleted_at is null) as clients_public,
      (select min(created_at) from users) as first_at,
      (select count(*) from files) as files_created,
      (select count(*) from messages) as messages_created,
      (select count(*) from polls) as polls_created,
      (select count(*) from posts) as posts_created,
      (select count(*) from users) as users_created,
      (select count(*) from users where is_disabled = 1) as users_disabled,
      (select count(*) from presence where expires_at > ${nowSeconds}) as users_present`,
    sql`select day, count(*) as n from user_activity where day >= ${since} group by day order by day`,
  ]);
  const t = totalsRes.results[0] as Record<string, number | null>;
  const active = activeRes.results as { day: string; n: number }[];
  return {
    clients: { created: t.clients_created ?? 0, public: t.clients_public ?? 0 },
    days: t.first_at == null ? 0 : Math.floor((nowSeconds - t.first_at) / 86400) + 1,
    files: { created: t.files_created ?? 0 },
    messages: { created: t.messages_created ?? 0 },
    polls: { created: t.polls_created ?? 0 },
    posts: { created: t.posts_created ?? 0 },
    users: {
      active: Object.fromEntries(active.map((r) => [r.day, r.n])),
      created: t.users_created ?? 0,
      disabled: t.users_disabled ?? 0,
      present: t.users_present ?? 0,
    },
  };
}
