import type { BanRecord } from "../objects/rate-limiter";

/** KV's smallest expirationTtl. */
const MIN_TTL_SECONDS = 60;
/** How long this isolate trusts a "not banned" answer (KV itself caches one at the edge for 60 s). */
const NOT_BANNED_MS = 30_000;
/** Callers remembered per isolate at most (the oldest are forgotten first). */
const MEMO_MAX = 10_000;

const key = (caller: string) => `ban:${caller}`;

/** Bans this isolate knows of, and callers it recently found unbanned (ban null). */
const memo = new Map<string, { ban: BanRecord | null; checkedAt: number }>();

function remember(caller: string, ban: BanRecord | null): void {
  memo.delete(caller);
  memo.set(caller, { ban, checkedAt: Date.now() });
  if (memo.size > MEMO_MAX) memo.delete(memo.keys().next().value!);
}

/** The caller's ban at `now` if this isolate already knows it: no I/O at all. */
export function knownBan(caller: string, now: number): BanRecord | null {
  const ban = memo.get(caller)?.ban;
  return ban && ban.until > now ? ban : null;
}

/**
 * The caller's ban at `now`, if any. A banned caller is refused here, at the edge, without
 * reaching its Durable Object: from this isolate's memory when it has seen the ban, otherwise
 * from KV. A record written elsewhere may take a while to arrive in KV, and a "not banned" answer
 * is trusted for 30 s, which is why the Durable Object knows the ban too.
 */
export async function findBan(kv: KVNamespace, caller: string, now: number): Promise<BanRecord | null> {
  const known = memo.get(caller);
  if (known?.ban && known.ban.until > now) return known.ban;
  if (known && !known.ban && Date.now() - known.checkedAt < NOT_BANNED_MS) return null;
  const ban = await kv.get<BanRecord>(key(caller), "json");
  const active = ban && ban.until > now ? ban : null;
  remember(caller, active);
  return active;
}

/** Remembers a ban the Durable Object reported, and records it in KV when it is a new one. */
export async function saveBan(kv: KVNamespace, caller: string, ban: BanRecord, now: number, isNew: boolean): Promise<void> {
  remember(caller, ban);
  if (!isNew) return;
  // KV drops the record by itself when the ban lapses.
  await kv.put(key(caller), JSON.stringify(ban), { expirationTtl: Math.max(MIN_TTL_SECONDS, ban.until - now) });
}
