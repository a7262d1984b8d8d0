import type { AppRecord } from "../stores/apps";
import type { Db, RawResult } from "../db";
import type { TokenRecord } from "../stores/tokens";
import type { UserExtras, UserRecord } from "../stores/users";
import type { Meta } from "./envelope";
import type { BodyBound } from "./body-limit";
import type { RateLimiter } from "../objects/rate-limiter";

/** Who is calling: resolved once per request from the bearer token. */
export interface Auth {
  kind: "user" | "app";
  token: TokenRecord;
  scopes: string[];
  app: AppRecord;
  user: (UserRecord & Partial<UserExtras>) | null;
}

/** Hono environment of every router: bindings plus the per-request services on `c.var`. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    db: Db;
    /** The R2 bucket of file contents and profile images (src/middleware/services.ts). */
    files: R2Bucket;
    /** The KV namespace of rate-limit bans. */
    bans: KVNamespace;
    /** The rate limiter object of a caller (IP or token hash). */
    rateLimiter: (caller: string) => DurableObjectStub<RateLimiter>;
    auth: Auth | null;
    extraMeta?: Meta;
    /** Results of the reads a route asked to run with the token lookup (`readAlongsideToken`). */
    alongside?: RawResult[];
    /** The bound on the request body (src/http/body-limit.ts); absent when there is no body. */
    bodyBound?: BodyBound;
  };
};
