import { createRouter } from "../../http/route";
import { channelExploreRoutes } from "./explore";
import { channelListRoutes } from "./lists";
import { channelSubscriptionRoutes } from "./subscriptions";
import { channelRoutes } from "./channels";

/** Channels: create, update, deactivate, lists and explore, subscriptions.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const channelsRouter = createRouter()
  .route("/", channelExploreRoutes)
  .route("/", channelListRoutes)
  .route("/", channelSubscriptionRoutes)
  .route("/", channelRoutes);
