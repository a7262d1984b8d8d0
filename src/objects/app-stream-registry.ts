import { DurableObject } from "cloudflare:workers";
import { MORE_LIMITS } from "../config";
import { insertAppStreamIfRoom, listAppStreams, type AppStreamRecord } from "../stores/app-streams";
import { openDb } from "../db";

export type CreateStreamResult = { ok: true; stream: Omit<AppStreamRecord, "position"> } | { ok: false; error: "full" | "key_taken" };

/**
 * Creation of one app's streams (`getByName("app:<id>")`): creates run one after another here,
 * each reading the app's streams, checking the limit of MORE_LIMITS.appStreamsPerApp and the
 * key, and inserting, so concurrent creates can never make a sixth stream or reuse a key. (The
 * insert is conditional on the count as well.) Reads, updates and deletes go straight to D1.
 * Keys left out are numbered from a counter kept here, so a number is never handed out twice.
 */
export class AppStreamRegistry extends DurableObject<Env> {
  /** The tail of the queue of creates: a D1 call lets other calls in, so creates are chained explicitly. */
  private queue: Promise<unknown> = Promise.resolve();

  async create(appId: number, key: string | undefined, objectTypes: string[], createdAt: number): Promise<CreateStreamResult> {
    const run = this.queue.then(() => this.createNow(appId, key, objectTypes, createdAt));
    this.queue = run.catch(() => {});
    return run;
  }

  private async createNow(appId: number, key: string | undefined, objectTypes: string[], createdAt: number): Promise<CreateStreamResult> {
    const db = openDb(this.env);
    const max = MORE_LIMITS.appStreamsPerApp;
    const existing = await listAppStreams(db, appId);
    if (existing.length >= max) return { ok: false, error: "full" };
    const taken = new Set(existing.map((s) => s.key));
    if (key !== undefined && taken.has(key)) return { ok: false, error: "key_taken" };
    const stream = { appId, key: key ?? (await this.nextNumericKey(taken)), objectTypes, createdAt };
    if (!(await insertAppStreamIfRoom(db, stream, max))) return { ok: false, error: "full" };
    return { ok: true, stream };
  }

  private async nextNumericKey(taken: Set<string>): Promise<string> {
    let n = (await this.ctx.storage.get<number>("seq")) ?? 0;
    do n++;
    while (taken.has(String(n)));
    await this.ctx.storage.put("seq", n);
    return String(n);
  }
}
