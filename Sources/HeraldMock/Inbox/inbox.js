"use strict";
const $ = (id) => document.getElementById(id);
const state = { records: new Map(), selected: null, status: null, faults: [], devices: [], languages: new Map(), connections: [] };
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
// One load at a time: a refresh asked for while one runs starts another as soon as it ends, so
// a steady stream of pushes updates the pane every time rather than discarding each answer for
// a newer load (which left the pane empty for seconds). body[data-devices] tells how many
// requests the view reflects.
let devicesLoading = false;
let devicesAgain = false;
async function loadDevices() {
  if (devicesLoading) { devicesAgain = true; return; }
  devicesLoading = true;
  try {
    do {
      devicesAgain = false;
      const reflects = state.records.size;
      const list = (await api("GET", "/api/v1/devices?limit=24")).devices || [];
      const shown = [];
      for (const device of list) {
        const language = state.languages.get(device.token);
        shown.push(language ? await api("GET", `/api/v1/devices/${device.token}?lang=${encodeURIComponent(language)}`) : device);
      }
      state.devices = shown;
      renderDevices();
      document.body.dataset.devices = String(reflects);
    } while (devicesAgain);
  } finally {
    devicesLoading = false;
  }
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
    const describe = (state) => state ? Object.entries(state).map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join(" · ") : "—";
    const activities = (d.activities || []).map((a) => el("div", { class: "card activity" },
      el("div", { class: "app" }, `Live Activity${a.attributesType ? " " + a.attributesType : ""} · ${a.ended ? "ended" : a.event || "active"}` +
        (a.channel ? ` · channel ${a.channel}` : "")),
      el("div", {}, describe(a.contentState)),
      (a.history || []).length > 1 ? el("details", {},
        el("summary", {}, `${a.history.length} states over time`),
        el("ol", { class: "history" }, a.history.map((h) => el("li", {},
          `${h.timestamp ? new Date(h.timestamp * 1000).toLocaleTimeString() : "no timestamp"} · ${h.event || "update"} · ${describe(h.contentState)}`)))) : null));
    const wakes = d.backgroundWakeTimes || [];
    return el("article", { class: "phone", "aria-label": `Device ${short(d.token)}` },
      typeof d.badge === "number" && d.badge > 0 ? el("span", { class: "badge", "aria-label": `badge ${d.badge}` }, d.badge) : null,
      el("p", { class: "clock", "aria-hidden": "true" }, new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })),
      el("p", { class: "who" }, `${short(d.token)} · ${d.topic || ""} · ${d.deliveries} delivered`),
      el("label", { for: "lang-" + d.token }, "Language ", select),
      d.state === "unregistered" ? el("p", { class: "gone" }, `Unregistered since ${new Date(d.unregisteredAt).toLocaleString()}: pushes get 410`) : null,
      ...stacks, ...activities,
      !stacks.length && !activities.length ? el("p", { class: "who" }, d.historyForgotten
        ? "History forgotten: other devices were reached more recently (--device-histories). The next push starts a new one."
        : "Nothing on the lock screen.") : null,
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

// Each request has an address, #/requests/<id>, to open or share: selecting one sets it, and
// opening it (or going back) selects that request, read from the API when it is not listed.
const requestAddress = /^#\/requests\/(\d+)$/;
async function openAddressed() {
  const match = requestAddress.exec(location.hash);
  if (!match) return;
  const id = Number(match[1]);
  if (!state.records.has(id)) {
    try { add(await api("GET", `/api/v1/notifications/${id}`)); } catch (error) { say(`Request ${id}: ${error.message}`); return; }
  }
  if (state.selected !== id) select(id);
}
window.addEventListener("hashchange", () => { openAddressed(); });

async function select(id) {
  state.selected = id;
  if (location.hash !== `#/requests/${id}`) history.pushState(null, "", `#/requests/${id}`);
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
    el("h3", {}, `Lint findings (${(r.findings || []).length}${r.findingsOmitted ? `; ${r.findingsOmitted} more not kept` : ""})`),
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
// What the commands below are made of: how to run herald and the files' absolute paths, when
// the mock knows them (herald mock and herald demo say), or placeholders.
function pasteHints() {
  const s = state.status || {};
  const p = s.paste || {};
  const key = (s.keys || [])[0];
  return {
    herald: p.herald || "herald",
    ca: p.trustFile ? quote(p.trustFile) : "herald-mock-ca.pem",
    key,
    p8: key && p.keyFiles && p.keyFiles[key.keyId] ? quote(p.keyFiles[key.keyId]) : (key ? `AuthKey_${key.keyId}.p8` : "AuthKey.p8"),
  };
}
function heraldCommand(r, payload) {
  const s = state.status || {};
  const h = pasteHints();
  const parts = [h.herald + " send - --token " + (r.deviceToken || "TOKEN"), "--topic " + quote(r.topic || "")];
  if (r.pushType) parts.push("--push-type " + r.pushType);
  for (const [flag, name] of [["--priority", "apns-priority"], ["--collapse-id", "apns-collapse-id"], ["--expiration", "apns-expiration"]]) { const v = headerValue(r, name); if (v) parts.push(flag + " " + quote(v)); }
  parts.push(`--host 127.0.0.1 --port ${s.port || 2197}`);
  if ((s.transport || "").startsWith("plaintext")) parts.push("--plaintext"); else parts.push("--ca-file " + h.ca);
  parts.push(h.key ? `--p8 ${h.p8} --key-id ${h.key.keyId} --team-id ${h.key.teamId}` : "--p8 AuthKey.p8 --key-id KEYID --team-id TEAMID");
  return parts.join(" \\\n    ") + " <<'JSON'\n" + payload + "\nJSON";
}
function curlCommand(r, payload) {
  const s = state.status || {};
  const plaintext = (s.transport || "").startsWith("plaintext");
  const hints = pasteHints();
  const parts = [plaintext ? "curl --http2-prior-knowledge" : "curl --http2 --cacert " + hints.ca];
  for (const h of r.headers || []) if (!h.name.startsWith(":") && h.name !== "authorization" && h.name !== "content-length") parts.push("-H " + quote(h.name + ": " + h.value));
  const signing = hints.key ? `--p8 ${hints.p8} --key-id ${hints.key.keyId} --team-id ${hints.key.teamId}` : "--p8 AuthKey.p8 --key-id KEYID --team-id TEAMID";
  if (headerValue(r, "authorization")) parts.push(`-H "authorization: bearer $(${hints.herald} token ${signing})"`);
  parts.push("--data-binary @-", quote(`${plaintext ? "http" : "https"}://127.0.0.1:${s.port || 2197}${r.path}`));
  return parts.join(" \\\n    ") + " <<'JSON'\n" + payload + "\nJSON";
}

async function api(method, path, body) {
  const response = await fetch(path, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await response.text();
  const value = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error((value && value.error && value.error.message) || response.statusText);
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

// The connection log (GET /api/v1/connections, then the event stream's "connection" events):
// what a client saw below the requests, without a packet capture.
const connectionKinds = {
  "opened": "opened", "goaway-sent": "GOAWAY sent", "goaway-received": "GOAWAY received", "reset-received": "reset received", "streams-not-processed": "streams not processed after GOAWAY",
  "reset-sent": "reset sent", "protocol-error": "protocol error", "closed": "closed",
};
function renderConnections() {
  const shown = state.connections.slice(0, 100);
  $("connections-empty").hidden = shown.length > 0;
  $("connections").replaceChildren(...shown.map((e) => el("li", { class: "connection " + e.kind },
    el("span", { class: "time" }, new Date(e.at).toLocaleTimeString()),
    el("span", { class: "kind" }, connectionKinds[e.kind] || e.kind),
    el("span", { class: "meta" }, [`connection ${e.connection}`, e.peer, e.stream !== null ? `stream ${e.stream}` : null,
      e.code, e.lastStreamId !== null ? `last-stream-id ${e.lastStreamId}` : null].filter(Boolean).join(" · ")),
    e.detail ? el("span", { class: "detail" }, e.detail) : null)));
}
function addConnectionEvent(e) {
  state.connections.unshift(e);
  if (state.connections.length > 500) state.connections.length = 500;
}

function renderAll() { renderList(); refreshDevices(); document.body.dataset.count = String(state.records.size); }
function add(r) { state.records.set(r.id, r); }

async function start() {
  state.status = await api("GET", "/api/v1/status");
  const s = state.status;
  $("server").textContent = `Herald ${s.version} · Provider API ${s.providerURL} · ${s.environment} · ${s.transport} · ${s.authentication} auth` +
    (s.languages && s.languages.length ? ` · app strings in ${s.languages.join(", ")}` : "") + (s.release ? ` · releases to ${s.release}` : "");
  const events = new EventSource("/api/v1/events");
  let pending = false;
  events.addEventListener("notification", (event) => {
    add(JSON.parse(event.data));
    document.body.dataset.live = "true";
    if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; renderAll(); }); setTimeout(() => { if (pending) { pending = false; renderAll(); } }, 100); }
  });
  events.addEventListener("cleared", () => { state.records.clear(); renderAll(); });
  let connectionsPending = false;
  events.addEventListener("connection", (event) => {
    addConnectionEvent(JSON.parse(event.data));
    if (!connectionsPending) { connectionsPending = true; setTimeout(() => { connectionsPending = false; renderConnections(); }, 100); }
  });
  events.addEventListener("open", () => { document.body.dataset.stream = "open"; });
  $("no-strings").hidden = !!(s.languages && s.languages.length);
  const first = await api("GET", "/api/v1/notifications?limit=500");
  for (const r of first.notifications || []) add(r);
  renderAll();
  await openAddressed();
  loadFaults();
  const log = await api("GET", "/api/v1/connections?limit=100");
  for (const e of (log.events || []).reverse()) addConnectionEvent(e);
  renderConnections();
}
start().catch((error) => { $("server").textContent = "Cannot reach the mock's API: " + error.message; });
