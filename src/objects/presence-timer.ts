import { DurableObject } from "cloudflare:workers";
import { publishFromEnv } from "../events/publish";
import { presenceEvent } from "../services/presence";
import { openDb } from "../db";
import { expirePresence } from "../stores/presence";
import { renderPresence } from "../views/presence";

interface Target {
  userId: number;
  /** Origin of the request that armed the timer, for default avatar URLs in the event. */
  origin: string;
}

/**
 * Expiry of one user's presence (one object per user, `idFromName(String(userId))`). The
 * Worker arms it when the user comes online; the alarm then takes the status offline once it
 * has lapsed and emits the `user_presence` event. The database row is the truth: the alarm
 * re-reads it, so it is idempotent (alarms run at least once) and a status renewed after the
 * alarm was set is not touched; instead the alarm moves itself to the renewed expiry.
 */
export class PresenceTimer extends DurableObject<Env> {
  /**
   * Sets the alarm for a status that lapses at `expiresAt` on the caller's clock (`callerNow`);
   * the delay is measured on this object's clock, so skew between the two does not matter.
   */
  async arm(userId: number, expiresAt: number, callerNow: number, origin: string): Promise<void> {
    await this.ctx.storage.put<Target>("target", { userId, origin });
    await this.ctx.storage.setAlarm(Date.now() + Math.max(0, expiresAt - callerNow) * 1000);
  }

  override async alarm(): Promise<void> {
    const target = await this.ctx.storage.get<Target>("target");
    if (!target) return;
    const at = Math.floor(Date.now() / 1000);
    // A failure throws, and the runtime retries the alarm.
    const { expired, nextExpiry } = await expirePresence(openDb(this.env), target.userId, at);
    if (expired) {
      const origin = this.env.PUBLIC_ORIGIN || target.origin;
      publishFromEnv(this.env, this.ctx, presenceEvent(renderPresence(expired, origin)));
    } else if (nextExpiry !== null) {
      await this.ctx.storage.setAlarm(nextExpiry * 1000);
    }
  }
}
