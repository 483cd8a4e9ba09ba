/// The web inbox `herald mock` serves at `/` on its API port: one page, its style and script
/// inline (no CDN; it works offline), built on the REST API and the live event stream.
enum InboxPage {
    /// The page. The script reads `/api/v1/status`, `/api/v1/notifications`, `/api/v1/devices`
    /// and `/api/v1/faults`, follows `/api/v1/events`, resends and releases through the API, and
    /// renders everything with `textContent` (never `innerHTML` with request data), so a payload
    /// cannot inject markup.
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Herald inbox</title>
<style>
/* Long unbroken values (a fault rule with a 64-digit token) wrap instead of widening the page. */
code { overflow-wrap: anywhere; }
:root { color-scheme: light dark; --bg: #f4f4f6; --panel: #ffffff; --text: #1c1c1e; --muted: #5b5b61; --line: #d4d4d8;
  --accent: #0a5bd3; --ok: #146c2e; --bad: #b3261e; --card: rgba(255,255,255,0.82); --screen: linear-gradient(160deg,#8fb5e8,#4b6fa8); }
:root[data-theme="dark"] { --bg: #111114; --panel: #1c1c20; --text: #f2f2f5; --muted: #b4b4bc; --line: #3a3a42;
  --accent: #7fb0ff; --ok: #7bd88f; --bad: #ff8a80; --card: rgba(40,40,46,0.86); --screen: linear-gradient(160deg,#27324a,#0d1220); }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--text); }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .75rem 1rem; background: var(--panel); border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.15rem; margin: 0; }
#server { margin: 0; color: var(--muted); font-size: .9rem; flex: 1; }
button, select, input { font: inherit; color: inherit; }
button { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .3rem .7rem; cursor: pointer; }
button:hover { border-color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; padding: .6rem 1rem; border-bottom: 1px solid var(--line); }
.filters label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
.filters input, .filters select { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .25rem .4rem; min-width: 9rem; }
main { display: grid; grid-template-columns: minmax(20rem, 1.1fr) minmax(20rem, 1fr); gap: 1rem; padding: 1rem; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; } }
section.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: .75rem; min-width: 0; }
h2 { font-size: 1rem; margin: 0 0 .5rem; }
h3 { font-size: .9rem; margin: .9rem 0 .3rem; }
#list { list-style: none; margin: 0; padding: 0; max-height: 70vh; overflow: auto; }
#list li + li { border-top: 1px solid var(--line); }
.row { display: grid; grid-template-columns: 5.5rem 1fr auto; gap: .1rem .6rem; width: 100%; text-align: left; border: 0; border-radius: 0; background: none; padding: .45rem .3rem; }
.row[aria-current="true"] { background: color-mix(in srgb, var(--accent) 14%, transparent); }
.time, .meta { color: var(--muted); font-size: .8rem; }
.preview { grid-column: 2 / 4; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.status { font-weight: 600; font-size: .8rem; }
.status.accepted { color: var(--ok); } .status.rejected { color: var(--bad); }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .5rem; overflow: auto; font-size: .8rem; white-space: pre-wrap; word-break: break-all; }
table { border-collapse: collapse; font-size: .8rem; width: 100%; }
td, th { text-align: left; padding: .15rem .4rem; border-bottom: 1px solid var(--line); vertical-align: top; word-break: break-all; }
th { word-break: normal; white-space: nowrap; }
.finding.error { color: var(--bad); } .finding.warning { color: #a15c00; } :root[data-theme="dark"] .finding.warning { color: #ffc46b; }
mark { background: #ffe08a; color: #1c1c1e; }
.devices { display: flex; flex-wrap: wrap; gap: 1rem; }
.phone { width: 17rem; border-radius: 28px; padding: 1rem .7rem; background: var(--screen); color: #fff; position: relative; }
.phone .clock { text-align: center; font-size: 2.2rem; font-weight: 300; margin: 0 0 .2rem; }
.phone .who { text-align: center; font-size: .75rem; opacity: .9; margin: 0 0 .6rem; word-break: break-all; }
.phone .badge { position: absolute; top: .8rem; right: .9rem; background: #ff3b30; color: #fff; border-radius: 999px; min-width: 1.4rem; padding: 0 .35rem; text-align: center; font-size: .8rem; font-weight: 700; }
.stack { margin: 0 0 .5rem; }
.card { background: var(--card); color: var(--text); border-radius: 14px; padding: .45rem .6rem; margin: 0 0 .3rem; font-size: .85rem; }
.card .app { font-size: .7rem; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
.card .t { font-weight: 600; } .card .more { font-size: .72rem; color: var(--muted); }
.wakes { font-size: .75rem; background: rgba(0,0,0,.25); border-radius: 10px; padding: .3rem .5rem; }
.phone button { background: rgba(255,255,255,.9); color: #1c1c1e; font-size: .8rem; margin-top: .4rem; }
.empty { color: var(--muted); }
.phone label { display: block; font-size: .75rem; text-align: center; margin: 0 0 .5rem; }
.phone select { font-size: .75rem; background: rgba(255,255,255,.9); color: #1c1c1e; border: 0; border-radius: 6px; padding: .1rem .3rem; }
.phone .gone { background: rgba(179,38,30,.85); border-radius: 10px; padding: .3rem .5rem; font-size: .75rem; margin: 0 0 .5rem; }
.activity { border-left: 4px solid #34c759; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
.actions label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
.actions input { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .25rem .4rem; min-width: 16rem; font-family: ui-monospace, monospace; font-size: .8rem; }
#message { margin: 0; font-size: .9rem; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
</style>
</head>
<body>
<header>
  <h1>Herald inbox</h1>
  <p id="server">Connecting…</p>
  <p id="message" role="status" aria-live="polite"></p>
  <button id="clear" type="button">Clear all</button>
  <button id="theme" type="button" aria-pressed="false">Dark appearance</button>
</header>
<section class="filters" role="search" aria-label="Filters">
  <label>Status <select id="f-status"><option value="">All</option><option value="accepted">Accepted</option><option value="rejected">Rejected</option></select></label>
  <label>Push type <select id="f-type"><option value="">All</option></select></label>
  <label>Topic <input id="f-topic" autocomplete="off"></label>
  <label>Token <input id="f-token" autocomplete="off" spellcheck="false"></label>
  <label>Search <input id="f-text" type="search" autocomplete="off"></label>
</section>
<main>
  <section class="panel" aria-labelledby="list-h">
    <h2 id="list-h">Requests <span id="count" class="meta"></span></h2>
    <p id="list-empty" class="empty">No requests yet. Send one to the mock and it appears here.</p>
    <ol id="list" aria-live="polite" aria-relevant="additions"></ol>
  </section>
  <section class="panel" id="detail" aria-labelledby="detail-h" tabindex="-1">
    <h2 id="detail-h">Detail</h2>
    <div id="detail-body"><p class="empty">Select a request to see it rendered, its headers, payload, findings and answer.</p></div>
  </section>
  <section class="panel" aria-labelledby="devices-h">
    <h2 id="devices-h">Devices</h2>
    <div id="devices" class="devices"><p class="empty">Devices appear with their first notification.</p></div>
    <p id="no-strings" class="meta">Devices render in the mock's language. Start herald mock with --bundle DIR (or --strings FILE) to see them in each of the app's languages.</p>
  </section>
  <section class="panel" aria-labelledby="faults-h">
    <h2 id="faults-h">Faults</h2>
    <form id="fault-form">
      <label for="fault-rule">New rule</label>
      <input id="fault-rule" placeholder="status=503/ServiceUnavailable,every=10" size="34" autocomplete="off">
      <button type="submit">Add</button>
      <p id="fault-error" class="finding error" role="alert"></p>
    </form>
    <ul id="faults"></ul>
  </section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const state = { records: new Map(), selected: null, status: null, faults: [], devices: [], languages: new Map() };
const pushTypes = ["alert", "background", "voip", "complication", "fileprovider", "mdm", "location", "liveactivity", "pushtotalk", "widgets", "controls"];
for (const type of pushTypes) { const o = document.createElement("option"); o.value = type; o.textContent = type; $("f-type").append(o); }

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value; else if (key.startsWith("on")) node.addEventListener(key.slice(2), value); else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  return node;
}
const short = (token) => token ? token.slice(0, 8) + "…" : "—";
const accepted = (r) => r.status !== null && r.status >= 200 && r.status < 300;
const statusText = (r) => r.status === null ? "no answer" : accepted(r) ? "accepted" : `${r.status} ${r.reason || ""}`.trim();
const rendered = (r) => r.rendered || {};
function previewText(r) {
  const n = rendered(r);
  const parts = [n.title, n.subtitle, n.body].filter((x) => typeof x === "string" && x.length);
  if (parts.length) return parts.join(" — ");
  if (r.kind === "broadcast") return "broadcast";
  return n.wakesApp ? "silent: wakes the app" : (r.explanation || "");
}
function limitFor(r) { return r.payloadLimit || (r.pushType === "voip" || r.kind === "broadcast" ? 5120 : 4096); }

function matches(r) {
  const status = $("f-status").value, type = $("f-type").value;
  const topic = $("f-topic").value.trim().toLowerCase(), token = $("f-token").value.trim().toLowerCase(), text = $("f-text").value.trim().toLowerCase();
  if (status === "accepted" && !accepted(r)) return false;
  if (status === "rejected" && accepted(r)) return false;
  if (type && r.pushType !== type) return false;
  if (topic && !(r.topic || "").toLowerCase().includes(topic)) return false;
  if (token && !(r.deviceToken || "").includes(token)) return false;
  if (text) {
    const haystack = [previewText(r), r.reason, r.topic, r.deviceToken, r.apnsId, JSON.stringify(r.payload)].join(" ").toLowerCase();
    if (!haystack.includes(text)) return false;
  }
  return true;
}

function newestFirst() { return [...state.records.values()].sort((a, b) => b.id - a.id); }

function renderList() {
  const all = newestFirst();
  const shown = all.filter(matches);
  $("count").textContent = shown.length === all.length ? `(${all.length})` : `(${shown.length} of ${all.length})`;
  $("list-empty").hidden = all.length > 0;
  const list = $("list");
  list.replaceChildren(...shown.slice(0, 500).map((r) => el("li", { "data-id": r.id },
    el("button", { class: "row", type: "button", "aria-current": state.selected === r.id ? "true" : null, onclick: () => select(r.id) },
      el("span", { class: "time" }, new Date(r.receivedAt).toLocaleTimeString()),
      el("span", { class: "meta" }, `${short(r.deviceToken)} · ${r.topic || "—"} · ${r.pushType || r.kind} · p${r.priority ?? "—"}`),
      el("span", { class: "status " + (accepted(r) ? "accepted" : "rejected") }, statusText(r)),
      el("span", { class: "preview" }, previewText(r) || "(no text)")))));
}

// Devices are the mock's own simulation (GET /api/v1/devices): Notification Center threads,
// collapse-id replacement, the badge, silent wakes and Live Activities, each in the language
// chosen for it (?lang=).
// Loads overlap when pushes keep coming: only the newest load is shown (an older answer may
// arrive last), and body[data-devices] tells how many requests the view reflects.
let devicesLoad = 0;
async function loadDevices() {
  const load = ++devicesLoad;
  const reflects = state.records.size;
  const list = (await api("GET", "/api/v1/devices?limit=24")).devices || [];
  const shown = [];
  for (const device of list) {
    const language = state.languages.get(device.token);
    shown.push(language ? await api("GET", `/api/v1/devices/${device.token}?lang=${encodeURIComponent(language)}`) : device);
  }
  if (load !== devicesLoad) return;
  state.devices = shown;
  renderDevices();
  document.body.dataset.devices = String(reflects);
}
let devicesPending = null;
function refreshDevices() {
  if (devicesPending) return;
  devicesPending = setTimeout(() => { devicesPending = null; loadDevices().catch((error) => say("Cannot read the devices: " + error.message)); }, 150);
}

function renderDevices() {
  const box = $("devices");
  if (!state.devices.length) { box.replaceChildren(el("p", { class: "empty" }, "Devices appear with their first notification.")); return; }
  const languages = (state.status || {}).languages || [];
  box.replaceChildren(...state.devices.map((d) => {
    const chosen = state.languages.get(d.token) || "";
    const select = el("select", { id: "lang-" + d.token, "aria-describedby": languages.length ? null : "no-strings",
      onchange: (event) => { state.languages.set(d.token, event.target.value); loadDevices(); } },
      el("option", { value: "" }, `App default (${(state.status || {}).language || "en"})`),
      languages.map((l) => el("option", { value: l, selected: l === chosen ? true : null }, l)));
    const stacks = (d.groups || []).map((g) => {
      const items = g.notifications || [];
      return el("div", { class: "stack", "data-thread": g.threadId || null },
        cardFor(items[0].content, items[0].id, items[0].replacements),
        items.length > 1 ? el("div", { class: "more" }, `+${items.length - 1} more in ${g.threadId ? "thread " + g.threadId : "this app"}`) : null);
    });
    const activities = (d.activities || []).map((a) => el("div", { class: "card activity" },
      el("div", { class: "app" }, `Live Activity · ${a.ended ? "ended" : a.event || "active"}`),
      el("div", {}, a.contentState ? Object.entries(a.contentState).map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join(" · ") : "—")));
    const wakes = d.backgroundWakeTimes || [];
    return el("article", { class: "phone", "aria-label": `Device ${short(d.token)}` },
      typeof d.badge === "number" && d.badge > 0 ? el("span", { class: "badge", "aria-label": `badge ${d.badge}` }, d.badge) : null,
      el("p", { class: "clock", "aria-hidden": "true" }, new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })),
      el("p", { class: "who" }, `${short(d.token)} · ${d.topic || ""} · ${d.deliveries} delivered`),
      el("label", { for: "lang-" + d.token }, "Language ", select),
      d.state === "unregistered" ? el("p", { class: "gone" }, `Unregistered since ${new Date(d.unregisteredAt).toLocaleString()}: pushes get 410`) : null,
      ...stacks, ...activities,
      !stacks.length && !activities.length ? el("p", { class: "who" }, "Nothing on the lock screen.") : null,
      wakes.length ? el("div", { class: "wakes" }, `${wakes.length} silent wake${wakes.length === 1 ? "" : "s"}: ` + wakes.map((t) => new Date(t).toLocaleTimeString()).join(", ")) : null,
      d.state === "unregistered"
        ? el("button", { type: "button", onclick: () => reactivate(d.token) }, "Make active again")
        : el("button", { type: "button", onclick: () => unregister(d.token) }, "Mark unregistered"));
  }));
}
function cardFor(n, apnsId, replacements) {
  n = n || {};
  const open = () => selectByApnsId(apnsId);
  return el("div", { class: "card", role: "button", tabindex: "0", "aria-label": `Open ${n.title || n.body || "notification"}`,
    onclick: open, onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); } } },
    el("div", { class: "app" }, n.appName || "App"),
    n.title ? el("div", { class: "t" }, n.title) : null,
    n.subtitle ? el("div", {}, n.subtitle) : null,
    n.body ? el("div", {}, n.body) : null,
    replacements ? el("div", { class: "more" }, `replaced ${replacements} time${replacements === 1 ? "" : "s"} (collapse id)`) : null);
}
async function selectByApnsId(apnsId) {
  if (!apnsId) return;
  let r = [...state.records.values()].find((x) => x.apnsId === apnsId);
  if (!r) { try { r = await api("GET", `/api/v1/notifications/${apnsId}`); add(r); } catch (error) { say(error.message); return; } }
  select(r.id);
}

async function select(id) {
  state.selected = id;
  renderList();
  let r = state.records.get(id);
  if (!r) return;
  const language = r.deviceToken ? state.languages.get(r.deviceToken) : null;
  if (language && r.rendered) {
    try { r = await api("GET", `/api/v1/notifications/${r.id}?lang=${encodeURIComponent(language)}`); } catch (error) { say(error.message); }
  }
  const n = rendered(r);
  const payloadText = r.payload === null ? "" : typeof r.payload === "string" ? r.payload : JSON.stringify(r.payload, null, 2);
  const pointers = new Set((r.findings || []).map((f) => f.pointer).filter(Boolean));
  const pushed = r.kind === "device" || r.kind === "broadcast";
  const release = (state.status || {}).release;
  $("detail").dataset.record = String(r.id);
  $("detail-body").replaceChildren(...[
    el("h3", {}, "On the device" + (language ? ` (${language})` : "")),
    r.kind === "device" && accepted(r) ? cardFor(n, r.apnsId, 0) : el("p", { class: "empty" }, accepted(r) ? "A broadcast: shown to the channel's subscribers." : "Not delivered: " + statusText(r)),
    n.sound ? el("p", { class: "meta" }, `Sound: ${n.sound.name}${n.sound.critical ? " (critical)" : ""}`) : null,
    typeof n.badge === "number" ? el("p", { class: "meta" }, `Badge: ${n.badge}`) : null,
    el("h3", {}, "Answer"),
    el("p", {}, el("span", { class: "status " + (accepted(r) ? "accepted" : "rejected") }, statusText(r)), r.explanation ? " — " + r.explanation : "", el("br"),
      el("span", { class: "meta" }, `apns-id ${r.apnsId || "—"}${r.uniqueId ? " · apns-unique-id " + r.uniqueId : ""}${r.timestamp ? " · timestamp " + r.timestamp : ""}`)),
    el("h3", {}, "Request headers"),
    el("table", {}, el("caption", { class: "sr-only" }, "Request headers"), el("tbody", {}, (r.headers || []).map((h) => el("tr", {}, el("th", { scope: "row" }, h.name), el("td", {}, h.value))))),
    el("h3", {}, `Payload (${r.payloadSize} of ${limitFor(r)} bytes)`),
    el("pre", { "aria-label": "payload", tabindex: "0" }, highlight(payloadText, pointers)),
    el("h3", {}, `Lint findings (${(r.findings || []).length})`),
    (r.findings || []).length ? el("ul", {}, r.findings.map((f) => el("li", { class: "finding " + f.severity },
      `${f.severity} ${f.rule}: ${f.message}`, f.pointer ? el("span", { class: "meta" }, ` at ${f.pointer}`) : null, f.header ? el("span", { class: "meta" }, ` (header ${f.header})`) : null)))
      : el("p", { class: "empty" }, "None."),
    pushed ? el("h3", {}, "Send it again") : null,
    pushed ? el("div", { class: "actions" },
      el("button", { type: "button", id: "resend", onclick: () => resend(r) }, "Resend to the mock"),
      release
        ? el("form", { class: "actions", id: "release-form", onsubmit: (event) => { event.preventDefault(); releaseTo(r); } },
            r.kind === "device" ? el("label", { for: "release-token" }, "Device token", el("input", { id: "release-token", value: r.deviceToken || "", autocomplete: "off", spellcheck: "false" })) : null,
            el("button", { type: "submit" }, `Release to ${release}`))
        : el("p", { class: "meta" }, "Release to Apple or another mock: start herald mock with --release-to sandbox|production|HOST:PORT and its credentials."),
      el("p", { id: "release-result", role: "status", "aria-live": "polite" })) : null,
    el("pre", { "aria-label": "herald send command", tabindex: "0" }, heraldCommand(r, payloadText)),
    el("pre", { "aria-label": "curl command", tabindex: "0" }, curlCommand(r, payloadText))].filter((node) => node !== null));
}
async function resend(r) {
  try {
    const sent = await api("POST", `/api/v1/notifications/${r.id}/resend`);
    add(sent);
    say(`Resent as request ${sent.id}: ${statusText(sent)} (apns-id ${sent.apnsId}).`);
    renderAll();
  } catch (error) { say("Resend failed: " + error.message); }
}
async function releaseTo(r) {
  const input = $("release-token");
  const body = input && input.value.trim() && input.value.trim() !== r.deviceToken ? { token: input.value.trim() } : {};
  const result = $("release-result");
  result.textContent = "Sending…";
  try {
    const outcome = await api("POST", `/api/v1/notifications/${r.id}/release`, body);
    result.textContent = outcome.accepted
      ? `${outcome.target} accepted it: apns-id ${outcome.apnsId}`
      : `${outcome.target} did not accept it: ${outcome.status || ""} ${outcome.reason || ""} ${outcome.message}${outcome.advice ? " — " + outcome.advice : ""}`;
  } catch (error) { result.textContent = "Release failed: " + error.message; }
}
function highlight(text, pointers) {
  if (!pointers.size) return text;
  // Marks the keys the findings point at (the last segment of each JSON pointer).
  const keys = [...pointers].map((p) => p.split("/").pop().replace(/~1/g, "/").replace(/~0/g, "~")).filter(Boolean);
  const pattern = new RegExp("(" + keys.map((k) => JSON.stringify(k).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")(?=\\s*:)", "g");
  const out = []; let last = 0;
  for (const m of text.matchAll(pattern)) { out.push(text.slice(last, m.index), el("mark", {}, m[0])); last = m.index + m[0].length; }
  out.push(text.slice(last));
  return out;
}
const quote = (s) => "'" + String(s).replace(/'/g, "'\\''") + "'";
function headerValue(r, name) { const h = (r.headers || []).find((x) => x.name === name); return h ? h.value : null; }
function heraldCommand(r, payload) {
  const s = state.status || {};
  const parts = ["herald send - --token " + (r.deviceToken || "TOKEN"), "--topic " + quote(r.topic || "")];
  if (r.pushType) parts.push("--push-type " + r.pushType);
  for (const [flag, name] of [["--priority", "apns-priority"], ["--collapse-id", "apns-collapse-id"], ["--expiration", "apns-expiration"]]) { const v = headerValue(r, name); if (v) parts.push(flag + " " + quote(v)); }
  parts.push(`--host 127.0.0.1 --port ${s.port || 2197}`);
  if ((s.transport || "").startsWith("plaintext")) parts.push("--plaintext"); else parts.push("--ca-file herald-mock-ca.pem");
  const key = (s.keys || [])[0];
  parts.push(key ? `--p8 AuthKey_${key.keyId}.p8 --key-id ${key.keyId} --team-id ${key.teamId}` : "--p8 AuthKey.p8 --key-id KEYID --team-id TEAMID");
  return parts.join(" \\\n    ") + " <<'JSON'\n" + payload + "\nJSON";
}
function curlCommand(r, payload) {
  const s = state.status || {};
  const plaintext = (s.transport || "").startsWith("plaintext");
  const parts = [plaintext ? "curl --http2-prior-knowledge" : "curl --http2 --cacert herald-mock-ca.pem"];
  for (const h of r.headers || []) if (!h.name.startsWith(":") && h.name !== "authorization" && h.name !== "content-length") parts.push("-H " + quote(h.name + ": " + h.value));
  if (headerValue(r, "authorization")) parts.push("-H \"authorization: bearer $(herald token --p8 AuthKey.p8 --key-id KEYID --team-id TEAMID)\"");
  parts.push("--data-binary @-", quote(`${plaintext ? "http" : "https"}://127.0.0.1:${s.port || 2197}${r.path}`));
  return parts.join(" \\\n    ") + " <<'JSON'\n" + payload + "\nJSON";
}

async function api(method, path, body) {
  const response = await fetch(path, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await response.text();
  const value = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error((value && value.error) || response.statusText);
  return value;
}
function say(text) { $("message").textContent = text; }
async function unregister(token) { await api("POST", `/api/v1/devices/${token}/unregister`); say(`Marked ${short(token)} unregistered: its next push gets 410 Unregistered.`); loadDevices(); }
async function reactivate(token) { await api("POST", `/api/v1/devices/${token}/register`); say(`${short(token)} is active again.`); loadDevices(); }
async function loadFaults() { state.faults = (await api("GET", "/api/v1/faults")).faults || []; renderFaults(); }
function renderFaults() {
  $("faults").replaceChildren(...state.faults.map((f) => el("li", {}, el("code", {}, f.rule), " ",
    el("button", { type: "button", "aria-label": `Remove fault ${f.rule}`, onclick: async () => { await api("DELETE", `/api/v1/faults/${f.id}`); loadFaults(); } }, "Remove"))));
}
$("fault-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try { await api("POST", "/api/v1/faults", { rule: $("fault-rule").value }); $("fault-rule").value = ""; $("fault-error").textContent = ""; loadFaults(); }
  catch (error) { $("fault-error").textContent = error.message; }
});
$("clear").addEventListener("click", async () => { await api("DELETE", "/api/v1/notifications"); state.records.clear(); state.selected = null; renderAll(); say("Cleared every request."); });
$("theme").addEventListener("click", () => {
  const dark = document.documentElement.dataset.theme !== "dark";
  document.documentElement.dataset.theme = dark ? "dark" : "light";
  $("theme").setAttribute("aria-pressed", String(dark));
  $("theme").textContent = dark ? "Light appearance" : "Dark appearance";
});
if (new URLSearchParams(location.search).get("theme") === "dark" || (!location.search.includes("theme=") && matchMedia("(prefers-color-scheme: dark)").matches)) $("theme").click();
for (const id of ["f-status", "f-type", "f-topic", "f-token", "f-text"]) $(id).addEventListener("input", renderList);

function renderAll() { renderList(); refreshDevices(); document.body.dataset.count = String(state.records.size); }
function add(r) { state.records.set(r.id, r); }

async function start() {
  state.status = await api("GET", "/api/v1/status");
  const s = state.status;
  $("server").textContent = `Provider API ${s.providerURL} · ${s.environment} · ${s.transport} · ${s.authentication} auth` +
    (s.languages && s.languages.length ? ` · app strings in ${s.languages.join(", ")}` : "") + (s.release ? ` · releases to ${s.release}` : "");
  const events = new EventSource("/api/v1/events");
  let pending = false;
  events.addEventListener("notification", (event) => {
    add(JSON.parse(event.data));
    document.body.dataset.live = "true";
    if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; renderAll(); }); setTimeout(() => { if (pending) { pending = false; renderAll(); } }, 100); }
  });
  events.addEventListener("cleared", () => { state.records.clear(); renderAll(); });
  events.addEventListener("open", () => { document.body.dataset.stream = "open"; });
  $("no-strings").hidden = !!(s.languages && s.languages.length);
  const first = await api("GET", "/api/v1/notifications?limit=500");
  for (const r of first.notifications || []) add(r);
  renderAll();
  loadFaults();
}
start().catch((error) => { $("server").textContent = "Cannot reach the mock's API: " + error.message; });
</script>
</body>
</html>
"""#
}
