import { createRouter } from "../../http/route";
import { feedRoutes } from "./rss";
import { oembedRoutes } from "./oembed";

/** Content for other sites: RSS feeds and oEmbed.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const feedsRouter = createRouter().route("/", feedRoutes).route("/", oembedRoutes);
