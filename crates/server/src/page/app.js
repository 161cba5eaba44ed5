// The agent-guard page: pending asks with their four answers, live over the event stream, and recent audit rows.
// The token comes from the URL fragment (`#token=…`, never sent to the server) or the form, and stays in this
// browser's local storage; every request carries it as a bearer token.
"use strict";

const state = { token: "", asks: [], selected: 0, lastEventId: 0, streamAbort: null, sessions: [], logs: {} };
const $ = (id) => document.getElementById(id);

function api(path, options = {}) {
  const headers = Object.assign({ Authorization: "Bearer " + state.token }, options.headers || {});
  return fetch(path, Object.assign({}, options, { headers, cache: "no-store" }));
}

function setStatus(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = "status " + (kind || "");
}

function describe(ask) {
  const input = ask.input || {};
  if (typeof input.command === "string") return input.command;
  for (const key of ["file_path", "path", "notebook_path", "url", "pattern"]) {
    if (typeof input[key] === "string") return input[key];
  }
  return JSON.stringify(input, null, 2);
}

function remaining(ask) {
  const left = Math.max(0, Math.round((Date.parse(ask.expires_at) - Date.now()) / 1000));
  return left + " s left";
}

function renderAsks() {
  const list = $("asks");
  const template = $("ask-template");
  list.replaceChildren();
  state.asks.forEach((ask, index) => {
    const item = template.content.firstElementChild.cloneNode(true);
    item.dataset.id = ask.id;
    item.querySelector(".tool").textContent = ask.tool;
    item.querySelector(".who").textContent = ask.agent + " · " + (ask.session_id || "no session") + " · " + ask.cwd;
    item.querySelector(".expires").textContent = remaining(ask);
    item.querySelector(".what").textContent = describe(ask);
    item.querySelector(".reason").textContent = ask.reason;
    const rules = ask.allow_always_rules || [];
    item.querySelector(".rule").textContent = rules.length
      ? "Allow always saves " + rules.join(", ") + " to " + ask.settings_file
      : "Allow always saves no rule: no allow rule can change this ask; it allows this call only.";
    item.querySelector(".explanation").textContent = ask.explanation;
    item.classList.toggle("selected", index === state.selected);
    item.querySelectorAll("button").forEach((button) => {
      button.addEventListener("click", () => answer(ask.id, button.dataset.answer, item));
    });
    list.appendChild(item);
  });
  const count = $("ask-count");
  count.textContent = String(state.asks.length);
  count.classList.toggle("some", state.asks.length > 0);
  $("no-asks").hidden = state.asks.length > 0;
  document.title = (state.asks.length ? "(" + state.asks.length + ") " : "") + "agent-guard";
}

async function loadAsks() {
  const response = await api("/v1/approvals");
  if (response.status === 401) return askForToken();
  if (!response.ok) return;
  const known = new Set(state.asks.map((a) => a.id));
  state.asks = await response.json();
  const fresh = state.asks.filter((a) => !known.has(a.id));
  state.selected = Math.min(state.selected, Math.max(0, state.asks.length - 1));
  renderAsks();
  if (fresh.length && document.hidden) notify(fresh[0]);
}

function notify(ask) {
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  // Silent: the page never plays a sound.
  new Notification("agent-guard: " + ask.tool + " waits for you", { body: describe(ask), silent: true, tag: ask.id });
}

async function answer(id, choice, item) {
  if (item) item.querySelectorAll("button").forEach((b) => (b.disabled = true));
  const response = await api("/v1/approvals/" + encodeURIComponent(id), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ answer: choice }),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    setStatus(body.error || "the answer was refused (" + response.status + ")", "down");
  }
  await loadAsks();
  loadAudit();
}

async function loadAudit() {
  const params = new URLSearchParams({ limit: "50" });
  const filters = { session: $("f-session").value, tool: $("f-tool").value, decision: $("f-decision").value };
  for (const [key, value] of Object.entries(filters)) if (value.trim()) params.set(key, value.trim());
  const response = await api("/v1/audit?" + params);
  if (!response.ok) return;
  const rows = await response.json();
  const body = $("audit").querySelector("tbody");
  body.replaceChildren();
  for (const row of rows) {
    const tr = document.createElement("tr");
    const cells = [row.ts.replace("T", " ").replace(/\.\d+Z$/, ""), row.session_id, row.tool_name,
      row.decision || row.status, row.decided_by || "", row.output_preview];
    cells.forEach((text, i) => {
      const td = document.createElement("td");
      td.textContent = text;
      if (i === 3) td.className = row.decision || "";
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
}

let auditTimer = null;
function refreshAuditSoon() {
  clearTimeout(auditTimer);
  auditTimer = setTimeout(loadAudit, 300);
}

// The event stream, read with fetch so that the token travels in a header; a broken stream is resumed from the
// last event id after a second.
async function follow() {
  if (state.streamAbort) state.streamAbort.abort();
  const abort = new AbortController();
  state.streamAbort = abort;
  try {
    const headers = state.lastEventId ? { "Last-Event-ID": String(state.lastEventId) } : {};
    const response = await api("/v1/events", { headers, signal: abort.signal });
    if (response.status === 401) return askForToken();
    if (!response.ok || !response.body) throw new Error("status " + response.status);
    setStatus("live", "live");
    await loadAsks();
    loadAudit();
    loadSessions();
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        handle(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  } catch (error) {
    if (abort.signal.aborted) return;
  }
  setStatus("reconnecting…", "down");
  setTimeout(follow, 1000);
}

async function loadSessions() {
  const response = await api("/v1/sessions");
  if (!response.ok) return;
  state.sessions = await response.json();
  renderSessions();
}

function renderSessions() {
  const list = $("sessions");
  const template = $("session-template");
  list.replaceChildren();
  for (const session of state.sessions.slice(0, 20)) {
    const item = template.content.firstElementChild.cloneNode(true);
    item.querySelector(".name").textContent = session.name + " · " + session.id.slice(0, 8);
    item.querySelector(".state").textContent = session.state;
    const cancel = item.querySelector(".cancel");
    cancel.hidden = session.state !== "running";
    cancel.addEventListener("click", async () => {
      cancel.disabled = true;
      await api("/v1/sessions/" + encodeURIComponent(session.id) + "/cancel", { method: "POST" });
    });
    const log = item.querySelector(".log");
    for (const line of (state.logs[session.id] || []).slice(-50)) {
      const entry = document.createElement("li");
      entry.textContent = line;
      log.appendChild(entry);
    }
    list.appendChild(item);
  }
  $("no-sessions").hidden = state.sessions.length > 0;
}

// One line per session event, for the session's log on the page.
function logLine(kind, data) {
  switch (kind) {
    case "tool_start": return "step " + data.step + ": " + data.tool + " " + describe({ input: data.input });
    case "tool_result": return "  -> " + data.decision + " " + data.status + (data.output ? ": " + data.output : "");
    case "step": return "step " + data.step + " done (" + data.tool_calls + " calls)";
    case "session_stop": return "stopped" + (data.cancelled ? " (cancelled)" : "") + ": " + data.reason;
    case "permission_request": return "  asks: " + data.reason;
    case "permission_resolved": return "  answered: " + data.state;
    default: return null;
  }
}

function handle(block) {
  let kind = "message";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("id:")) state.lastEventId = Number(line.slice(3).trim()) || state.lastEventId;
    else if (line.startsWith("event:")) kind = line.slice(6).trim();
    else if (line.startsWith("data:")) data += line.slice(5).trim();
  }
  if (!data) return;
  let parsed = {};
  try { parsed = JSON.parse(data); } catch (error) { return; }
  if (kind === "permission_request" || kind === "permission_resolved") loadAsks();
  const session = parsed.session_id;
  const line = logLine(kind, parsed);
  if (session && line && (kind !== "permission_request" && kind !== "permission_resolved" || state.logs[session])) {
    (state.logs[session] = state.logs[session] || []).push(line);
    if (state.sessions.some((s) => s.id === session)) renderSessions();
  }
  if (kind === "session_stop") {
    // The stop event comes before the server records the session's end: show it now, read the record soon.
    const stopped = state.sessions.find((s) => s.id === session);
    if (stopped) stopped.state = parsed.cancelled ? "cancelled" : "finished";
    renderSessions();
    setTimeout(loadSessions, 1000);
  } else if (kind === "tool_start" && !state.sessions.some((s) => s.id === session)) {
    loadSessions();
  }
  refreshAuditSoon();
}

function askForToken() {
  if (state.streamAbort) state.streamAbort.abort();
  setStatus("token needed", "down");
  $("login").hidden = false;
  $("token").focus();
}

function keys(event) {
  if (event.target.closest("input, select, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
  const answers = { o: "allow_once", a: "allow_always", d: "deny", n: "dont_ask_again" };
  if (event.key === "j" || event.key === "k") {
    const step = event.key === "j" ? 1 : -1;
    state.selected = Math.min(Math.max(0, state.selected + step), Math.max(0, state.asks.length - 1));
    renderAsks();
    const item = $("asks").children[state.selected];
    if (item) item.scrollIntoView({ block: "nearest" });
  } else if (answers[event.key] && state.asks[state.selected]) {
    const ask = state.asks[state.selected];
    answer(ask.id, answers[event.key], $("asks").children[state.selected]);
  }
}

function start() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("token")) {
    localStorage.setItem("agent-guard-token", fragment.get("token"));
    history.replaceState(null, "", location.pathname);
  }
  state.token = localStorage.getItem("agent-guard-token") || "";
  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    state.token = $("token").value.trim();
    localStorage.setItem("agent-guard-token", state.token);
    $("login").hidden = true;
    follow();
  });
  $("filters").addEventListener("input", refreshAuditSoon);
  document.addEventListener("keydown", keys);
  setInterval(() => {
    document.querySelectorAll(".ask").forEach((item, i) => {
      const ask = state.asks[i];
      if (ask) item.querySelector(".expires").textContent = remaining(ask);
    });
  }, 1000);
  if ("Notification" in window && Notification.permission === "default") {
    document.addEventListener("click", () => Notification.requestPermission(), { once: true });
  }
  if (!state.token) return askForToken();
  follow();
}

start();
