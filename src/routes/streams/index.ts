import { createRouter } from "../../http/route";
import { streamRoutes } from "./streams";
import { streamSocketRoutes } from "./sockets";
import { userStreamRoutes } from "./user-streams";

/** Live streams: app stream definitions, the WebSocket endpoints (`/app`, `/user`) and user stream subscriptions.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const streamsRouter = createRouter().route("/", streamRoutes).route("/", streamSocketRoutes).route("/", userStreamRoutes);
