// Stream clients for the fault tests: sockets that keep every event frame they get, remember
// their cursor (the last `meta.id` processed, or the first frame's `meta.cursor`) and, when
// dropped, come back with it as a well-behaved client would (README "Resumable streams").
import WebSocket from "ws";

/** The identity of an event, to match it with the write that caused it (null: not one the test tracks). */
export function eventKey(frame) {
  const { meta, data } = frame;
  const first = Array.isArray(data) ? data[0] : data;
  if (!first || meta.is_deleted) return null;
  if (meta.type === "post" || meta.type === "message") return `${meta.type}:${first.id}`;
  if (meta.type === "bookmark") return `bookmark:${first.user?.id}:${first.post?.id}`;
  if (meta.type === "follow") return `follow:${first.user?.id}:${first.followed_user?.id ?? first.follows_user?.id}`;
  return null;
}

/**
 * A stream socket that survives runtime restarts. `url(cursor)` builds the upgrade URL for a
 * (re)connection; `kind` is "app" or "user" (a user stream resumes by its connection id too).
 */
export function resumingSocket({ name, origin, token, path, kind }) {
  const state = {
    name,
    kind,
    events: [], // { key, id, type }
    resumes: 0,
    gaps: [], // replay_gap reports
    refusals: [], // upgrades refused with a status (resume not possible)
    cursor: undefined,
    connectionId: undefined,
    ws: null,
    open: false,
    stopped: false,
  };
  const wsOrigin = origin.replace(/^http/, "ws");
  let waitOpen = null;

  const url = () => {
    const q = new URLSearchParams({ access_token: token });
    if (kind === "user" && state.connectionId) q.set("connection_id", state.connectionId);
    if (state.cursor !== undefined) q.set("since", state.cursor);
    return `${wsOrigin}${path}${path.includes("?") ? "&" : "?"}${q}`;
  };

  /** Opens (or reopens) the socket; resolves once its first frame arrived, rejects if refused. */
  function connect() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url());
      let first = true;
      // A client message at least every 60 s keeps the socket (decisions §8).
      const pinger = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send("ping"), 20_000);
      const fail = (e) => (first ? reject(e) : undefined);
      ws.on("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => {
          state.refusals.push(`${res.statusCode} ${body.slice(0, 200)}`);
          fail(new Error(`${name}: upgrade refused ${res.statusCode} ${body.slice(0, 200)}`));
        });
      });
      ws.on("error", fail);
      ws.on("close", () => {
        clearInterval(pinger);
        if (state.ws === ws || first) state.open = false;
        if (first) fail(new Error(`${name}: closed before its first frame`));
      });
      ws.on("message", (raw) => {
        const text = String(raw);
        if (text === "pong") return;
        const frame = JSON.parse(text);
        if (first) {
          first = false;
          if (state.ws) state.resumes++;
          state.ws = ws;
          state.open = true;
          if (frame.meta.replay_gap) state.gaps.push({ since: state.cursor, gap: frame.meta.replay_gap });
          if (frame.meta.connection_id && kind === "user") state.connectionId = frame.meta.connection_id;
          // A client that has processed nothing yet keeps the position the stream starts after.
          if (state.cursor === undefined) state.cursor = frame.meta.cursor;
          resolve();
          return;
        }
        if (!frame.meta?.type) return;
        state.events.push({ key: eventKey(frame), id: frame.meta.id, type: frame.meta.type });
        state.cursor = frame.meta.id; // processed: the position to resume after
      });
    });
  }

  /** Connects until it works (the runtime may still be starting); gives up after `ms`. */
  async function ensureOpen(ms = 60_000) {
    if (state.open) return;
    waitOpen ??= (async () => {
      const until = Date.now() + ms;
      for (;;) {
        try {
          return await connect();
        } catch (e) {
          if (Date.now() > until || state.refusals.length > 3) throw e;
          await new Promise((r) => setTimeout(r, 300));
        }
      }
    })().finally(() => (waitOpen = null));
    return waitOpen;
  }

  function close() {
    state.stopped = true;
    state.ws?.close(1000);
  }

  return { state, ensureOpen, close };
}
