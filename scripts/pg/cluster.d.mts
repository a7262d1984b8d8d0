// Types of what TypeScript files (vitest.config.ts) import from cluster.mjs.
/** Replaces database `to` with a copy of `from` as it is now. */
export declare function copyDatabase(from: string, to: string, opts?: { port?: number }): Promise<void>;
