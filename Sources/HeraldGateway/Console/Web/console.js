"use strict";
// The gateway console: one page, drawn here from the gateway's own REST API. Every value from
// the server reaches the page as text (textContent), never as markup; the key stays in this
// tab's sessionStorage and goes out only as a Bearer header to this origin.
const $ = (id) => document.getElementById(id);
const KEY = "herald.console.key", APP = "herald.console.app", THEME = "herald.console.theme";
const state = { apps: [], admin: false, timers: [], route: "" };

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) if (child !== null && child !== undefined && child !== false) node.append(child instanceof Node ? child : String(child));
  return node;
}
const svg = (tag, attributes, ...children) => {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) if (child) node.append(child instanceof Node ? child : String(child));
  return node;
};
const short = (text, n = 10) => text && text.length > n ? text.slice(0, n) + "…" : (text || "—");
// A token by its first and last eight digits: tokens of one app may share either end.
const tokenText = (token) => token && token.length > 20 ? `${token.slice(0, 8)}…${token.slice(-8)}` : (token || "—");
const time = (value) => value ? new Date(value).toLocaleString() : "—";
const plural = (n, word, words) => `${n} ${n === 1 ? word : (words || word + "s")}`;
const pill = (text) => el("span", { class: "pill " + text }, text);
const say = (text) => { $("message").textContent = text; };
const segment = encodeURIComponent;

// MARK: The API

class APIError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(method, path, body, headers) {
  const key = sessionStorage.getItem(KEY);
  const init = { method, headers: Object.assign({ Authorization: `Bearer ${key}` }, headers || {}), cache: "no-store" };
  if (body !== undefined) { init.body = typeof body === "string" ? body : JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  const response = await fetch(path, init);
  const text = await response.text();
  let value = null;
  try { value = text ? JSON.parse(text) : null; } catch (_) { value = text; }
  if (response.status === 401) { signOut("The key was refused (unknown or revoked): sign in again."); throw new APIError(401, value); }
  if (!response.ok) throw new APIError(response.status, value);
  return value;
}

// MARK: Signing in

function isLoopback(host) { return host === "localhost" || host === "[::1]" || host === "::1" || /^127\./.test(host); }

function showSignIn(reason) {
  $("nav").hidden = true; $("signout").hidden = true; $("page").hidden = true; $("who").textContent = "";
  $("signin").hidden = false;
  $("signin-error").textContent = reason || "";
  document.body.dataset.ready = "signin";
  $("key").focus();
}

function signOut(reason) {
  sessionStorage.removeItem(KEY);
  clearTimers();
  showSignIn(reason);
}

async function signIn(key) {
  sessionStorage.setItem(KEY, key);
  try {
    const listed = await api("GET", "/v1/apps");
    state.apps = listed.apps || [];
  } catch (error) {
    if (error.status !== 401) signOut(`The gateway did not answer: ${error.message}`);
    return false;
  }
  const mine = await api("GET", "/v1/key");
  state.admin = !Array.isArray(mine.apps);
  $("signin").hidden = true; $("nav").hidden = false; $("signout").hidden = false; $("page").hidden = false;
  $("who").textContent = `Signed in with ${mine.name} (${state.admin ? "administrator: every app" : plural(mine.apps.length, "app") + ": " + mine.apps.join(", ")})`;
  return true;
}

// MARK: Pages

function clearTimers() { for (const t of state.timers) clearTimeout(t); state.timers = []; }
function later(ms, f) { const t = setTimeout(() => { state.timers = state.timers.filter((x) => x !== t); f(); }, ms); state.timers.push(t); }

function page(title, ...children) {
  const section = $("page");
  section.replaceChildren(el("h2", { id: "page-h" }, title), ...children.filter(Boolean));
  return section;
}

function currentApp() {
  const saved = sessionStorage.getItem(APP);
  if (saved && state.apps.some((a) => a.id === saved)) return saved;
  return state.apps.length ? state.apps[0].id : null;
}

function appPicker(onchange) {
  const select = el("select", { id: "app", onchange: () => { sessionStorage.setItem(APP, select.value); onchange(); } },
    state.apps.map((a) => el("option", { value: a.id }, a.id)));
  select.value = currentApp() || "";
  return el("label", {}, "App", select);
}

function noApps() {
  return el("p", { class: "meta" }, state.admin
    ? "No app yet. Register one with POST /v1/apps (herald serve --help shows the body), then reload."
    : "This key is for no app that exists now.");
}

function errorText(error) {
  const body = error.body && error.body.error;
  const findings = body && body.findings ? " " + body.findings.map((f) => `${f.rule}: ${f.message}`).join("; ") : "";
  return `${error.message}${body && body.pointer ? ` (at ${body.pointer})` : ""}${findings}`;
}

function done(route) { document.body.dataset.ready = route; }

const routes = {
  apps: appsPage, compose: composePage, notifications: notificationsPage, devices: devicesPage,
  keys: keysPage, webhooks: webhooksPage, health: healthPage,
};

async function route() {
  clearTimers();
  if (!sessionStorage.getItem(KEY)) { showSignIn(); return; }
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const name = routes[parts[0]] ? parts[0] : "apps";
  state.route = name;
  document.body.dataset.ready = "";
  for (const a of document.querySelectorAll("nav a")) {
    if (a.getAttribute("href") === "#/" + name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  try {
    await routes[name](...parts.slice(1));
  } catch (error) {
    if (error.status === 401) return;
    page("Something went wrong", el("p", { class: "error", role: "alert" }, errorText(error)));
    done(name);
  }
}

// MARK: Apps

function credentials(app) {
  if (app.token) return `Token: key ${app.token.keyId}, team ${app.token.teamId}`;
  if (app.certificate) return `Certificate: ${app.certificate.subject || "(unreadable)"}`;
  return "—";
}

function expiry(app) {
  const until = app.certificate && app.certificate.notValidAfter;
  if (!until) return null;
  const days = Math.floor((new Date(until) - Date.now()) / 86400000);
  if (days < 0) return el("span", { class: "error" }, `expired ${time(until)}`);
  if (days <= 30) return el("span", { class: "warn" }, `expires in ${plural(days, "day")} (${time(until)}): renew it and PATCH the app`);
  return el("span", {}, `valid until ${time(until)}`);
}

async function appsPage(id) {
  const listed = await api("GET", "/v1/apps");
  state.apps = listed.apps || [];
  if (id) return appPage(id);
  page("Apps",
    state.apps.length ? el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["App", "Environment", "Credentials", "State", "Rate", "Webhook"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, state.apps.map((a) => el("tr", {},
        el("td", {}, el("a", { href: `#/apps/${segment(a.id)}` }, a.id), el("div", { class: "meta" }, a.bundleId)),
        el("td", {}, a.environment, a.server ? el("div", { class: "meta" }, `server ${a.server.host}:${a.server.port}`) : null),
        el("td", {}, credentials(a), el("div", { class: "meta" }, expiry(a))),
        el("td", {}, pill(a.state), a.paused ? el("div", { class: "meta" }, a.paused.reason) : null),
        el("td", {}, a.rateLimit ? `${a.rateLimit}/s` : "unlimited", el("div", { class: "meta" }, `${a.concurrency} in flight`)),
        el("td", {}, a.webhook ? el("span", { class: "mono" }, a.webhook.url) : "none")))))) : noApps());
  done("apps");
}

async function appPage(id) {
  const app = await api("GET", `/v1/apps/${segment(id)}`);
  const facts = [
    ["Bundle id", app.bundleId], ["Environment", app.environment], ["Credentials", credentials(app)],
    ["Certificate", expiry(app) || "—"], ["Server", app.server ? `${app.server.host}:${app.server.port}${app.server.plaintext ? " (plain HTTP/2)" : ""}` : "Apple"],
    ["Rate limit", app.rateLimit ? `${app.rateLimit} sends a second per process` : "none"], ["Concurrency", `${app.concurrency} requests in flight per process`],
    ["Time zone", app.timeZone], ["Webhook", app.webhook ? `${app.webhook.url} (${app.webhook.events.join(", ")})` : "none"],
    ["State", app.state], ["Updated", time(app.updatedAt)],
  ];
  const result = el("div", { id: "test-result", "aria-live": "polite" });
  const target = el("input", { id: "test-target", autocomplete: "off", spellcheck: "false", size: "40", required: true });
  const kind = el("select", { id: "test-kind" }, el("option", { value: "token" }, "Device token"), el("option", { value: "user" }, "User id"));
  const form = el("form", { id: "test-form", onsubmit: (e) => { e.preventDefault(); testPush(app.id, kind.value, target.value.trim(), result); } },
    el("div", { class: "row" }, el("label", {}, "Send to", kind), el("label", {}, "Token or user", target), el("button", { type: "submit", class: "primary" }, "Send a test push")));
  page(`App ${app.id}`,
    app.paused ? el("div", { class: "panel", role: "alert" }, el("p", { class: "error" }, `Paused since ${time(app.paused.since)}: ${app.paused.reason}`),
      el("p", {}, app.paused.advice), el("button", { type: "button", onclick: async () => { await api("POST", `/v1/apps/${segment(app.id)}/resume`); say("Resumed."); route(); } }, "Resume")) : null,
    el("div", { class: "panel" }, el("dl", { class: "facts" }, facts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]))),
    el("div", { class: "panel" }, el("h3", {}, "Test push"),
      el("p", { class: "meta" }, "Sends one alert and shows Apple's answer: the quickest check that the key, team, topic and environment are right."),
      form, result));
  done("apps");
}

async function testPush(app, kind, target, result) {
  result.replaceChildren(el("p", {}, "Sending…"));
  const body = { payload: { aps: { alert: { title: "Herald test", body: "A test push from the console" } } } };
  if (kind === "user") body.audience = { users: [target] }; else body.tokens = [target];
  let job;
  try {
    job = await api("POST", `/v1/apps/${segment(app)}/notifications`, body);
  } catch (error) {
    result.replaceChildren(el("p", { class: "error", role: "alert" }, errorText(error)));
    return;
  }
  const started = Date.now();
  const poll = async () => {
    const answer = await api("GET", `/v1/apps/${segment(app)}/notifications/${segment(job.id)}/deliveries`);
    const open = answer.deliveries.filter((d) => d.state === "queued" || d.state === "claimed");
    if (open.length && Date.now() - started < 30000 && state.route === "apps") { later(500, poll); return; }
    result.replaceChildren(el("ul", { class: "findings" }, answer.deliveries.map((d) => el("li", {},
      pill(d.state), " ", el("span", { class: "mono" }, tokenText(d.token)), " ",
      d.status ? `${d.status} ${d.reason || ""}` : (open.length ? "still waiting" : ""),
      d.meaning ? el("div", { class: "meta" }, d.meaning) : null))));
    result.dataset.done = "true";
  };
  await poll();
}

// MARK: Compose

async function composePage() {
  const app = currentApp();
  if (!app) { page("Compose", noApps()); done("compose"); return; }
  const payload = el("textarea", { id: "payload", rows: "12", spellcheck: "false", "aria-describedby": "payload-help" },
    JSON.stringify({ aps: { alert: { title: "Hello", body: "From the Herald console" }, sound: "default" } }, null, 2));
  const localized = el("textarea", { id: "localized", rows: "4", spellcheck: "false", placeholder: '{"fr": {"title": "Bonjour", "body": "…"}}' });
  const pushType = el("select", { id: "push-type" }, ["alert", "background", "voip", "complication", "fileprovider", "mdm", "location", "liveactivity", "pushtotalk", "widgets", "controls"]
    .map((t) => el("option", { value: t }, t)));
  const priority = el("select", { id: "priority" }, el("option", { value: "" }, "default"), el("option", { value: "10" }, "10"), el("option", { value: "5" }, "5"), el("option", { value: "1" }, "1"));
  const audience = el("select", { id: "audience" }, el("option", { value: "tokens" }, "Device tokens"), el("option", { value: "users" }, "Users"),
    el("option", { value: "tag" }, "A tag"), el("option", { value: "all" }, "Every device"));
  const recipients = el("textarea", { id: "recipients", rows: "3", spellcheck: "false", placeholder: "One per line" });
  const when = el("select", { id: "when" }, el("option", { value: "now" }, "Now"), el("option", { value: "at" }, "At a time"), el("option", { value: "local" }, "At a time in each device's zone"));
  const at = el("input", { id: "send-at", type: "datetime-local" });
  const findings = el("ul", { id: "findings", class: "findings", "aria-live": "polite" });
  const verdict = el("p", { id: "verdict" });
  const previews = el("div", { id: "previews" });
  const curl = el("pre", { id: "curl" });
  const send = el("button", { type: "submit", class: "primary" }, "Send");
  let generation = 0;

  function body() {
    const value = { payload: JSON.parse(payload.value) };
    if (pushType.value !== "alert") value.pushType = pushType.value;
    if (priority.value) value.priority = Number(priority.value);
    if (localized.value.trim()) value.localized = JSON.parse(localized.value);
    const lines = recipients.value.split(/[\s,]+/).filter(Boolean);
    if (audience.value === "tokens") value.tokens = lines;
    else if (audience.value === "users") value.audience = { users: lines };
    else if (audience.value === "tag") value.audience = { tag: lines[0] || "" };
    else value.audience = "all";
    if (when.value === "at" && at.value) value.sendAt = new Date(at.value).toISOString();
    if (when.value === "local" && at.value) value.sendAt = { localTime: at.value.slice(0, 16) };
    return value;
  }

  async function check() {
    const mine = ++generation;
    let value;
    try { value = body(); } catch (error) {
      verdict.className = "error"; verdict.textContent = `Not JSON: ${error.message}`; findings.replaceChildren(); previews.replaceChildren(); send.disabled = true;
      return;
    }
    curl.textContent = `curl -H "Authorization: Bearer $HERALD_KEY" -H "Content-Type: application/json" \\\n  -d '${JSON.stringify(value).replace(/'/g, "'\\''")}' \\\n  ${location.origin}/v1/apps/${segment(app)}/notifications`;
    let answer;
    try { answer = await api("POST", `/v1/apps/${segment(app)}/notifications/check`, value); } catch (error) {
      if (mine !== generation) return;
      verdict.className = "error"; verdict.textContent = errorText(error); send.disabled = true; return;
    }
    if (mine !== generation) return;
    verdict.className = answer.accepted ? "ok" : "error";
    verdict.textContent = answer.accepted ? `Ready: ${plural(answer.recipients, "device")} would get it.` : `Refused (${answer.status}): ${answer.message}${answer.pointer ? ` at ${answer.pointer}` : ""}`;
    send.disabled = !answer.accepted;
    findings.replaceChildren(...answer.findings.map((f) => el("li", {}, el("span", { class: f.severity === "error" ? "error" : "warn" }, `${f.severity} ${f.rule}`),
      ` ${f.message}`, f.pointer ? el("span", { class: "meta" }, ` (${f.pointer}${f.line ? `, line ${f.line} column ${f.column}` : ""})`) : null)));
    if (!answer.findings.length) findings.append(el("li", { class: "meta" }, "No finding."));
    previews.replaceChildren(...answer.previews.map((p) => preview(p, app)));
    document.body.dataset.checked = String(mine);
  }
  let pending = null;
  const changed = () => { clearTimeout(pending); pending = setTimeout(check, 250); };
  for (const input of [payload, localized, pushType, priority, audience, recipients, when, at]) input.addEventListener("input", changed);

  const form = el("form", { id: "compose-form", onsubmit: async (e) => {
    e.preventDefault();
    send.disabled = true;
    try {
      const job = await api("POST", `/v1/apps/${segment(app)}/notifications`, body());
      say(`Submitted ${job.id}: ${plural(job.tokens, "device")}.`);
      location.hash = `#/notifications/${segment(job.id)}`;
    } catch (error) {
      verdict.className = "error"; verdict.textContent = errorText(error); send.disabled = false;
    }
  } },
  el("div", { class: "compose" },
    el("div", { class: "stack" },
      el("label", { for: "payload" }, "Payload (JSON)"), payload,
      el("p", { id: "payload-help", class: "meta" }, "Linted as you type by the rules the gateway applies at its door: an error here is what it would refuse."),
      el("div", { class: "row" }, el("label", {}, "Push type", pushType), el("label", {}, "Priority", priority)),
      el("label", { for: "localized" }, "Per-language alerts (optional JSON: language → alert)"), localized,
      el("div", { class: "row" }, el("label", {}, "Audience", audience), el("label", {}, "When", when), el("label", {}, "Time", at)),
      el("label", { for: "recipients" }, "Tokens, users or the tag"), recipients,
      el("div", { class: "row" }, send), verdict,
      el("h3", {}, "Findings"), findings,
      el("h3", {}, "As curl"), curl),
    el("div", {}, el("h3", {}, "On a device"), previews)));
  page("Compose", el("div", { class: "row" }, appPicker(() => route())), form);
  await check();
  done("compose");
}

function preview(p, app) {
  const n = p.rendered || {};
  const lines = [n.title, n.subtitle, n.body].filter((x) => typeof x === "string" && x.length);
  return el("div", { class: "phone", role: "group", "aria-label": `Preview${p.language ? " in " + p.language : ""}` },
    el("p", { class: "lang" }, p.language ? `Language ${p.language}` : "Default"),
    el("div", { class: "card" }, el("div", { class: "app" }, app),
      n.title ? el("div", { class: "t" }, n.title) : null, n.subtitle ? el("div", {}, n.subtitle) : null, n.body ? el("div", {}, n.body) : null,
      lines.length ? null : el("div", { class: "meta" }, n.wakesApp ? "Silent: wakes the app" : "Nothing shown")));
}

// MARK: Notifications

async function notificationsPage(id) {
  const app = currentApp();
  if (!app) { page("Notifications", noApps()); done("notifications"); return; }
  if (id) return notificationPage(app, id);
  const status = el("select", { id: "status" }, el("option", { value: "" }, "All"), ["scheduled", "sending", "done", "cancelled"].map((s) => el("option", { value: s }, s)));
  const list = el("div", { id: "jobs" });
  const activities = el("div", { id: "activities" });
  const cursors = [null];
  async function load() {
    const before = cursors[cursors.length - 1];
    const query = new URLSearchParams({ limit: "25" });
    if (status.value) query.set("status", status.value);
    if (before) query.set("before", before);
    const answer = await api("GET", `/v1/apps/${segment(app)}/notifications?${query}`);
    const jobs = answer.notifications;
    list.replaceChildren(jobs.length ? el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Created", "Notification", "Audience", "Status", "Progress", ""].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, jobs.map((j) => {
        const finished = j.tokens - j.pending;
        return el("tr", {},
          el("td", {}, time(j.createdAt)),
          el("td", {}, el("a", { href: `#/notifications/${segment(j.id)}` }, short(j.id, 13))),
          el("td", {}, j.audience, el("div", { class: "meta" }, plural(j.tokens, "device"))),
          el("td", {}, pill(j.status), j.sendAt && j.status === "scheduled" ? el("div", { class: "meta" }, `at ${time(j.sendAt)}`) : null),
          el("td", {}, el("div", { class: "progress", role: "progressbar", "aria-label": `${j.id} progress`, "aria-valuemin": "0", "aria-valuemax": String(j.tokens), "aria-valuenow": String(finished) },
            el("span", { style: null, "data-width": String(j.tokens ? Math.round(100 * finished / j.tokens) : 100) })), el("div", { class: "meta" }, `${finished} of ${j.tokens}`)),
          el("td", {}, j.status === "scheduled" || j.status === "sending" ? el("button", { type: "button", class: "danger", onclick: () => cancel(app, j.id) }, "Cancel") : null));
      })))) : el("p", { class: "meta" }, "No notification here yet."),
    el("div", { class: "pager" },
      cursors.length > 1 ? el("button", { type: "button", onclick: () => { cursors.pop(); load(); } }, "Newer") : null,
      answer.next ? el("button", { type: "button", onclick: () => { cursors.push(answer.next); load(); } }, "Older") : null));
    widths(list);
    // Live progress while anything on this page is under way: polled, one request at a time.
    // (every 2 seconds while one sends, every 30 while some only wait for their time).
    const every = jobs.some((j) => j.status === "sending") ? 2000 : jobs.some((j) => j.status === "scheduled") ? 30000 : 0;
    if (every) later(every, () => { if (state.route === "notifications") load(); });
    document.body.dataset.jobs = String(jobs.length);
  }
  const activityCursors = [null];
  async function loadActivities() {
    const query = new URLSearchParams({ limit: "25" });
    const after = activityCursors[activityCursors.length - 1];
    if (after) query.set("after", after);
    const answer = await api("GET", `/v1/apps/${segment(app)}/activities?${query}`);
    const last = answer.activities.length === 25 ? answer.activities[answer.activities.length - 1].id : null;
    activities.replaceChildren(answer.activities.length ? el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Activity", "Type", "State", "Sent", "Last content"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, answer.activities.map((a) => el("tr", {},
        el("td", {}, a.id), el("td", {}, a.attributesType), el("td", {}, pill(a.state)),
        el("td", {}, a.counts ? `${a.counts.sent} sent, ${a.counts.failed} failed` : ""),
        el("td", {}, a.lastContent ? el("code", {}, JSON.stringify(a.lastContent)) : "—")))))) : el("p", { class: "meta" }, "No Live Activity."),
    el("div", { class: "pager" },
      activityCursors.length > 1 ? el("button", { type: "button", onclick: () => { activityCursors.pop(); loadActivities(); } }, "Back") : null,
      last ? el("button", { type: "button", onclick: () => { activityCursors.push(last); loadActivities(); } }, "More activities") : null));
  }
  status.addEventListener("change", () => { cursors.splice(1); load(); });
  page("Notifications", el("div", { class: "row" }, appPicker(() => route()), el("label", {}, "Status", status)), list,
    el("h3", {}, "Live Activities"), activities);
  await Promise.all([load(), loadActivities()]);
  done("notifications");
}

function widths(root) {
  // Widths come from data attributes (no inline style: the page's policy forbids it).
  for (const bar of root.querySelectorAll("[data-width]")) bar.style.width = bar.dataset.width + "%";
}

async function cancel(app, id) {
  try {
    const answer = await api("POST", `/v1/apps/${segment(app)}/notifications/${segment(id)}/cancel`);
    say(`Cancelled ${id}: ${answer.cancel.cancelled} not sent, ${answer.cancel.sent} already sent, ${answer.cancel.finishing} finishing.`);
  } catch (error) { say(errorText(error)); }
  route();
}

async function notificationPage(app, id) {
  const facts = el("div", { class: "panel", id: "job" });
  const filter = el("select", { id: "delivery-state" }, el("option", { value: "" }, "All"),
    ["queued", "claimed", "accepted", "rejected", "expired", "skipped", "cancelled"].map((s) => el("option", { value: s }, s)));
  const deliveries = el("div", { id: "deliveries" });
  const cursors = [null];
  async function loadJob() {
    const job = await api("GET", `/v1/apps/${segment(app)}/notifications/${segment(id)}`);
    const counts = job.counts || {};
    facts.replaceChildren(...[
      el("dl", { class: "facts" },
        el("dt", {}, "Status"), el("dd", { id: "job-status" }, pill(job.status)),
        el("dt", {}, "Audience"), el("dd", {}, `${job.audience}: ${plural(job.tokens, "device")}${job.usersWithoutDevices ? `, ${job.usersWithoutDevices} users without a device` : ""}`),
        el("dt", {}, "Created"), el("dd", {}, time(job.createdAt)),
        el("dt", {}, "Send at"), el("dd", {}, job.localTime ? `${job.localTime} in each device's zone` : time(job.sendAt)),
        el("dt", {}, "Finished"), el("dd", {}, time(job.finishedAt)),
        el("dt", {}, "Retried until"), el("dd", {}, time(job.retryUntil))),
      el("div", { class: "counts", "aria-label": "Deliveries by state" }, Object.entries(counts).map(([k, v]) => el("span", {}, pill(k), ` ${v}`))),
      job.status === "scheduled" || job.status === "sending" ? el("button", { type: "button", class: "danger", onclick: () => cancel(app, id) }, "Cancel") : null,
    ].filter(Boolean));
    document.body.dataset.jobStatus = job.status;
    const every = job.status === "sending" ? 1500 : job.status === "scheduled" ? 30000 : 0;
    if (every) later(every, () => { if (state.route === "notifications") { loadJob(); loadDeliveries(); } });
  }
  async function loadDeliveries() {
    const query = new URLSearchParams({ limit: "50" });
    if (filter.value) query.set("state", filter.value);
    const after = cursors[cursors.length - 1];
    if (after !== null) query.set("after", String(after));
    const answer = await api("GET", `/v1/apps/${segment(app)}/notifications/${segment(id)}/deliveries?${query}`);
    deliveries.replaceChildren(answer.deliveries.length ? el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Token", "State", "Answer", "Attempts", "Updated"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, answer.deliveries.map((d) => el("tr", {},
        el("td", { class: "mono" }, tokenText(d.token)), el("td", {}, pill(d.state)),
        el("td", {}, d.status ? `${d.status} ${d.reason || ""}` : "—", d.meaning ? el("div", { class: "meta" }, d.meaning) : null),
        el("td", {}, String(d.attempts)), el("td", {}, time(d.updatedAt))))))) : el("p", { class: "meta" }, "No delivery in this state."),
    el("div", { class: "pager" },
      cursors.length > 1 ? el("button", { type: "button", onclick: () => { cursors.pop(); loadDeliveries(); } }, "Back") : null,
      answer.next !== null ? el("button", { type: "button", onclick: () => { cursors.push(answer.next); loadDeliveries(); } }, "More") : null));
  }
  filter.addEventListener("change", () => { cursors.splice(1); loadDeliveries(); });
  page(`Notification ${id}`, el("p", {}, el("a", { href: "#/notifications" }, "All notifications")), facts,
    el("h3", {}, "Deliveries"), el("div", { class: "row" }, el("label", {}, "Outcome", filter)), deliveries);
  await Promise.all([loadJob(), loadDeliveries()]);
  done("notifications");
}

// MARK: Devices

async function devicesPage() {
  const app = currentApp();
  if (!app) { page("Devices", noApps()); done("devices"); return; }
  const prefix = el("input", { id: "d-prefix", autocomplete: "off", spellcheck: "false", placeholder: "hex digits" });
  const user = el("input", { id: "d-user", autocomplete: "off" });
  const tag = el("input", { id: "d-tag", autocomplete: "off" });
  const stateFilter = el("select", { id: "d-state" }, el("option", { value: "" }, "All"), el("option", { value: "active" }, "Active"), el("option", { value: "dead" }, "Dead"));
  const died = el("select", { id: "d-died" }, el("option", { value: "" }, "Any time"), el("option", { value: "1" }, "Last 24 hours"),
    el("option", { value: "7" }, "Last 7 days"), el("option", { value: "30" }, "Last 30 days"));
  const list = el("div", { id: "devices" });
  const cursors = [null];
  async function load() {
    const query = new URLSearchParams({ limit: "50" });
    if (prefix.value.trim()) query.set("prefix", prefix.value.trim());
    if (user.value.trim()) query.set("user", user.value.trim());
    if (tag.value.trim()) query.set("tag", tag.value.trim());
    if (stateFilter.value) query.set("state", stateFilter.value);
    if (died.value) query.set("deadSince", new Date(Date.now() - Number(died.value) * 86400e3).toISOString());
    const after = cursors[cursors.length - 1];
    if (after) query.set("after", after);
    let answer;
    try { answer = await api("GET", `/v1/apps/${segment(app)}/devices?${query}`); } catch (error) {
      list.replaceChildren(el("p", { class: "error", role: "alert" }, errorText(error))); return;
    }
    list.replaceChildren(answer.devices.length ? el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Token", "State", "User", "Language", "Zone", "Tags", "Why dead"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, answer.devices.map((d) => el("tr", {},
        el("td", { class: "mono" }, tokenText(d.token)), el("td", {}, pill(d.state)), el("td", {}, d.user || "—"),
        el("td", {}, d.language || "—"), el("td", {}, d.timeZone || "—"), el("td", {}, d.tags.join(", ") || "—"),
        el("td", {}, d.reason ? `${d.reason}, ${time(d.deadAt)}` : "—")))))) : el("p", { class: "meta" }, "No device matches."),
    el("div", { class: "pager" },
      cursors.length > 1 ? el("button", { type: "button", onclick: () => { cursors.pop(); load(); } }, "Back") : null,
      answer.next ? el("button", { type: "button", onclick: () => { cursors.push(answer.next); load(); } }, "More") : null));
    document.body.dataset.devices = String(answer.devices.length);
  }
  const search = el("form", { id: "device-search", role: "search", onsubmit: (e) => { e.preventDefault(); cursors.splice(1); load(); } },
    el("div", { class: "row" }, el("label", {}, "Token starts with", prefix), el("label", {}, "User", user), el("label", {}, "Tag", tag),
      el("label", {}, "State", stateFilter), el("label", {}, "Died", died), el("button", { type: "submit" }, "Search")));
  const eraseUser = el("input", { id: "erase-user", autocomplete: "off", required: true });
  const eraseResult = el("p", { id: "erase-result", "aria-live": "polite" });
  let armed = null;
  const eraseButton = el("button", { type: "submit", class: "danger" }, "Erase user");
  const erase = el("form", { id: "erase-form", onsubmit: async (e) => {
    e.preventDefault();
    const who = eraseUser.value.trim();
    if (armed !== who) { armed = who; eraseButton.textContent = `Really erase ${who}?`; return; }
    armed = null; eraseButton.textContent = "Erase user";
    try {
      const answer = await api("DELETE", `/v1/apps/${segment(app)}/users/${segment(who)}`);
      const e2 = answer.erased;
      eraseResult.textContent = `Erased ${who}: ${plural(e2.devices, "device")}, ${plural(e2.deliveries, "delivery", "deliveries")} unnamed, ${e2.cancelled} cancelled.`;
      load();
    } catch (error) { eraseResult.textContent = errorText(error); }
  } }, el("div", { class: "row" }, el("label", {}, "User id", eraseUser), eraseButton));
  page("Devices", el("div", { class: "row" }, appPicker(() => route())), search, list,
    el("div", { class: "panel" }, el("h3", {}, "Erase a user"),
      el("p", { class: "meta" }, "Deletes the user's devices and every stored copy of its id and tokens; what was sent keeps its outcome without the token."), erase, eraseResult));
  await load();
  done("devices");
}

// MARK: Keys

async function keysPage() {
  if (!state.admin) {
    page("Keys", el("p", { class: "meta" }, "Only an administrator's key manages keys. This key is for: " + state.apps.map((a) => a.id).join(", ")));
    done("keys"); return;
  }
  const answer = await api("GET", "/v1/keys");
  const name = el("input", { id: "key-name", required: true, autocomplete: "off" });
  const apps = el("input", { id: "key-apps", autocomplete: "off", placeholder: "empty: every app (an administrator)" });
  const shown = el("div", { id: "new-key", "aria-live": "polite" });
  const armed = new Set();
  page("Keys",
    el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Name", "Id", "Apps", "Created", ""].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, answer.keys.map((k) => el("tr", {},
        el("td", {}, k.name), el("td", { class: "mono" }, k.id), el("td", {}, Array.isArray(k.apps) ? k.apps.join(", ") : "every app (administrator)"),
        el("td", {}, time(k.createdAt)),
        el("td", {}, el("button", { type: "button", class: "danger", "aria-label": `Revoke ${k.name}`, onclick: async (e) => {
          if (!armed.has(k.id)) { armed.add(k.id); e.target.textContent = "Really revoke?"; return; }
          try { await api("DELETE", `/v1/keys/${segment(k.id)}`); say(`Revoked ${k.name}.`); } catch (error) { say(errorText(error)); }
          route();
        } }, "Revoke"))))))),
    el("div", { class: "panel" }, el("h3", {}, "New key"),
      el("form", { id: "key-form", onsubmit: async (e) => {
        e.preventDefault();
        const list = apps.value.split(/[\s,]+/).filter(Boolean);
        const body = { name: name.value.trim() };
        if (list.length) body.apps = list;
        try {
          const made = await api("POST", "/v1/keys", body);
          shown.replaceChildren(el("div", { class: "secret" }, el("p", {}, "The new key, shown once: copy it now."), el("code", { id: "new-key-secret" }, made.key)));
        } catch (error) { shown.replaceChildren(el("p", { class: "error" }, errorText(error))); }
      } }, el("div", { class: "row" }, el("label", {}, "Name", name), el("label", {}, "Apps (comma separated)", apps), el("button", { type: "submit", class: "primary" }, "Make key"))),
      shown));
  done("keys");
}

// MARK: Webhooks

async function webhooksPage(before) {
  const app = currentApp();
  if (!app) { page("Webhooks", noApps()); done("webhooks"); return; }
  const query = new URLSearchParams({ limit: "50" });
  if (before) query.set("before", before);
  const answer = await api("GET", `/v1/apps/${segment(app)}/webhooks?${query}`);
  page("Webhooks", el("div", { class: "row" }, appPicker(() => route())),
    el("p", { class: "meta" }, answer.url ? `Posting to ${answer.url}` : "This app has no webhook: add one with PATCH /v1/apps/" + app + ' {"webhook": {"url", "secret"}}.'),
    answer.events.length ? el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Created", "Event", "State", "Attempts", "Last answer", "Latency", "Answer's first bytes"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, answer.events.map((w) => el("tr", {},
        el("td", {}, time(w.createdAt)), el("td", {}, w.type || "—"), el("td", {}, pill(w.state)), el("td", {}, String(w.attempts)),
        el("td", {}, w.lastStatus ? `HTTP ${w.lastStatus}` : (w.lastError || "—")),
        el("td", {}, w.lastLatencyMs !== null ? `${w.lastLatencyMs} ms` : "—"),
        el("td", {}, w.lastAnswer ? el("code", {}, w.lastAnswer) : "—")))))) : el("p", { class: "meta" }, "No webhook event kept."),
    el("div", { class: "pager" },
      before ? el("a", { href: "#/webhooks" }, "Newest") : null,
      answer.next !== null ? el("a", { href: `#/webhooks/${answer.next}` }, "Older") : null));
  done("webhooks");
}

// MARK: Health

async function healthPage() {
  const ready = el("div", { id: "ready", class: "panel" });
  const charts = el("div", { id: "charts" });
  const apps = el("div", { id: "app-states" });
  async function load() {
    let readiness;
    const response = await fetch("/readyz", { cache: "no-store" });
    try { readiness = await response.json(); } catch (_) { readiness = {}; }
    ready.replaceChildren(el("p", {}, response.ok ? el("span", { class: "ok" }, "Ready: the database answers and the gateway takes requests.")
      : el("span", { class: "error" }, `Not ready: ${(readiness.error && readiness.error.message) || response.status}`)));
    const stats = await api("GET", "/v1/stats?minutes=60");
    const last = stats.buckets[stats.buckets.length - 1] || {};
    const minute = stats.buckets.slice(-6);
    const sum = (k) => minute.reduce((n, b) => n + b[k], 0);
    ready.append(el("dl", { class: "facts" },
      el("dt", {}, "Process"), el("dd", {}, stats.worker),
      el("dt", {}, "Queue"), el("dd", { id: "queue" }, last.queueWaiting === null || last.queueWaiting === undefined ? "—" : plural(last.queueWaiting, "delivery", "deliveries") + " waiting"),
      el("dt", {}, "Last minute"), el("dd", { id: "last-minute" }, `${sum("accepted")} accepted, ${sum("rejected")} rejected, ${sum("retried")} retried, ${sum("expired")} expired`)));
    charts.replaceChildren(
      el("h3", {}, "Outcomes, last hour (this process)"), outcomeChart(stats),
      el("div", { class: "legend" }, el("span", {}, el("span", { class: "swatch ok" }), "accepted"), el("span", {}, el("span", { class: "swatch bad" }), "rejected or expired"),
        el("span", {}, el("span", { class: "swatch retry" }), "retried")),
      el("h3", {}, "Queue depth, last hour"), queueChart(stats),
      el("div", { class: "legend" }, el("span", {}, el("span", { class: "swatch line" }), "deliveries waiting (every app)")));
    const apnsText = (a) => a.apns === "refusing"
      ? `${plural(a.failedAttempts, "failed attempt")}: ${a.lastFailure || "?"}; next in ${Math.ceil(a.nextAttemptIn || 0)} s`
      : a.apns === "connected" ? plural(a.connections, "connection") + " open" : a.apns === "idle" ? "none open" : "not used yet by this process";
    apps.replaceChildren(el("div", { class: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ["App", "State", "APNs (this process)", "Details"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, stats.apps.map((a) => el("tr", {}, el("td", {}, a.app), el("td", {}, pill(a.state)),
        el("td", {}, pill(a.apns)), el("td", {}, apnsText(a))))))));
    document.body.dataset.health = String(Date.now());
    later(5000, () => { if (state.route === "health") load(); });
  }
  page("Health", ready, charts, el("h3", {}, "APNs"), apps);
  await load();
  done("health");
}

function outcomeChart(stats) {
  const w = 720, h = 160, pad = 28, buckets = stats.buckets, n = Math.max(1, buckets.length);
  const totals = buckets.map((b) => b.accepted + b.rejected + b.expired + b.retried);
  const max = Math.max(1, ...totals);
  const bw = (w - pad) / n;
  const bars = [];
  buckets.forEach((b, i) => {
    let y = h - 16;
    for (const [value, cls] of [[b.accepted, "ok"], [b.rejected + b.expired, "bad"], [b.retried, "retry"]]) {
      if (!value) continue;
      const height = (h - 24) * value / max;
      y -= height;
      bars.push(svg("rect", { x: pad + i * bw, y, width: Math.max(1, bw - 0.5), height, class: cls }));
    }
  });
  const total = totals.reduce((a, b) => a + b, 0);
  return svg("svg", { class: "chart", viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": `Outcomes per ${stats.bucketSeconds} seconds over the last hour: ${total} in all, at most ${max} in one interval` },
    svg("line", { x1: pad, y1: h - 16, x2: w, y2: h - 16, class: "axis" }),
    svg("text", { x: 0, y: 12 }, String(max)), svg("text", { x: 0, y: h - 18 }, "0"),
    svg("text", { x: pad, y: h - 2 }, "an hour ago"), svg("text", { x: w - 30, y: h - 2 }, "now"), bars);
}

function queueChart(stats) {
  const w = 720, h = 120, pad = 28, buckets = stats.buckets, n = Math.max(1, buckets.length);
  const values = buckets.map((b) => b.queueWaiting);
  const max = Math.max(1, ...values.filter((v) => v !== null));
  const points = values.map((v, i) => v === null ? null : `${(pad + (i + 0.5) * (w - pad) / n).toFixed(1)},${(h - 16 - (h - 24) * v / max).toFixed(1)}`).filter(Boolean);
  return svg("svg", { class: "chart", viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": `Deliveries waiting over the last hour: at most ${max}` },
    svg("line", { x1: pad, y1: h - 16, x2: w, y2: h - 16, class: "axis" }),
    svg("text", { x: 0, y: 12 }, String(max)), svg("text", { x: 0, y: h - 18 }, "0"),
    points.length ? svg("polyline", { points: points.join(" "), class: "line" }) : null);
}

// MARK: Start

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  $("theme").setAttribute("aria-pressed", String(theme === "dark"));
}

function start() {
  if (location.protocol === "http:" && !isLoopback(location.hostname)) $("insecure").hidden = false;
  const saved = localStorage.getItem(THEME) || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  applyTheme(saved);
  $("theme").addEventListener("click", () => {
    const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
    localStorage.setItem(THEME, next);
    applyTheme(next);
  });
  $("signout").addEventListener("click", () => signOut("Signed out."));
  $("signin-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const key = $("key").value.trim();
    $("key").value = "";
    if (await signIn(key)) route();
  });
  window.addEventListener("hashchange", () => { say(""); route(); });
  const key = sessionStorage.getItem(KEY);
  if (key) signIn(key).then((ok) => { if (ok) route(); }); else showSignIn();
}

start();
