// `npm run seed`: fills the local database (through the running API, `npm start`) with a demo
// app, a few users and their content, and prints working tokens. `npm run seed -- --port 8788` or
// `PORT=8788 npm run seed` for a server started on another port.
import { readFileSync } from "node:fs";

// The server `npm start` runs: API_URL, else the port as `npm start` takes it (`--port N`, then PORT), else 8787.
const argv = process.argv.slice(2);
const portArg = argv.map((a, i) => (a === "--port" ? argv[i + 1] : /^--port=(.*)$/.exec(a)?.[1])).find((p) => p !== undefined);
const port = portArg ?? process.env.PORT ?? "8787";
if (!/^\d+$/.test(port)) {
  console.error(`Not a port: '${port}'. Use e.g. \`npm run seed -- --port 8788\` or \`PORT=8788 npm run seed\`.`);
  process.exit(1);
}
const base = process.env.API_URL ?? `http://localhost:${port}/v1`;
const admin = process.env.ADMIN_TOKEN ?? /^ADMIN_TOKEN=(.*)$/m.exec(readFileSync(".dev.vars", "utf8"))?.[1]?.trim();

async function call(method, path, { token, json, form } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  let body;
  if (json !== undefined) (headers["Content-Type"] = "application/json"), (body = JSON.stringify(json));
  if (form) body = new URLSearchParams(form);
  const res = await fetch(base + path, { method, headers, body });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

const suffix = Date.now().toString(36).slice(-4);
// The app's URL is this server's own origin, so its OAuth redirects may come back here: the reference
// page's Authorize (redirect page /v1/docs/oauth2-redirect.html, src/routes/sys/docs.ts) works with it.
const origin = new URL(base).origin;
const app = (await call("POST", "/admin/apps", { token: admin, json: { name: "Demo app", url: origin } })).data;
const appToken = (
  await call("POST", "/oauth/access_token", { form: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret } })
).access_token;

const people = [
  { username: `ada_${suffix}`, name: "Ada Lovelace", email: "ada@example.com" },
  { username: `alan_${suffix}`, name: "Alan Turing" },
  { username: `grace_${suffix}`, name: "Grace Hopper", type: "human" },
];
const scope = "basic email files follow messages public_messages polls presence stream update_profile write_post";
const tokens = {};
for (const p of people) {
  await call("POST", "/admin/users", { token: admin, json: { ...p, password: "demo-password" } });
  tokens[p.username] = (
    await call("POST", "/oauth/access_token", {
      form: {
        grant_type: "password",
        client_id: app.client_id,
        password_grant_secret: app.password_grant_secret,
        username: p.username,
        password: "demo-password",
        scope,
      },
    })
  ).access_token;
}

// Content through the public endpoints, where they exist on this server.
const [ada, alan, grace] = people.map((p) => tokens[p.username]);
const optional = async (what, fn) => fn().catch((e) => console.log(`  (skipped ${what}: ${e.message.slice(0, 80)})`));
await optional("posts", async () => {
  await call("POST", "/posts", { token: ada, json: { text: `Hello from the edge, @alan_${suffix}! #firstpost` } });
  await call("POST", "/posts", { token: alan, json: { text: "Reading [the docs](https://example.com/docs) today." } });
});
await optional("follows", async () => {
  await call("PUT", `/users/@alan_${suffix}/follow`, { token: ada });
  await call("PUT", `/users/@ada_${suffix}/follow`, { token: grace });
});
await optional("presence", () => call("PUT", "/users/me/presence", { token: grace, form: { presence: "writing a compiler" } }));

console.log(`Seeded ${base}
  app:        ${app.name}  client_id=${app.client_id}
              client_secret=${app.client_secret}
              password_grant_secret=${app.password_grant_secret}
  app token:  ${appToken}`);
for (const p of people) console.log(`  user ${p.username.padEnd(12)} password=demo-password  token=${tokens[p.username]}`);
console.log(`\nTry: curl -H "Authorization: Bearer ${ada}" ${base}/token`);
console.log(`Or open ${origin}/v1/docs?client_id=${app.client_id}, press Authorize, paste the client_secret under
authorizationCode, and sign in as ${people[0].username} (password demo-password).`);
