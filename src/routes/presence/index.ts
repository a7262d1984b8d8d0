import { createRouter } from "../../http/route";
import { presenceRoutes } from "./presence";
import { channelPresenceRoutes } from "./channel-presence";

/** Presence: global (`/presence`, `/users/{id}/presence`) and per channel.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const presenceRouter = createRouter().route("/", presenceRoutes).route("/", channelPresenceRoutes);
