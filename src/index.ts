import { createApp } from "./app";
import { deliverEvents } from "./events/deliver";
import { setEventSink } from "./events/publish";

export { RateLimiter } from "./objects/rate-limiter";
export { PollCloser } from "./objects/poll-closer";
export { PresenceTimer } from "./objects/presence-timer";
export { AppStreamRegistry } from "./objects/app-stream-registry";
export { AppStreamHub } from "./objects/app-stream-hub";
export { UserStreamHub } from "./objects/user-stream-hub";
export { StreamRelay } from "./objects/stream-relay";

// Events are delivered to the stream sockets (src/events/deliver.ts) by the outbox relay (src/objects/stream-relay.ts).
setEventSink(deliverEvents);

// Where a request enters: the Hono app (src/app.ts) handles all HTTP; Durable Object classes
// are exported here too, one per file under src/objects/.
const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
