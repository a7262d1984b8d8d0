import { hasScope } from "../auth/scopes";
import { MORE_LIMITS } from "../config";
import type { Auth } from "../http/types";
import { renderClientRef } from "./client";
import type { ViewContext } from "./context";
import { renderUser } from "./user";

/** The Token object: app and scopes; for user tokens also the user (email only under the email scope) and storage. */
export function renderToken(auth: Auth, view: ViewContext) {
  const base = { app: renderClientRef(auth.app), scopes: auth.scopes };
  const user = auth.user;
  if (!user) return base;
  const total = MORE_LIMITS.storageQuotaBytes;
  return {
    ...base,
    user: renderUser(user, { ...view, viewerId: user.id }, { email: hasScope(auth.scopes, "email") }),
    storage: { available: Math.max(0, total - user.storageUsed), total },
  };
}
