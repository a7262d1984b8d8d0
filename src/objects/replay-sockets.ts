import { REPLAY_CHUNK, yieldTurn } from "../events/replay";
import type { ReplayBuffer } from "./replay-buffer";

/**
 * The sockets of a hub that are still catching up on missed events. Live sends skip them: the
 * events published meanwhile are in the buffer, and the catch-up loop reads them from there.
 * The loop's last read (empty) and the socket's switch to live happen in one synchronous step,
 * so no event is sent twice or skipped across the switch. Frames go out in chunks with a turn
 * of the event loop in between, so a long replay never holds up live fan-out to other sockets.
 */
export class CatchUp {
  private readonly pending = new Set<WebSocket>();

  constructor(private readonly buffer: ReplayBuffer) {}

  /** True while `ws` is replaying (live events must not be sent to it). */
  has(ws: WebSocket): boolean {
    return this.pending.size > 0 && this.pending.has(ws);
  }

  /**
   * Sends the stream's events after cursor `after` to `ws`, then lets live events reach it.
   * The first chunk goes out synchronously (before the caller's next await).
   */
  start(ws: WebSocket, streamId: number, after: number, accept?: (type: string) => boolean, shape?: (frame: string) => string): Promise<void> {
    this.pending.add(ws);
    return this.run(ws, streamId, after, accept, shape);
  }

  private async run(ws: WebSocket, streamId: number, after: number, accept?: (type: string) => boolean, shape?: (frame: string) => string): Promise<void> {
    let position = after;
    try {
      for (;;) {
        const entries = this.buffer.read(streamId, position, REPLAY_CHUNK, accept);
        if (!entries.length) return;
        for (const e of entries) if (e.frame !== null) ws.send(shape ? shape(e.frame) : e.frame);
        position = entries[entries.length - 1].seq;
        await yieldTurn();
        if (ws.readyState !== WebSocket.OPEN) return;
      }
    } catch {
      // The socket closed during the replay: the client reconnects with its own cursor.
    } finally {
      this.pending.delete(ws);
    }
  }
}
