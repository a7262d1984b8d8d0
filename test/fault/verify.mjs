// What the fault test checks, from the writes it made and the frames each socket kept.

/** Per socket, the keys of the acknowledged writes whose event it must receive. */
export function expectations(writes, sockets, { streamUsers }) {
  const acked = writes.filter((x) => x.acked);
  const out = new Map();
  for (const s of sockets) {
    if (!s.user) {
      out.set(
        s,
        acked.map((x) => x.key),
      ); // app streams: every tracked type is public here
      continue;
    }
    // User streams: `/posts/streams/me` (own posts and those of the users followed at setup) and
    // the public channel's messages; bookmarks and follows go to no subscription of theirs.
    const u = streamUsers.find((x) => x.id === s.user.id);
    const audience = new Set([u.id, ...u.follows]);
    out.set(
      s,
      acked.filter((x) => x.key.startsWith("message:") || (x.key.startsWith("post:") && audience.has(x.author))).map((x) => x.key),
    );
  }
  return out;
}

const cursorOrder = (a, b) => {
  const big = (v) => (/^\d+$/.test(String(v)) ? BigInt(v) : null);
  const [x, y] = [big(a), big(b)];
  return x !== null && y !== null ? (x < y ? -1 : x > y ? 1 : 0) : String(a).localeCompare(String(b));
};

/**
 * Problems found: a gap reported or a resume refused; a cursor that does not increase; a tracked
 * event received twice (acknowledged or not); an acknowledged write's event missing; the events of
 * one writer's acknowledged writes out of that writer's order.
 */
export function verify(writes, sockets, expected) {
  const problems = [];
  const tracked = new Set(writes.filter((x) => x.key).map((x) => x.key));
  const loopOf = new Map(writes.filter((x) => x.acked).map((x) => [x.key, x.loop]));
  let checked = 0;
  let resumes = 0;
  for (const s of sockets) {
    const { name, events, gaps, refusals } = s.state;
    resumes += s.state.resumes;
    for (const g of gaps) problems.push(`${name}: resume after ${g.since} reported replay_gap ${g.gap}`);
    for (const r of refusals) problems.push(`${name}: a resume was refused: ${r}`);
    for (let i = 1; i < events.length; i++)
      if (cursorOrder(events[i - 1].id, events[i].id) >= 0) problems.push(`${name}: cursor ${events[i].id} after ${events[i - 1].id}`);
    const position = new Map();
    for (const [i, e] of events.entries()) {
      if (!e.key || !tracked.has(e.key)) continue;
      if (position.has(e.key)) problems.push(`${name}: ${e.key} received twice (cursors ${events[position.get(e.key)].id}, ${e.id})`);
      else position.set(e.key, i);
    }
    const want = expected.get(s);
    checked += want.length;
    const missing = want.filter((k) => !position.has(k));
    if (missing.length) problems.push(`${name}: ${missing.length} of ${want.length} acknowledged events missing: ${missing.slice(0, 8).join(", ")}`);
    const lastByLoop = new Map();
    for (const k of want) {
      if (!position.has(k)) continue;
      const loop = loopOf.get(k);
      const prev = lastByLoop.get(loop);
      if (prev && position.get(k) < position.get(prev)) problems.push(`${name}: ${k} arrived before ${prev}, acknowledged earlier by the same writer`);
      lastByLoop.set(loop, k);
    }
  }
  return { problems, checked, resumes, acked: loopOf.size, unacked: writes.filter((x) => !x.acked).length };
}
