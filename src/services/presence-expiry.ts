import { ApiError } from "../http/errors";

/** The longest a presence may last (resources/users/presence.md: "up to seven days"). */
export const MAX_PRESENCE_SECONDS = 7 * 24 * 3600;

/**
 * When a presence given `expiration` (unix seconds) lapses: undefined when not given (the
 * default lifetime applies); later than 7 days from `now` is cut to 7 days, as the reference
 * does; `now` or earlier means offline (the caller deletes the status). Not an integer → 400
 * naming `field`.
 */
export function parseExpiration(raw: string | undefined, field: string, now: number): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^-?\d{1,15}$/.test(raw.trim())) throw ApiError.badRequest(`'${field}' must be a unix timestamp in seconds`);
  return Math.min(Number(raw.trim()), now + MAX_PRESENCE_SECONDS);
}
