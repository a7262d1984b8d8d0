import { iso } from "../http/time";
import type { MarkerRecord } from "../stores/markers";

/** The Marker object (api.md): ids as strings, `updated_at` ISO 8601, `version` opaque. */
export function renderMarker(m: MarkerRecord) {
  return {
    name: m.name,
    id: String(m.position),
    last_read_id: String(m.lastReadId),
    percentage: m.percentage,
    updated_at: iso(m.updatedAt),
    version: m.version,
  };
}

/** `meta.marker` of a markable stream (decisions §2): the marker, or `{name}` alone when unset. */
export function renderMarkerMeta(name: string, m: MarkerRecord | null) {
  return m ? renderMarker(m) : { name };
}
