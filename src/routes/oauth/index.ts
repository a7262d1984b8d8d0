import { createRouter } from "../../http/route";
import { tokenRoutes } from "./token";
import { appUserRoutes } from "./app-users";
import { clientRoutes } from "./clients";
import { oauthRoutes } from "./oauth";

/** OAuth 2 and tokens: `/oauth/*`, `/token`, `/clients/{id}`, `/apps/me/users/*`.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const oauthRouter = createRouter().route("/", tokenRoutes).route("/", appUserRoutes).route("/", clientRoutes).route("/", oauthRoutes);
