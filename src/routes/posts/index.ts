import { createRouter } from "../../http/route";
import { postSearchRoutes } from "./search";
import { postStreamRoutes } from "./streams";
import { postActionRoutes } from "./actions";
import { postRoutes } from "./posts";

/** Posts: create, read, revise, delete, actions (repost, bookmark), search and the post streams.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const postsRouter = createRouter().route("/", postSearchRoutes).route("/", postStreamRoutes).route("/", postActionRoutes).route("/", postRoutes);
