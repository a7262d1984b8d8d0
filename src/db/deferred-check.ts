import type { Executor, Query, RawResult } from "./types";

/**
 * A read that must pass before anything a request does with the database counts: the check of a
 * token the isolate already knows (src/auth/token-cache.ts). Deferred, it rides in the request's
 * first read-only batch, so an authenticated read costs one round trip instead of two; before a
 * write (or a drizzle builder's statement) it runs alone first, so nothing is written on a check
 * that fails.
 */
export interface DeferredCheck {
  query: Query;
  /** Whether the check's rows let the request go on. */
  passes(result: RawResult): boolean;
  /** The error the request fails with when the check does not pass. */
  failure(): Error;
}

const READ_ONLY = /^\s*(select|with)\b/i;
const WRITES = /\b(insert|update|delete)\b/i;
/** A statement that only reads (anything else counts as a write). */
export const readsOnly = (text: string) => READ_ONLY.test(text) && !WRITES.test(text);

type State = { kind: "none" } | { kind: "pending"; check: DeferredCheck } | { kind: "running"; done: Promise<void> } | { kind: "failed"; error: Error };

/**
 * The deferred check of one request's database handle. `executor` wraps the request's executor;
 * `settle()` runs the check alone if it is still pending (before a statement that cannot carry it,
 * and at the end of the request). `primary`: where a check that failed on a replica that may lag is
 * asked again (a token issued moments ago may not be there yet).
 */
export class CheckGate {
  private state: State = { kind: "none" };

  constructor(
    private readonly inner: Executor,
    private readonly primary?: () => Executor,
  ) {}

  defer(check: DeferredCheck): void {
    this.state = { kind: "pending", check };
  }

  /** Runs the pending check alone (no-op when none); throws its failure. */
  async settle(): Promise<void> {
    for (;;) {
      const s = this.state;
      if (s.kind === "none") return;
      if (s.kind === "failed") throw s.error;
      if (s.kind === "running") {
        await s.done.catch(() => {});
        continue;
      }
      await this.run(s.check, []);
      return;
    }
  }

  /** The request's executor: the first read-only batch carries the pending check. */
  executor(): Executor {
    return {
      kind: this.inner.kind,
      rows: (native) => this.inner.rows(native),
      batch: async (queries) => {
        for (;;) {
          const s = this.state;
          if (s.kind === "pending" && queries.every((q) => readsOnly(q.sql))) return this.run(s.check, queries);
          if (s.kind === "none") return this.inner.batch(queries);
          await this.settle();
        }
      },
    };
  }

  /** Runs `check` ahead of `queries` in one batch; the queries' results, once the check passed. */
  private async run(check: DeferredCheck, queries: Query[]): Promise<unknown[]> {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.state = { kind: "running", done };
    try {
      let results = await this.inner.batch([check.query, ...queries]);
      let passed = check.passes(this.inner.rows(results[0]));
      if (!passed && this.primary) {
        const primary = this.primary();
        results = await primary.batch([check.query, ...queries]);
        passed = check.passes(primary.rows(results[0]));
      }
      if (!passed) {
        const error = check.failure();
        this.state = { kind: "failed", error };
        throw error;
      }
      this.state = { kind: "none" };
      return results.slice(1);
    } catch (e) {
      // The batch failed for another reason: the check is still owed.
      if (this.state.kind === "running") this.state = { kind: "pending", check };
      throw e;
    } finally {
      finish();
    }
  }
}
