import { iso } from "../http/time";
import type { AppRecord } from "../stores/apps";
import type { UserRecord } from "../stores/users";
import { emptyContent, type StoredContent } from "./content";
import type { ViewContext } from "./context";
import { embedUser } from "./user";

/** What objects embed as `source`: a deleted client shows as id `0`, name `[REMOVED]`. */
export function renderClientRef(app: Pick<AppRecord, "clientId" | "name" | "url" | "deletedAt"> | null | undefined) {
  if (!app || app.deletedAt != null) return { id: "0", name: "[REMOVED]", url: "" };
  return { id: app.clientId, name: app.name, url: app.url };
}

/** The detail view of GET /clients/{client_id}. */
export function renderClientDetail(app: AppRecord, owner: UserRecord | null, view: ViewContext) {
  return {
    ...renderClientRef(app),
    created_at: iso(app.createdAt),
    ...(owner ? embedUser(owner, owner.id, view) : {}),
    logo_image: app.logoUrl ?? `${view.origin}/v1/static/default-logo.png`,
    posts: app.posts,
    content: (app.description as StoredContent | null) ?? emptyContent(view.schemaBase, "Client"),
  };
}
