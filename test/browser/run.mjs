// `npm run test:browser`: the pages people use, in a real browser. Debian's Chromium (never a
// downloaded one) driven by puppeteer-core against the built Worker under Miniflare
// (scripts/local-worker.mjs) on a free loopback port; the OAuth redirects land on a client app whose
// pages the browser's request interception serves. Covers the authorization-code flow end to end (consent, redirect,
// code exchange, GET /v1/token), the implicit flow, Deny, a bad redirect_uri, a wrong password, and
// the reference page rendering every operation of the OpenAPI document without any outside request, and
// a person using it: finding an operation by its summary, signing in with the app `npm run seed` made,
// reloading, and executing POST /v1/posts with its example body.
// Saves docs/consent.png, docs/consent-360.png and docs/reference.png (elsewhere with
// BROWSER_SCREENSHOTS_DIR, as `npm test` does, to leave docs/ alone). Ends with one line:
// `Browser: N passed, N failed, N skipped`. Without Chromium it says so and skips.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";
import { startWorker } from "../../scripts/local-worker.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ADMIN_TOKEN = "browser-admin-token";
const PASSWORD = "correct horse battery";
const docs = path.join(root, "docs");

if (!existsSync(CHROMIUM)) {
  console.log(`Browser tests skipped: ${CHROMIUM} not found (apt-get install chromium).`);
  console.log("Browser: 0 passed, 0 failed, 7 skipped");
  process.exit(0);
}

const started = Date.now();
const assert = (cond, message) => {
  if (!cond) throw new Error(message);
};

// The client app lives at https://photobox.example: the browser really navigates there, and the
// page's request interception answers for it, so nothing leaves this machine.
const clientOrigin = "https://photobox.example";
const callback = `${clientOrigin}/callback`;
const screenshots = process.env.BROWSER_SCREENSHOTS_DIR ?? docs;

const worker = await startWorker({ ADMIN_TOKEN, RATE_LIMITS: "0", PASSWORD_ITERATIONS: "1000" });
const api = worker.url + "/v1";
const profile = mkdtempSync(path.join(tmpdir(), "chromium-profile-"));
let browser;
const results = [];

async function call(method, p, { token, json, form } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  let body;
  if (json) (headers["Content-Type"] = "application/json"), (body = JSON.stringify(json));
  if (form) body = new URLSearchParams(form);
  const res = await fetch(api + p, { method, headers, body });
  return { status: res.status, body: await res.json().catch(() => null) };
}

try {
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    pipe: true,
    userDataDir: profile,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const app = (await call("POST", "/admin/apps", { token: ADMIN_TOKEN, json: { name: "Photo Box", url: clientOrigin } })).body.data;
  const user = (await call("POST", "/admin/users", { token: ADMIN_TOKEN, json: { username: "ada", password: PASSWORD, name: "Ada" } })).body.data;
  const consentUrl = (extra = {}) =>
    `${api}/oauth/authenticate?${new URLSearchParams({ client_id: app.client_id, redirect_uri: callback, response_type: "code", scope: "stream write_post presence", state: "st-42", ...extra })}`;

  /** A fresh page (its own cookies come from the browser profile) for one test. */
  async function test(name, fn) {
    const t = Date.now();
    const page = await browser.newPage();
    try {
      await page.setViewport({ width: 1100, height: 900 });
      // Swagger UI's first render of the whole document takes seconds of CPU; generous on a busy machine.
      page.setDefaultTimeout(60_000);
      page.setDefaultNavigationTimeout(90_000);
      await page.setRequestInterception(true);
      page.on("request", (r) => {
        if (r.url().startsWith(clientOrigin))
          r.respond({ status: 200, contentType: "text/html", body: "<!doctype html><title>Photo Box</title><h1>Back at Photo Box</h1>" });
        else r.continue();
      });
      await fn(page);
      results.push({ name, ok: true, ms: Date.now() - t });
    } catch (err) {
      results.push({ name, ok: false, ms: Date.now() - t, err });
    } finally {
      await page.close();
    }
  }

  /** Signs in on the consent page and presses a button; resolves to the URL the browser lands on. */
  async function decide(page, button, username = "ada", password = PASSWORD) {
    if (username !== undefined) await page.type("#username", username);
    if (password !== undefined) await page.type("#password", password);
    await Promise.all([page.waitForNavigation(), page.click(`button[value="${button}"]`)]);
    return new URL(page.url());
  }

  await test("authorization-code flow: consent, redirect, code exchange, GET /v1/token", async (page) => {
    const res = await page.goto(consentUrl());
    assert(res.status() === 200, `consent page answered ${res.status()}`);
    assert((await page.$eval("h1", (h) => h.textContent)).includes("Photo Box wants to use your account"), "no app name heading");
    const scopes = await page.$$eval("ul.scopes li", (lis) => lis.map((li) => li.textContent));
    assert(scopes.length === 4 && scopes.some((s) => s.includes("live updates")), `scopes shown: ${scopes}`);
    assert((await page.$eval(".app a", (a) => a.href)).startsWith(clientOrigin), "no website link");
    assert(await page.$eval(".app img", (img) => img.complete && img.naturalWidth > 0), "logo not loaded");
    mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: path.join(screenshots, "consent.png") });
    await page.setViewport({ width: 360, height: 780 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert(overflow <= 0, `the page is ${overflow}px wider than a 360px screen`);
    await page.screenshot({ path: path.join(screenshots, "consent-360.png"), fullPage: true });
    const landed = await decide(page, "authorize");
    assert(landed.origin + landed.pathname === callback, `landed on ${landed}`);
    assert(landed.searchParams.get("state") === "st-42", "state not returned");
    const code = landed.searchParams.get("code");
    assert(code, "no code in the redirect");
    const exchange = await call("POST", "/oauth/access_token", {
      form: { grant_type: "authorization_code", client_id: app.client_id, client_secret: app.client_secret, code, redirect_uri: callback },
    });
    assert(exchange.status === 200, `code exchange answered ${exchange.status}`);
    const token = await call("GET", "/token", { token: exchange.body.access_token });
    assert(token.status === 200 && token.body.data.user.id === user.id, "GET /v1/token did not show the user");
    assert(token.body.data.scopes.join(" ") === "basic stream write_post presence", `scopes ${token.body.data.scopes}`);
  });

  await test("implicit flow: the token arrives in the fragment", async (page) => {
    await page.goto(consentUrl({ response_type: "token", scope: "stream" }));
    const landed = await decide(page, "authorize");
    const fragment = new URLSearchParams(landed.hash.slice(1));
    assert(landed.origin + landed.pathname === callback && fragment.get("state") === "st-42", `landed on ${landed}`);
    const token = await call("GET", "/token", { token: fragment.get("access_token") });
    assert(token.status === 200 && token.body.data.user.id === user.id, "the implicit token does not work");
  });

  await test("Deny goes back with error=access_denied", async (page) => {
    await page.goto(consentUrl());
    const landed = await decide(page, "deny", undefined, undefined);
    assert(landed.searchParams.get("error") === "access_denied" && landed.searchParams.get("state") === "st-42", `landed on ${landed}`);
    assert(!landed.searchParams.get("code"), "a code came with Deny");
  });

  await test("a bad redirect_uri is a page for a person", async (page) => {
    const res = await page.goto(consentUrl({ redirect_uri: "https://evil.example/steal" }));
    assert(res.status() === 400, `answered ${res.status()}`);
    const text = await page.$eval("main", (m) => m.innerText);
    assert(text.includes("not safe") && text.includes("evil.example"), `page says: ${text}`);
    assert(!(await page.$("form")), "the page has a sign-in form");
  });

  await test("a wrong password shows the form again, username kept", async (page) => {
    await page.goto(consentUrl());
    await decide(page, "authorize", "ada", "wrong password");
    assert(new URL(page.url()).origin === worker.url, "left the consent page");
    const alert = await page.$eval('[role="alert"]', (p) => p.textContent);
    assert(alert.includes("do not match"), `alert says: ${alert}`);
    assert((await page.$eval("#username", (i) => i.value)) === "ada", "username not kept");
    assert((await page.$eval("#password", (i) => i.value)) === "", "password kept");
  });

  await test("reference page renders every operation, with nothing from outside", async (page) => {
    const outside = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(worker.url) && !r.url().startsWith("data:")) outside.push(r.url());
    });
    const doc = await (await fetch(`${api}/openapi.json`)).json();
    const operations = Object.entries(doc.paths).flatMap(([p, item]) =>
      Object.keys(item)
        .filter((m) => ["get", "put", "post", "delete", "patch"].includes(m))
        .map((m) => `${m.toUpperCase()} ${p}`),
    );
    await page.goto(`${api}/docs`, { waitUntil: "networkidle0" });
    // Swagger UI renders a long list (150 tags and operations or more) virtually, only what is on
    // screen: scroll through it and collect every operation it shows.
    await page.waitForSelector(".opblock");
    const seen = new Set();
    let lastY = -1;
    for (let step = 0; step < 500; step++) {
      const now = await page.$$eval(".opblock", (blocks) =>
        blocks.map(
          (b) =>
            `${b.querySelector(".opblock-summary-method")?.textContent} ${b.querySelector(".opblock-summary-path, .opblock-summary-path__deprecated")?.getAttribute("data-path")}`,
        ),
      );
      for (const op of now) seen.add(op);
      const y = await page.evaluate(() => window.scrollY);
      if (y === lastY) break;
      lastY = y;
      await page.evaluate(() => window.scrollBy(0, Math.floor(window.innerHeight * 0.8)));
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    const shown = [...seen];
    await page.evaluate(() => window.scrollTo(0, 0));
    const missing = operations.filter((o) => !shown.includes(o));
    assert(
      shown.length === operations.length && !missing.length,
      `${shown.length} operations shown, ${operations.length} in the document; missing ${missing.slice(0, 5)}`,
    );
    assert(!operations.some((o) => o.includes("/sys/bench/")), "the benchmark routes are advertised");
    await page.click(".btn.authorize");
    await page.waitForSelector(".auth-container");
    const schemes = await page.$$eval(".auth-container h4", (hs) => hs.map((h) => h.textContent));
    assert(
      schemes.some((s) => s.includes("oauth2")),
      `Authorize offers ${schemes}`,
    );
    await page.click(".btn-done, .close-modal");
    assert(!outside.length, `requests left the server: ${outside.slice(0, 3)}`);
    await page.setViewport({ width: 1280, height: 1500 });
    await page.screenshot({ path: path.join(screenshots, "reference.png") });
    console.log(`     reference page: ${shown.length} of ${operations.length} operations`);
  });

  await test("reference page: find by summary, Authorize with the seeded app, reload, Execute POST /v1/posts unedited", async (page) => {
    // The app, user and secrets exactly as `npm run seed` makes and prints them for this server.
    const seed = execFileSync(process.execPath, [path.join(root, "scripts/seed.mjs")], {
      env: { ...process.env, API_URL: api, ADMIN_TOKEN },
      encoding: "utf8",
    });
    const printed = (re) => re.exec(seed)?.[1] ?? assert(false, `seed printed no ${re}: ${seed}`);
    const [clientId, clientSecret, username] = [/client_id=(\S+)/, /client_secret=(\S+)/, /user (ada_\w+)/].map(printed);
    const docsLink = printed(/open (\S+\/v1\/docs\?client_id=\S+),/);
    assert(docsLink === `${worker.url}/v1/docs?client_id=${clientId}`, `seed's link: ${docsLink}`);
    await page.goto(docsLink, { waitUntil: "networkidle0" });
    await page.waitForSelector(".opblock");
    // Swagger UI's own filter matches tag names and paths only; ours also matches summaries.
    const shownOps = () =>
      page.$$eval(".opblock", (bs) =>
        bs.map(
          (b) =>
            `${b.querySelector(".opblock-summary-method")?.textContent} ${b.querySelector(".opblock-summary-path")?.getAttribute("data-path")} | ${b.querySelector(".opblock-summary-description")?.textContent}`,
        ),
      );
    await page.type(".operation-filter-input", "Bookmark a post");
    await page.waitForFunction(() => {
      const shown = [...document.querySelectorAll(".opblock")];
      return shown.length > 0 && shown.every((b) => /bookmark/i.test(b.textContent));
    });
    const found = await shownOps();
    assert(
      found.some((o) => o.startsWith("PUT /v1/posts/{post_id}/bookmark")),
      `the filter found: ${found}`,
    );
    assert(
      found.every((o) => /bookmark/i.test(o)),
      `the filter found: ${found}`,
    );
    await page.click(".operation-filter-input", { clickCount: 3 });
    await page.keyboard.press("Backspace");

    // Authorize: the authorization-code flow in Swagger UI's popup, through the consent page.
    await page.click(".btn.authorize");
    const flow = await page.waitForSelector("#client_secret_authorizationCode");
    assert((await page.$eval("#client_id_authorizationCode", (i) => i.value)) === clientId, "client_id not prefilled from the link");
    await flow.type(clientSecret);
    const popup = new Promise((resolve) => page.once("popup", resolve));
    const button = (await flow.evaluateHandle((i) => i.closest(".auth-container").querySelector("button.authorize"))).asElement();
    await button.click();
    const consent = await popup;
    await consent.waitForSelector("#username");
    await decide(consent, "authorize", username, "demo-password").catch(() => {}); // the popup closes itself
    await page.waitForFunction(() => [...document.querySelectorAll(".auth-container h6")].some((h) => h.textContent.includes("Authorized")));
    await page.click(".btn-done");
    assert(await page.$(".btn.authorize.locked"), "Authorize does not show as logged in");

    // A reload keeps the login; the operation opens from its link.
    await page.goto(`${api}/docs#/Posts/postPosts`, { waitUntil: "networkidle0" });
    await page.reload({ waitUntil: "networkidle0" });
    const op = await page.waitForSelector("#operations-Posts-postPosts .try-out__btn");
    assert(await page.$(".btn.authorize.locked"), "the login did not survive a reload");
    await op.click();
    await (await page.waitForSelector("#operations-Posts-postPosts button.execute")).click();
    const response = "#operations-Posts-postPosts .live-responses-table tbody tr.response";
    const status = await (await page.waitForSelector(`${response} .response-col_status`)).evaluate((s) => s.textContent.trim());
    const live = await page.$eval(`${response} .response-col_description pre`, (pre) => pre.textContent);
    assert(status === "201", `Execute answered ${status}: ${live.slice(0, 300)}`);
    const doc = await (await fetch(`${api}/openapi.json`)).json();
    const { text } = doc.paths["/v1/posts"].post.requestBody.content["application/json"].example;
    const reply = JSON.parse(live);
    assert(reply.data.content.text === text && reply.data.user.username === username, `created ${JSON.stringify(reply.data).slice(0, 200)}`);
    assert(!reply.data.reply_to && !reply.data.is_nsfw, "the example made a reply or an NSFW post");
  });
} finally {
  await browser?.close().catch(() => {});
  await worker.stop();
  rmSync(profile, { recursive: true, force: true });
}

for (const r of results) {
  console.log(`${r.ok ? "ok  " : "FAIL"} browser: ${r.name}  (${(r.ms / 1000).toFixed(1)} s)`);
  if (!r.ok) console.log(`     ${r.err?.message ?? r.err}`);
}
const failed = results.filter((r) => !r.ok).length;
console.log(`Browser tests took ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`Browser: ${results.length - failed} passed, ${failed} failed, 0 skipped`);
process.exit(failed ? 1 : 0);
