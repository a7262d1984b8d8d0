import { createRouter } from "../../http/route";
import { pollListRoutes } from "./lists";
import { pollRoutes } from "./polls";

/** Polls: create, respond, read, lists.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const pollsRouter = createRouter().route("/", pollListRoutes).route("/", pollRoutes);
