import { DurableObject } from "cloudflare:workers";
import { publishFromEnv, type DomainEvent } from "../events/publish";
import { openDb } from "../db";
import { pollsByIds } from "../stores/polls";
import { renderPollEvent } from "../views/poll";

/**
 * Publishes a poll's `close` event when its `closed_at` passes: one instance per poll (named by
 * the poll id) holding a Durable Object alarm at `closed_at`. Closing itself needs nothing
 * stored: a poll is closed whenever `closed_at <= now`; this only tells the streams. A poll
 * deleted before it closes publishes nothing.
 */
export class PollCloser extends DurableObject<Env> {
  /** Sets the alarm for a newly created poll; `origin` is what its views link to. */
  async arm(pollId: number, closedAt: number, origin: string): Promise<void> {
    await this.ctx.storage.put({ pollId, origin });
    await this.ctx.storage.setAlarm(closedAt * 1000);
  }

  override async alarm(): Promise<void> {
    await this.close();
  }

  /**
   * Publishes the close event if the poll exists and is closed at `now` (unix seconds), then
   * forgets the poll; re-arms if woken early. Returns the event published (null if none).
   */
  async close(now = Math.floor(Date.now() / 1000)): Promise<DomainEvent | null> {
    const stored = await this.ctx.storage.get<number | string>(["pollId", "origin"]);
    const pollId = stored.get("pollId") as number | undefined;
    if (pollId === undefined) return null;
    const [p] = await pollsByIds(openDb(this.env), [pollId], null, now);
    if (p && p.poll.closedAt > now) {
      await this.ctx.storage.setAlarm(p.poll.closedAt * 1000);
      return null;
    }
    let event: DomainEvent | null = null;
    if (p) {
      const view = { viewerId: null, schemaBase: this.env.SCHEMA_BASE, origin: String(stored.get("origin") ?? ""), now };
      event = { type: "poll", data: renderPollEvent(p, p.user, view), route: { userIds: [p.poll.userId] } };
      publishFromEnv(this.env, this.ctx, event);
    }
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return event;
  }
}

/** Arms the close event of a new poll (called after the response, through waitUntil). */
export function armPollClose(env: Env, pollId: number, closedAt: number, origin: string): Promise<void> {
  const stub = env.POLL_CLOSER.get(env.POLL_CLOSER.idFromName(String(pollId)));
  return stub.arm(pollId, closedAt, origin);
}
