import type { AppStreamRecord } from "../stores/app-streams";

/**
 * `stream_url` (decisions §8): the configured public origin, or the request's own, as a
 * WebSocket address (https → wss, http → ws).
 */
export const streamUrl = (origin: string) => origin.replace(/^http(s?):/, "ws$1:");

/** The App stream object (api.md "Resources and their fields"); `is_deleted` only in responses to deletion. */
export function renderAppStream(s: Omit<AppStreamRecord, "position">, origin: string, deleted = false) {
  return {
    key: s.key,
    object_types: s.objectTypes,
    endpoint: `${streamUrl(origin)}/v1/app`,
    type: "long_poll" as const,
    ...(deleted ? { is_deleted: true as const } : {}),
  };
}
