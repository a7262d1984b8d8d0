import { createRouter } from "../../http/route";
import { fileRoutes } from "./files";
import { fileContentRoutes } from "./content";

/** Files: upload, metadata, content.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const filesRouter = createRouter().route("/", fileRoutes).route("/", fileContentRoutes);
