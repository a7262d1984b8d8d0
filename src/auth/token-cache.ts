import type { DeferredCheck } from "../db";
import { ApiError } from "../http/errors";
import { decodeToken, tokenLookup, type TokenRow } from "../stores/tokens";

// Tokens this isolate has seen pass, by hash. Per isolate because it only saves a round trip: a
// read request with a known token starts at once and its token is checked again inside its first
// read (docs/benchmark.md, "The token rides with the first read"), so a deleted token, app or
// user is refused as before; nothing from here is trusted without that check.
const known = new Map<string, TokenRow>();
const KNOWN_MAX = 10_000;

/** Whether a looked-up token may be used: it exists, its app is not deleted, its user not disabled. */
export const usable = (found: TokenRow | undefined): found is TokenRow => !!found && found.app.deletedAt == null && !found.user?.isDisabled;

/** The token as last seen to pass in this isolate, if any. */
export function knownToken(hash: string): TokenRow | undefined {
  return known.get(hash);
}

/** Remembers a token that passed (the oldest entry goes when full). */
export function rememberToken(hash: string, row: TokenRow): void {
  if (known.size >= KNOWN_MAX && !known.has(hash)) known.delete(known.keys().next().value as string);
  known.set(hash, row);
}

/**
 * The check of a known token that rides in the request's first read: refreshes or forgets it.
 * `fresh` gets the row it read (the request's `auth` is then as new as its data).
 */
export function tokenCheck(hash: string, fresh: (row: TokenRow) => void): DeferredCheck {
  return {
    query: tokenLookup(hash).query,
    passes(result) {
      const found = decodeToken(result);
      if (!usable(found)) return false;
      rememberToken(hash, found);
      fresh(found);
      return true;
    },
    failure() {
      known.delete(hash);
      return ApiError.unauthorized("the access token is unknown or was deleted");
    },
  };
}
