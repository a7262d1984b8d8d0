import { createRouter } from "../../http/route";
import { userListRoutes } from "./lists";
import { userRoutes } from "./users";
import { profileRoutes } from "./profile";
import { badgeRoutes } from "./badges";
import { imageRoutes } from "./images";
import { graphRoutes } from "./graph";
import { markerRoutes } from "./markers";
import { interactionRoutes } from "./interactions";

/** Users and what hangs off them: profiles and lookups, the social graph, badges, avatar and cover images, markers, interactions.
 * Mounted in this order: where a literal segment could be read as a parameter, the literal route comes first. */
export const usersRouter = createRouter()
  .route("/", userListRoutes)
  .route("/", userRoutes)
  .route("/", profileRoutes)
  .route("/", badgeRoutes)
  .route("/", imageRoutes)
  .route("/", graphRoutes)
  .route("/", markerRoutes)
  .route("/", interactionRoutes);
