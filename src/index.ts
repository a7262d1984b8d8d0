import { createApp } from "./app";

// Where a request enters: the Hono app (src/app.ts) handles all HTTP; Durable Object classes
// are exported here too, one per file under src/objects/.
const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
