// The load generator, run as its own process by bench/run.mjs so that it does not share an event
// loop with the runtime host. Reads a job as JSON on argv[2], runs autocannon at fixed
// concurrency, prints one JSON line: {requests_per_s, p50_ms, p99_ms, non2xx, errors}.
import autocannon from "autocannon";

const job = JSON.parse(process.argv[2]);
const { url, duration = 5, connections = 16, paths, tokens = [], headers = {} } = job;

let i = 0;
const result = await autocannon({
  url,
  duration,
  connections,
  pipelining: 1,
  headers,
  requests: [
    {
      // Rotate through the job's paths and tokens, so a page or id is not always the same
      // and per-token rate-limit buckets are spread (when the limiter is on).
      setupRequest(req) {
        const n = i++;
        req.path = paths[n % paths.length];
        // `bust`: a distinct harmless parameter per request, so no kept response is served.
        if (job.bust) req.path += `${req.path.includes("?") ? "&" : "?"}_b=${n}`;
        if (tokens.length) req.headers = { ...req.headers, authorization: `Bearer ${tokens[n % tokens.length]}` };
        return req;
      },
    },
  ],
});

process.stdout.write(
  JSON.stringify({
    requests_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  }) + "\n",
);
