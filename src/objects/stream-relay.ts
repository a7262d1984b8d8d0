import { DurableObject } from "cloudflare:workers";
import { openDb, type Db } from "../db";
import { rowsAfter, trimOutbox, type OutboxRow } from "../events/outbox";
import { renderFromRefs } from "../events/outbox-render";
import { sendToSink, type StampedEvent } from "../events/publish";
import { replayLimits } from "../events/replay";
import { appHubAt, configuredAppHubs, FIRST_RING, MAX_APP_STREAM_HUBS, type AppRing } from "../events/hubs";
import type { AppStreamHub } from "./app-stream-hub";
import { armAlarm } from "./socket-idle";

/** Rows read and delivered per step. */
const STEP = 100;
/** How long a reserved row waits for its writer's rendering before the relay renders it itself. */
const HAND_OFF_WAIT_MS = 1_000;
/** The alarm that always stands: catches up rows whose writer never poked, and trims. */
const HEARTBEAT_MS = 30_000;
/** Retry delays after a failed delivery: doubling from 500 ms, at most 30 s. */
const retryDelay = (failures: number) => Math.min(30_000, 500 * 2 ** Math.min(failures, 6));

/**
 * The relay (docs/streams.md, "Outbox and relay"): ONE object that moves `stream_outbox` rows to
 * the stream hubs (the event sink, src/events/deliver.ts) in sequence order, so every event has
 * one place in one global order.
 *
 * - `cursor` (its own storage) is the last sequence delivered; it moves only after the sink
 *   returned, so a crash mid-delivery delivers the same rows again, and the hubs skip a `seq`
 *   they have applied: at least once to the hubs, exactly once to the streams.
 * - Writers poke it after their commit with the rendered events (a latency hint and a saved
 *   read). Its alarm (persisted: it fires after a restart) delivers whatever no poke brought.
 * - A reserved row whose rendering has not arrived holds the rows after it for up to
 *   HAND_OFF_WAIT_MS; then the relay renders it from its reference.
 * - A failed delivery is retried by alarm with growing delays; nothing after it overtakes it.
 * - Delivered rows past the replay window are trimmed.
 * - It holds the active app hub ring and changes it between two deliveries (`applyRing`).
 *
 * Why a Durable Object and not Cloudflare Queues: a queue's consumer gets batches at least once
 * but with no order across batches (retries and concurrent consumers reorder), and a message is
 * sent after commit, so it is not atomic with the write either: the outbox row would still be
 * needed, and order would have to be rebuilt downstream. One object reading the table in id
 * order gives the order for free; its alarm is the durable retry.
 */
export class StreamRelay extends DurableObject<Env> {
  /** Renderings handed over by writers, by sequence, not yet delivered. */
  private readonly handed = new Map<number, StampedEvent>();
  /** When each reserved row without a rendering was first seen (Unix ms). */
  private readonly waitingSince = new Map<number, number>();
  private running: Promise<void> | null = null;
  private again = false;
  private failures = 0;

  /** The last sequence delivered. */
  private get cursor(): number {
    return (this.ctx.storage.kv.get<number>("cursor") ?? 0) as number;
  }

  private set cursor(seq: number) {
    this.ctx.storage.kv.put("cursor", seq);
  }

  /** The active app hub ring (README "Streams: the app hub ring"). */
  private get ring(): AppRing {
    return (this.ctx.storage.kv.get<AppRing>("ring") ?? FIRST_RING) as AppRing;
  }

  /** The ring size wanted: pinned by `resize`, else the deployment's APP_STREAM_HUBS. */
  private targetCount(): number {
    return (this.ctx.storage.kv.get<number>("pinned") as number | undefined) ?? configuredAppHubs(this.env);
  }

  /**
   * The active ring, and the highest sequence handed to the hubs so far (a cursor above it was
   * never sent: hubs ask when a `since` is ahead of what they applied).
   */
  async ringInfo(): Promise<{ ring: AppRing; sendingThrough: number }> {
    return { ring: this.ring, sendingThrough: Math.max(this.cursor, (this.ctx.storage.kv.get<number>("sending") ?? 0) as number) };
  }

  /**
   * Operators and tests: pins the ring at `count` hubs (null: back to APP_STREAM_HUBS, the
   * normal way) and applies it before the next delivery; returns the ring then active.
   */
  async resize(count: number | null): Promise<AppRing> {
    if (count === null) this.ctx.storage.kv.delete("pinned");
    else if (Number.isInteger(count) && count >= 1 && count <= MAX_APP_STREAM_HUBS) this.ctx.storage.kv.put("pinned", count);
    else throw new Error(`ring size must be an integer from 1 to ${MAX_APP_STREAM_HUBS}`);
    await this.run();
    return this.ring;
  }

  /**
   * Moves the app hub ring to the size wanted, between two deliveries (the caller holds the run):
   * 1. growing: each new hub gets a copy of hub 0's log (every hub holds every app event), so it
   *    can replay any key from where its old owner could;
   * 2. the new ring becomes active: deliveries go to its hubs, the Worker routes connects by it;
   * 3. every hub is told: it closes the sockets of keys it no longer owns (4004); a hub left out
   *    of a smaller ring closes all and forgets its log. Until told, hubs learn it from the
   *    next delivery or connect; a failed announcement is retried before the next delivery.
   */
  private async applyRing(): Promise<void> {
    const current = this.ring;
    const target = this.targetCount();
    if (target !== current.count) {
      for (let i = current.count; i < target; i++) await copyLog(appHubAt(this.env, 0), appHubAt(this.env, i));
      const next = { count: target, version: current.version + 1 };
      this.ctx.storage.kv.put("ring", next);
      this.ctx.storage.kv.put("ring_span", Math.max(current.count, target, (this.ctx.storage.kv.get<number>("ring_span") ?? 0) as number));
      console.log(JSON.stringify({ event: "app hub ring changed", from: current.count, to: target, version: next.version }));
    }
    const ring = this.ring;
    if (((this.ctx.storage.kv.get<number>("announced") ?? 0) as number) >= ring.version) return;
    const span = Math.max(ring.count, (this.ctx.storage.kv.get<number>("ring_span") ?? 0) as number);
    const told = await Promise.allSettled(Array.from({ length: span }, (_, index) => appHubAt(this.env, index).setRing({ ...ring, index })));
    const failed = told.filter((t) => t.status === "rejected");
    if (failed.length) throw new Error(`${failed.length} app hub(s) not told of ring ${ring.version}: ${String((failed[0] as PromiseRejectedResult).reason)}`);
    this.ctx.storage.kv.put("announced", ring.version);
  }

  /** A writer's hand-off after its commit: its rendered events (with their sequences). */
  async poke(events: StampedEvent[]): Promise<void> {
    for (const e of events) if (e.seq !== undefined && e.seq > this.cursor) this.handed.set(e.seq, e);
    await this.run();
  }

  /** What has been delivered, for tests and operators. */
  async status(): Promise<{ cursor: number; handed: number; failures: number }> {
    return { cursor: this.cursor, handed: this.handed.size, failures: this.failures };
  }

  override async alarm(): Promise<void> {
    await this.run();
    const db = openDb(this.env);
    await trimOutbox(db, this.cursor, Math.floor(Date.now() / 1000), replayLimits(this.env)).catch((e) =>
      console.error(JSON.stringify({ error: "outbox trim failed", detail: String(e) })),
    );
    await armAlarm(this.ctx, Date.now() + HEARTBEAT_MS);
  }

  /** Delivers until the outbox is drained (one run at a time; a call during a run makes it go round again). */
  private async run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.drain();
        } while (this.again);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private async drain(): Promise<void> {
    const db = openDb(this.env);
    for (;;) {
      try {
        await this.applyRing();
      } catch (e) {
        this.failures++;
        console.error(JSON.stringify({ error: "app hub ring change failed", failures: this.failures, detail: String(e) }));
        await armAlarm(this.ctx, Date.now() + retryDelay(this.failures));
        return;
      }
      const rows = await rowsAfter(db, this.cursor, STEP);
      if (!rows.length) break;
      const ready = await this.eventsOf(db, rows);
      if (!ready.length) {
        await armAlarm(this.ctx, Date.now() + HAND_OFF_WAIT_MS);
        return;
      }
      try {
        this.ctx.storage.kv.put("sending", ready[ready.length - 1].seq);
        await sendToSink(
          this.env,
          ready.map((r) => r.event).filter((e): e is StampedEvent => e !== null),
          this.ring,
        );
        this.failures = 0;
      } catch (e) {
        this.failures++;
        console.error(JSON.stringify({ error: "relay delivery failed", from: ready[0].seq, failures: this.failures, detail: String(e) }));
        await armAlarm(this.ctx, Date.now() + retryDelay(this.failures));
        return;
      }
      const last = ready[ready.length - 1].seq;
      this.cursor = last;
      for (const seq of this.handed.keys()) if (seq <= last) this.handed.delete(seq);
      for (const seq of this.waitingSince.keys()) if (seq <= last) this.waitingSince.delete(seq);
      if (ready.length < rows.length) {
        await armAlarm(this.ctx, Date.now() + HAND_OFF_WAIT_MS);
        return;
      }
    }
    // Drained: the heartbeat stays armed, so a row committed by a writer that dies before its poke is found.
    await armAlarm(this.ctx, Date.now() + HEARTBEAT_MS);
  }

  /**
   * The events of a run of rows, in order, up to the first reserved row still waiting for its
   * writer's rendering; rows the relay renders itself once they waited long enough. An event that
   * cannot be rendered is null (skipped, its sequence still passed).
   */
  private async eventsOf(db: Db, rows: OutboxRow[]): Promise<{ seq: number; event: StampedEvent | null }[]> {
    const now = Date.now();
    const out: { seq: number; event: StampedEvent | null }[] = [];
    const toRender: OutboxRow[] = [];
    // Every row of this read that lacks its rendering starts its wait now, not only the first: after
    // a crash all rows not yet delivered lost theirs (`handed` is memory), and waiting for them one
    // after the other held delivery back by a second per row (found by test/fault/kill-runtime.mjs).
    for (const row of rows) if (!row.payload && !this.handed.has(row.id) && !this.waitingSince.has(row.id)) this.waitingSince.set(row.id, now);
    for (const row of rows) {
      const handed = this.handed.get(row.id);
      if (handed) {
        out.push({ seq: row.id, event: handed });
        continue;
      }
      if (row.payload) {
        out.push({ seq: row.id, event: { ...(JSON.parse(row.payload) as StampedEvent), seq: row.id } });
        continue;
      }
      if (now - this.waitingSince.get(row.id)! < HAND_OFF_WAIT_MS) break;
      toRender.push(row);
      out.push({ seq: row.id, event: null });
    }
    if (toRender.length) {
      const rendered = await renderFromRefs(db, this.env, toRender);
      const bySeq = new Map(toRender.map((r, i) => [r.id, rendered[i]]));
      for (const o of out) if (bySeq.has(o.seq)) o.event = bySeq.get(o.seq) ?? null;
    }
    return out;
  }
}

/** Pages of a log copied per call when a hub joins the ring. */
const COPY_PAGE = 500;

/** Replaces `to`'s event log with a copy of `from`'s. */
async function copyLog(from: DurableObjectStub<AppStreamHub>, to: DurableObjectStub<AppStreamHub>): Promise<void> {
  let after = 0;
  for (let first = true; ; first = false) {
    const page = await from.exportLog(after, COPY_PAGE);
    await to.importLog(page.rows, first ? page.state : undefined);
    if (page.rows.length < COPY_PAGE) return;
    after = page.rows[page.rows.length - 1].seq;
  }
}
