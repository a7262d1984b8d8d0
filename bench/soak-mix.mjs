// The soak's traffic: users seeded through the API, then a steady mix of writes (posts, replies,
// channel messages, bookmarks and follows toggled) and reads (streams, lookups, channel messages)
// from all of them, as `npm start`'s clients would send it.

const SCOPE = "basic follow messages public_messages stream write_post";
const WORDS = "edge worker stream socket cache river music chess coffee garden release review morning".split(" ");
const pick = (arr) => arr[Math.floor(Math.random() * arr.length)];
const text = () => Array.from({ length: 8 }, () => pick(WORDS)).join(" ");

/** A JSON call to the API; resolves to `{ status, body }` (body parsed when it is JSON). */
export function client(origin) {
  return async function api(method, path, { token, json, form } = {}) {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    let body;
    if (json !== undefined) (headers["content-type"] = "application/json"), (body = JSON.stringify(json));
    if (form) body = new URLSearchParams(form);
    const res = await fetch(`${origin}/v1${path}`, { method, headers, body });
    const raw = await res.text();
    let parsed;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = raw;
    }
    return { status: res.status, body: parsed };
  };
}

/** Creates an app and `count` users, each with a token, a channel and a first post. */
export async function seedUsers(api, adminToken, count) {
  const must = async (p, what) => {
    const r = await p;
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  };
  const app = (await must(api("POST", "/admin/apps", { token: adminToken, json: { name: "Soak" } }), "app")).data;
  const users = [];
  const tag = Date.now().toString(36).slice(-5);
  for (let i = 0; i < count; i++) {
    const username = `soak_${tag}_${i}`;
    const user = (await must(api("POST", "/admin/users", { token: adminToken, json: { username, password: "soak-password" } }), "user")).data;
    const form = {
      grant_type: "password",
      client_id: app.client_id,
      password_grant_secret: app.password_grant_secret,
      username,
      password: "soak-password",
      scope: SCOPE,
    };
    const token = (await must(api("POST", "/oauth/access_token", { form }), "token")).access_token;
    const channel = (await must(api("POST", "/channels", { token, json: { type: "com.example.chat", acl: {} } }), "channel")).data;
    const post = (await must(api("POST", "/posts", { token, json: { text: text() } }), "post")).data;
    users.push({ id: user.id, token, channelId: channel.id, following: new Set(), bookmarked: new Set(), lastPost: post.id });
  }
  return users;
}

/**
 * The two halves of the mix as weighted lists of `[weight, (api, users) => Promise<{status}>]`.
 * Toggles (bookmark, follow) alternate so that rows come and go rather than pile up.
 */
export function mix() {
  const recent = []; // ids of recent posts, the targets of replies, bookmarks and lookups
  const remember = (r) => {
    if (r.status === 201 && r.body?.data?.id) recent.push(r.body.data.id), recent.length > 500 && recent.shift();
    return r;
  };
  const somePost = (users) => (recent.length ? pick(recent) : pick(users).lastPost);
  const writes = [
    [4, (api, users) => api("POST", "/posts", { token: pick(users).token, json: { text: text() } }).then(remember)],
    [1, (api, users) => api("POST", "/posts", { token: pick(users).token, json: { text: text(), reply_to: somePost(users) } }).then(remember)],
    [
      3,
      (api, users) => {
        const u = pick(users);
        return api("POST", `/channels/${u.channelId}/messages`, { token: u.token, json: { text: text() } });
      },
    ],
    [
      1,
      (api, users) => {
        const u = pick(users);
        const id = somePost(users);
        const on = u.bookmarked.has(id);
        on ? u.bookmarked.delete(id) : u.bookmarked.add(id);
        return api(on ? "DELETE" : "PUT", `/posts/${id}/bookmark`, { token: u.token });
      },
    ],
    [
      1,
      (api, users) => {
        const u = pick(users);
        const other = pick(users.filter((o) => o !== u));
        const on = u.following.has(other.id);
        on ? u.following.delete(other.id) : u.following.add(other.id);
        return api(on ? "DELETE" : "PUT", `/users/${other.id}/follow`, { token: u.token });
      },
    ],
  ];
  const reads = [
    [2, (api, users) => api("GET", "/posts/streams/global", { token: pick(users).token })],
    [2, (api, users) => api("GET", "/posts/streams/me", { token: pick(users).token })],
    [2, (api, users) => api("GET", `/posts/${somePost(users)}`, { token: pick(users).token })],
    [
      2,
      (api, users) => {
        const u = pick(users);
        return api("GET", `/channels/${u.channelId}/messages`, { token: u.token });
      },
    ],
    [1, (api, users) => api("GET", `/users/${pick(users).id}/posts`)],
    [1, (api, users) => api("GET", "/users/me", { token: pick(users).token })],
  ];
  return { writes, reads };
}

/** One operation drawn from a weighted list. */
export function draw(list) {
  let n = Math.random() * list.reduce((s, [w]) => s + w, 0);
  for (const [w, op] of list) if ((n -= w) < 0) return op;
  return list[list.length - 1][1];
}
