import { createRouter } from "../../http/route";
import { adminRoutes } from "./admin";
import { adminUserRoutes } from "./users";

/** The admin API (`/admin/*`, the admin token).
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const adminRouter = createRouter().route("/", adminRoutes).route("/", adminUserRoutes);
