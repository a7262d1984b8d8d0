import { REPLAY_CHUNK, yieldTurn } from "../events/replay";

/** One replayed entry: its position and ready frame (null: not for this socket, passed over). */
export interface ReplayRead {
  seq: number;
  frame: string | null;
}

/** Reads a socket's next entries after a position, in order, at most `limit`. */
export type ReplayReader = (after: number, limit: number) => ReplayRead[];

/**
 * The sockets of a hub that are still catching up on missed events. Live sends skip them: the
 * events published meanwhile are in the hub's storage, and the catch-up loop reads them from
 * there. The loop's last read (empty) and the socket's switch to live happen in one synchronous
 * step, so no event is sent twice or skipped across the switch. Frames go out in chunks with a
 * turn of the event loop in between, so a long replay never holds up live fan-out to others.
 */
export class CatchUp {
  private readonly pending = new Set<WebSocket>();

  /** True while `ws` is replaying (live events must not be sent to it). */
  has(ws: WebSocket): boolean {
    return this.pending.size > 0 && this.pending.has(ws);
  }

  /**
   * Sends what `read` finds after position `after` to `ws`, then lets live events reach it.
   * The first chunk goes out synchronously (before the caller's next await).
   */
  start(ws: WebSocket, after: number, read: ReplayReader, shape?: (frame: string) => string): Promise<void> {
    this.pending.add(ws);
    return this.run(ws, after, read, shape);
  }

  private async run(ws: WebSocket, after: number, read: ReplayReader, shape?: (frame: string) => string): Promise<void> {
    let position = after;
    try {
      for (;;) {
        const entries = read(position, REPLAY_CHUNK);
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
