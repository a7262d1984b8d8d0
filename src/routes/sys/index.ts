import { createRouter } from "../../http/route";
import { sysRoutes } from "./sys";
import { staticRoutes } from "./static";
import { textRoutes } from "./text";
import { benchRoutes } from "./bench";
import { opsRoutes } from "./ops";

/** Server information and utilities: `/sys/*` (config, stats, file operations, bench probes), `/static/{name}`, `/text/process`.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const sysRouter = createRouter().route("/", sysRoutes).route("/", staticRoutes).route("/", textRoutes).route("/", benchRoutes).route("/", opsRoutes);
