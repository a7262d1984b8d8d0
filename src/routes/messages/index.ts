import { createRouter } from "../../http/route";
import { messageSearchRoutes } from "./search";
import { messageListRoutes } from "./lists";
import { messageStickyRoutes } from "./sticky";
import { messageRoutes } from "./messages";

/** Channel messages: send, read, delete, lists, search, sticky.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const messagesRouter = createRouter()
  .route("/", messageSearchRoutes)
  .route("/", messageListRoutes)
  .route("/", messageStickyRoutes)
  .route("/", messageRoutes);
