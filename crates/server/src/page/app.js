// The agent-guard page: pending asks with their four answers, live over the event stream, and recent audit rows.
// The token comes from the URL fragment (`#token=…`, never sent to the server) or the form, and stays in this
// browser's local storage; every request carries it as a bearer token.
//
// What an ask shows comes from the server's `shown` (the fields that decide what the call does, every invisible
// character already written as an escape); the page adds no field of its own and inserts text only as text.
// An answer names the ask's id and the version that was on screen. A key answers only the selected ask, once it
// has been on screen and selected for SETTLE_MS, never on a key repeat, and the selection moves only after the
// server took the answer.
"use strict";

/** How long an ask must be on screen (and, for keys, selected) before an answer to it counts. */
const SETTLE_MS = 600;
/** Asks per page fetched; the page holds at most MAX_HELD and fetches more when fewer than LOW are left. */
const PAGE = 50;
const MAX_HELD = 300;
const LOW = 20;
/** A field longer than this says how long it is (its box scrolls). */
const LONG_FIELD = 2000;
/** Allowed asks shown at most; each is read again every UNDO_POLL_MS for UNDO_WATCH_MS, until its runs show. */
const MAX_ALLOWED = 20;
const UNDO_POLL_MS = 2000;
const UNDO_WATCH_MS = 10 * 60 * 1000;

const state = {
  token: "",
  streamAbort: null,
  // The id of the last event received (opaque text), and whether the queue must be read again before following.
  lastEventId: "",
  stale: false,
  sessions: [],
  logs: {},
  // The queue as the page holds it: id -> entry { ask, item, visibleSince, confirming }, in the list's order.
  asks: new Map(),
  // How many asks wait on the server (the asks held, and those not fetched yet).
  pending: 0,
  // Whether the held asks reach the newest waiting one; if not, `cursor` is the last one fetched.
  complete: true,
  cursor: null,
  // Asks that ended while the page held or fetched them, so a late page or event does not bring them back.
  gone: new Set(),
  selected: null,
  selectedAt: 0,
  answering: null,
  fetchingMore: false,
  visible: new Set(),
  // Asks allowed since the page opened, oldest first: id -> { ask, item, since }; and whether they are being read.
  allowed: new Map(),
  pollingAllowed: false,
};
// This page's own session, one per load: the audit log names it as the answering party of each answer given here.
const pageSession = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
const $ = (id) => document.getElementById(id);
const now = () => performance.now();

function api(path, options = {}) {
  const headers = Object.assign({ Authorization: "Bearer " + state.token }, options.headers || {});
  return fetch(path, Object.assign({}, options, { headers, cache: "no-store" }));
}

function setStatus(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = "status " + (kind || "");
}

// ---- Rendering one ask -------------------------------------------------------------------------------------

/** Writes a server-escaped text into `target`: plain parts as text, escapes marked. */
function fill(target, visible) {
  target.replaceChildren();
  if (!visible) return;
  if (!visible.parts) {
    target.textContent = visible.text;
    return;
  }
  for (const part of visible.parts) {
    if (typeof part.text === "string") {
      target.append(part.text);
    } else {
      const mark = document.createElement("span");
      mark.className = "esc";
      mark.title = "a character that shows nothing, written as its code point";
      mark.textContent = part.escape;
      target.append(mark);
    }
  }
}

function remaining(ask) {
  const left = Math.max(0, Math.round((Date.parse(ask.expires_at) - Date.now()) / 1000));
  return left + " s left";
}

/** Whether `ask` came whole: an event too large to carry it has `shown` (and `input`) cut. */
function isWhole(ask) {
  return Boolean(ask.shown && Array.isArray(ask.shown.fields));
}

function render(entry) {
  const { ask, item } = entry;
  const shown = isWhole(ask) ? ask.shown : null;
  item.dataset.id = ask.id;
  item.querySelector(".expires").textContent = remaining(ask);
  item.querySelectorAll("button").forEach((b) => (b.disabled = false));
  const fields = item.querySelector(".fields");
  fields.replaceChildren();
  if (!shown) {
    // An event too large to carry the ask whole: the ask is read by its id and shown then.
    item.querySelector(".tool").textContent = "…";
    fields.textContent = "loading this ask…";
    return;
  }
  fill(item.querySelector(".tool"), shown.tool);
  fill(item.querySelector(".who"), shown.who);
  const warning = item.querySelector(".warning");
  warning.hidden = !shown.warning;
  warning.textContent = shown.warning ? "⚠ " + shown.warning : "";
  const note = item.querySelector(".note");
  note.hidden = !shown.note;
  note.textContent = shown.note || "";
  const template = $("field-template");
  shown.fields.forEach((field, index) => {
    const row = template.content.firstElementChild.cloneNode(true);
    row.querySelector(".label").textContent = field.label;
    const value = row.querySelector(".value");
    if (index === 0) value.classList.add("what");
    fill(value, field);
    const lines = field.text.split("\n").length;
    if (field.text.length > LONG_FIELD || lines > 30) {
      const size = row.querySelector(".size");
      size.hidden = false;
      size.textContent = field.text.length.toLocaleString() + " characters, " + lines.toLocaleString() +
        (lines === 1 ? " line" : " lines") + ": scroll inside the box to read it all";
    }
    fields.appendChild(row);
  });
  fill(item.querySelector(".reason"), shown.reason);
  const rule = item.querySelector(".rule");
  rule.replaceChildren();
  if (shown.rules.length) {
    rule.append("Allow always saves ");
    shown.rules.forEach((r, i) => {
      if (i) rule.append(", ");
      const code = document.createElement("code");
      fill(code, r);
      rule.append(code);
    });
    rule.append(" to ");
    const file = document.createElement("code");
    fill(file, shown.settings_file);
    rule.append(file);
  } else {
    rule.textContent = "Allow always saves no rule: no allow rule can change this ask; it allows this call only.";
  }
  fill(item.querySelector(".explanation"), shown.explanation);
  renderTaint(entry);
  showConfirm(entry);
}

/** The session's taint beside the ask: the call that brought untrusted content and the one that read private
 * data, each with why, as the server escaped them; and the button that clears it. */
function renderTaint(entry) {
  const { ask, item } = entry;
  const box = item.querySelector(".taint");
  const taint = ask.taint;
  box.hidden = !taint;
  const marks = box.querySelector(".taint-marks");
  marks.replaceChildren();
  if (!taint) return;
  const mark = (label, value) => {
    const line = document.createElement("li");
    line.append(label + ": ");
    if (value) {
      const call = document.createElement("code");
      fill(call, value.call);
      const why = document.createElement("span");
      fill(why, value.why);
      line.append(call, " (", why, ")");
    } else {
      line.append("none");
    }
    marks.appendChild(line);
  };
  mark("untrusted content", taint.untrusted);
  mark("private data", taint.private);
  if (taint.contacted) {
    const line = document.createElement("li");
    line.textContent = "domains reached: " + taint.contacted.toLocaleString();
    marks.appendChild(line);
  }
}

function makeEntry(ask) {
  const item = $("ask-template").content.firstElementChild.cloneNode(true);
  const entry = { ask, item, visibleSince: 0, confirming: null };
  item.querySelectorAll(".answers button").forEach((button) => {
    button.addEventListener("click", () => clicked(entry, button.dataset.answer));
  });
  item.querySelector(".clear-taint").addEventListener("click", () => {
    if (!seenLongEnough(entry)) return say(entry, "Not cleared: this ask just came into view. Read it first.");
    if (state.answering) return;
    if (state.selected !== entry.ask.id) select(entry.ask.id, false);
    startConfirm(entry, "clear_taint");
  });
  item.querySelector(".confirm-yes").addEventListener("click", () => confirmed(entry, false));
  item.querySelector(".confirm-no").addEventListener("click", () => cancelConfirm(entry));
  item.addEventListener("click", (event) => {
    if (!event.target.closest("button, summary") && state.selected !== ask.id) select(ask.id, false);
  });
  render(entry);
  if (!isWhole(ask)) readWhole(entry);
  return entry;
}

async function readWhole(entry) {
  const response = await api("/v1/approvals/" + encodeURIComponent(entry.ask.id));
  if (!response.ok) return;
  const ask = await response.json();
  if (ask.state !== "pending") return removeAsk(ask.id);
  if (state.asks.get(ask.id) !== entry) return;
  entry.ask = ask;
  if (entry.visibleSince) seenAgain(entry);
  render(entry);
}

// ---- The held list -----------------------------------------------------------------------------------------

/** Appends `ask` unless the page holds it or saw it end. */
function addAsk(ask) {
  if (state.gone.has(ask.id) || state.asks.has(ask.id)) return false;
  const entry = makeEntry(ask);
  state.asks.set(ask.id, entry);
  $("asks").appendChild(entry.item);
  observer.observe(entry.item);
  state.cursor = ask.id;
  if (!state.selected) select(ask.id, false);
  return true;
}

/** Drops an ask that ended; what was below it moved, so what is on screen counts as new again. */
function removeAsk(id) {
  state.gone.add(id);
  const entry = state.asks.get(id);
  if (!entry) return false;
  const next = entry.item.nextElementSibling || entry.item.previousElementSibling;
  observer.unobserve(entry.item);
  state.visible.delete(entry);
  entry.item.remove();
  state.asks.delete(id);
  if (state.answering === id) state.answering = null;
  for (const other of state.visible) seenAgain(other);
  if (state.selected === id) select(next ? next.dataset.id : null, true);
  return true;
}

function select(id, scroll) {
  const previous = state.asks.get(state.selected);
  if (previous) {
    previous.item.classList.remove("selected", "armed");
    if (previous.confirming) cancelConfirm(previous);
  }
  state.selected = id;
  state.selectedAt = now();
  const entry = state.asks.get(id);
  if (!entry) return;
  entry.item.classList.add("selected");
  if (scroll) entry.item.scrollIntoView({ block: "nearest" });
}

function updateCount() {
  const pending = state.complete ? state.asks.size : Math.max(state.pending, state.asks.size);
  const count = $("ask-count");
  count.textContent = pending.toLocaleString();
  count.classList.toggle("some", pending > 0);
  $("no-asks").hidden = pending > 0;
  const more = $("more-asks");
  more.hidden = state.complete;
  more.textContent = "Showing the oldest " + state.asks.size.toLocaleString() + " of " +
    pending.toLocaleString() + ": show more";
  document.title = (pending ? "(" + pending + ") " : "") + "agent-guard";
}

/** One page of the queue: the first (replacing what the page holds) or the next after `state.cursor`. */
async function fetchPage(first) {
  const params = new URLSearchParams({ limit: String(PAGE) });
  if (!first && state.cursor) params.set("after", state.cursor);
  const response = await api("/v1/queue?" + params);
  if (response.status === 401) {
    askForToken();
    return null;
  }
  if (!response.ok) throw new Error("the queue: status " + response.status);
  const page = await response.json();
  if (first) {
    const fresh = new Set(page.asks.map((a) => a.id));
    for (const id of [...state.asks.keys()]) if (!fresh.has(id)) removeAsk(id);
    state.gone.clear();
    state.cursor = null;
  }
  for (const ask of page.asks) addAsk(ask);
  if (page.asks.length) state.cursor = page.asks[page.asks.length - 1].id;
  state.complete = page.next === null;
  state.pending = page.pending;
  updateCount();
  return page;
}

async function fetchMore() {
  if (state.fetchingMore || state.complete) return;
  state.fetchingMore = true;
  try {
    await fetchPage(false);
  } catch (error) {
    setStatus(String(error.message || error), "down");
  } finally {
    state.fetchingMore = false;
  }
}

let recountTimer = null;
/** The number of waiting asks read again soon, when asks the page does not hold came or went. */
function recountSoon() {
  if (recountTimer) return;
  recountTimer = setTimeout(async () => {
    recountTimer = null;
    const response = await api("/v1/queue?limit=0").catch(() => null);
    if (!response || !response.ok) return;
    state.pending = (await response.json()).pending;
    updateCount();
  }, 2000);
}

function askEvent(kind, ask) {
  if (kind === "permission_request") {
    if (state.gone.has(ask.id) || state.asks.has(ask.id)) return;
    if (state.complete && state.asks.size < MAX_HELD) {
      addAsk(ask);
    } else {
      // Past what the page holds: counted now, fetched with a later page.
      if (state.complete) state.pending = state.asks.size;
      state.complete = false;
      state.pending += 1;
      recountSoon();
    }
    if (document.hidden) notify(ask);
  } else {
    trackAllowed(ask);
    const held = removeAsk(ask.id);
    if (!state.complete) {
      state.pending = Math.max(0, state.pending - 1);
      if (!held) recountSoon();
    }
  }
  updateCount();
  if (!state.complete && state.asks.size < LOW) fetchMore();
}

function notify(ask) {
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  const first = isWhole(ask) ? ask.shown.fields[0] : null;
  // Silent: the page never plays a sound.
  new Notification("agent-guard: " + (isWhole(ask) ? ask.shown.tool.text : ask.tool) + " waits for you", {
    body: first ? first.text.slice(0, 200) : "", silent: true, tag: ask.id,
  });
}

// ---- Seeing and answering ----------------------------------------------------------------------------------

/** Whether a card counts as on screen: half of it, or half of the screen covered by it. */
const observer = new IntersectionObserver((entries) => {
  for (const change of entries) {
    const entry = state.asks.get(change.target.dataset.id);
    if (!entry) continue;
    const screen = change.rootBounds ? change.rootBounds.height : window.innerHeight;
    const seen = change.isIntersecting &&
      (change.intersectionRatio >= 0.5 || change.intersectionRect.height >= screen / 2);
    if (seen && !entry.visibleSince) {
      entry.visibleSince = now();
      state.visible.add(entry);
    } else if (!seen) {
      entry.visibleSince = 0;
      state.visible.delete(entry);
      entry.item.classList.remove("ready", "armed");
    }
  }
}, { threshold: [0, 0.25, 0.5, 0.75, 1] });

/** What is on screen counts from now: it moved, changed, or the tab was hidden. */
function seenAgain(entry) {
  entry.visibleSince = now();
  entry.item.classList.remove("ready", "armed");
}

function seenLongEnough(entry) {
  return isWhole(entry.ask) && entry.visibleSince > 0 && !document.hidden &&
    now() - entry.visibleSince >= SETTLE_MS;
}

function keyReady(entry) {
  return state.selected === entry.ask.id && seenLongEnough(entry) && now() - state.selectedAt >= SETTLE_MS;
}

/** The cards' look follows whether they can be answered yet. */
function markReadiness() {
  for (const entry of state.visible) {
    entry.item.classList.toggle("ready", seenLongEnough(entry));
    entry.item.classList.toggle("armed", keyReady(entry));
    const yes = entry.item.querySelector(".confirm-yes");
    if (entry.confirming) yes.disabled = now() - entry.confirming.since < SETTLE_MS;
  }
}

function say(entry, text) {
  const line = entry.item.querySelector(".said");
  line.textContent = text;
  line.hidden = !text;
}

function clicked(entry, answer) {
  if (!seenLongEnough(entry)) {
    return say(entry, "Not answered: this ask just came into view. Read it, then answer.");
  }
  if (state.selected !== entry.ask.id) select(entry.ask.id, false);
  choose(entry, answer);
}

function choose(entry, answer) {
  if (state.answering) return;
  if (answer === "allow_always" || answer === "dont_ask_again") return startConfirm(entry, answer);
  send(entry, answer);
}

function startConfirm(entry, answer) {
  entry.confirming = { answer, since: now() };
  say(entry, "");
  showConfirm(entry);
}

function cancelConfirm(entry) {
  entry.confirming = null;
  showConfirm(entry);
}

function showConfirm(entry) {
  const panel = entry.item.querySelector(".confirm");
  const answers = entry.item.querySelector(".answers");
  const confirming = entry.confirming;
  panel.hidden = !confirming;
  answers.hidden = Boolean(confirming);
  if (!confirming) return;
  const shown = entry.ask.shown;
  const text = panel.querySelector(".confirm-text");
  text.replaceChildren();
  if (confirming.answer === "clear_taint") {
    text.append("Clear the taint of this session (");
    const who = document.createElement("code");
    fill(who, shown.who);
    text.append(who, ")? Its ways out stop asking because of what it read before; this ask stays as it is.");
  } else if (confirming.answer === "allow_always") {
    text.append("Allow always: allow this call and save ");
    if (shown.rules.length) {
      shown.rules.forEach((r, i) => {
        if (i) text.append(", ");
        const code = document.createElement("code");
        fill(code, r);
        text.append(code);
      });
      text.append(" to ");
      const file = document.createElement("code");
      fill(file, shown.settings_file);
      text.append(file);
    } else {
      text.append("no rule (none can change this ask)");
    }
    text.append("?");
  } else {
    text.append("Don't ask again: deny this call and, for the rest of this session (");
    const who = document.createElement("code");
    fill(who, shown.who);
    text.append(who, "), every ask of the same tool for the same rule?");
  }
  const yes = panel.querySelector(".confirm-yes");
  yes.firstChild.textContent = { allow_always: "Yes, allow always ", dont_ask_again: "Yes, don't ask again ",
    clear_taint: "Yes, clear the taint " }[confirming.answer];
  yes.disabled = true;
}

function confirmed(entry, byKey) {
  const confirming = entry.confirming;
  if (!confirming || state.answering) return;
  if (now() - confirming.since < SETTLE_MS || (byKey ? !keyReady(entry) : !seenLongEnough(entry))) {
    return say(entry, "Not yet: read what this saves, then confirm.");
  }
  if (confirming.answer === "clear_taint") return clearTaint(entry);
  send(entry, confirming.answer);
}

/** Clears the taint of the ask's session; every ask of the session the page holds shows it cleared. */
async function clearTaint(entry) {
  const { id, session_id } = entry.ask;
  state.answering = id;
  entry.item.querySelectorAll("button").forEach((b) => (b.disabled = true));
  let response = null;
  try {
    response = await api("/v1/approvals/" + encodeURIComponent(id) + "/clear-taint", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ session_id, page_session: pageSession }),
    });
  } catch (error) {
    response = null;
  }
  if (state.answering === id) state.answering = null;
  const body = response ? await response.json().catch(() => ({})) : {};
  entry.confirming = null;
  if (response && response.ok) {
    for (const other of state.asks.values()) {
      if (other.ask.session_id === session_id && other.ask.cwd === entry.ask.cwd) {
        other.ask.taint = body.taint || null;
        render(other);
      }
    }
    say(entry, "The session's taint is cleared.");
  } else {
    render(entry);
    say(entry, "Not cleared: " + (body.error || "the server could not be reached") + ".");
  }
}

async function send(entry, answer) {
  const { id, version } = entry.ask;
  state.answering = id;
  entry.item.querySelectorAll("button").forEach((b) => (b.disabled = true));
  say(entry, "");
  let response = null;
  try {
    response = await api("/v1/approvals/" + encodeURIComponent(id), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ answer, version, page_session: pageSession }),
    });
  } catch (error) {
    response = null;
  }
  if (state.answering === id) state.answering = null;
  if (response && response.ok) {
    trackAllowed(await response.json().catch(() => null));
    removeAsk(id);
    updateCount();
    refreshAuditSoon();
    if (!state.complete && state.asks.size < LOW) fetchMore();
    return;
  }
  const body = response ? await response.json().catch(() => ({})) : {};
  const still = state.asks.get(id) === entry;
  if (response && response.status === 409 && body.version && still) {
    // The ask is not what the page showed: show it again as it is stored, and let the person look again.
    entry.confirming = null;
    await readWhole(entry);
    say(entry, "Not answered: this ask changed since it was shown. Read it again.");
  } else if (response && [404, 409, 410].includes(response.status)) {
    setStatus(body.error || "the ask ended before the answer", "down");
    removeAsk(id);
    updateCount();
  } else if (still) {
    entry.item.querySelectorAll("button").forEach((b) => (b.disabled = false));
    entry.confirming = null;
    showConfirm(entry);
    say(entry, "Not answered: " + (body.error || "the server could not be reached") + ".");
  }
}

function keys(event) {
  if (event.target.closest("input, select, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
  const entry = state.asks.get(state.selected);
  if (event.key === "j" || event.key === "k") {
    const item = entry && (event.key === "j" ? entry.item.nextElementSibling : entry.item.previousElementSibling);
    if (item) select(item.dataset.id, true);
    return;
  }
  const answers = { o: "allow_once", a: "allow_always", d: "deny", n: "dont_ask_again" };
  const answerKey = answers[event.key] !== undefined;
  if (!entry || !(answerKey || event.key === "y" || event.key === "Escape")) return;
  event.preventDefault();
  // A held key answers nothing: only a fresh press counts.
  if (event.repeat) return;
  if (entry.confirming) {
    if (event.key === "y") confirmed(entry, true);
    else if (event.key === "Escape") cancelConfirm(entry);
    return;
  }
  if (!answerKey) return;
  if (!keyReady(entry)) {
    return say(entry, "Not answered: keys answer the selected ask once it has been on screen for a moment.");
  }
  choose(entry, answers[event.key]);
}

// ---- What was allowed, and how to take it back ---------------------------------------------------------------

function isAllowed(ask) {
  return Boolean(ask && ask.id && (ask.state === "allow_once" || ask.state === "allow_always"));
}

/** Shows an allowed ask (or shows it again with what the server says now): its call, and each run of its command
 * that `agent-guard undo` recorded, with the command that takes it back. */
function trackAllowed(ask) {
  if (!isAllowed(ask)) return;
  let entry = state.allowed.get(ask.id);
  if (!entry) {
    const item = document.createElement("li");
    item.className = "allowed-item card";
    item.dataset.id = ask.id;
    entry = { ask, item, since: now() };
    state.allowed.set(ask.id, entry);
    $("allowed").prepend(item);
    for (const [id, old] of state.allowed) {
      if (state.allowed.size <= MAX_ALLOWED) break;
      old.item.remove();
      state.allowed.delete(id);
    }
  } else if (!ask.shown || !Array.isArray(ask.shown.fields)) {
    // An event without the ask's fields (too large to carry them): keep what the page read before.
    ask = Object.assign({}, ask, { shown: entry.ask.shown });
  }
  entry.ask = ask;
  renderAllowed(entry);
  $("no-allowed").hidden = state.allowed.size > 0;
}

function renderAllowed(entry) {
  const { ask, item } = entry;
  item.replaceChildren();
  const head = document.createElement("div");
  head.className = "allowed-head";
  const tool = document.createElement("span");
  tool.className = "tool";
  const what = document.createElement("pre");
  what.className = "what";
  const shown = ask.shown && Array.isArray(ask.shown.fields) ? ask.shown : null;
  if (shown) {
    fill(tool, shown.tool);
    if (shown.fields.length) fill(what, shown.fields[0]);
  } else {
    tool.textContent = ask.tool || "";
  }
  const how = document.createElement("span");
  how.className = "how";
  how.textContent = ask.state === "allow_always" ? "allowed always" : "allowed once";
  head.append(tool, how);
  item.append(head, what);
  const runs = Array.isArray(ask.undo) ? ask.undo : [];
  if (!runs.length) {
    const none = document.createElement("p");
    none.className = "no-undo";
    none.textContent = watching(entry)
      ? "No change recorded for it yet: its undo id shows here once its command has changed files."
      : "No change recorded for it: its command changed no file that agent-guard undo snapshots.";
    item.append(none);
  }
  for (const run of runs) {
    const line = document.createElement("p");
    line.className = "undo";
    const id = document.createElement("strong");
    id.className = "undo-id";
    id.textContent = "undo id " + run.id;
    const command = document.createElement("code");
    command.className = "undo-command";
    command.textContent = run.command;
    line.append(id, run.undone ? " (taken back) " : ": ", command);
    item.append(line);
  }
}

/** Whether an allowed ask is still read again for the runs of its command. */
function watching(entry) {
  return !(Array.isArray(entry.ask.undo) && entry.ask.undo.length) && now() - entry.since < UNDO_WATCH_MS;
}

/** Reads again the allowed asks whose command has recorded no run yet (one round at a time). */
async function pollAllowed() {
  if (state.pollingAllowed || !state.token) return;
  state.pollingAllowed = true;
  try {
    for (const entry of [...state.allowed.values()]) {
      if (!watching(entry)) {
        renderAllowed(entry);
        continue;
      }
      const response = await api("/v1/approvals/" + encodeURIComponent(entry.ask.id)).catch(() => null);
      if (response && response.ok) trackAllowed(await response.json().catch(() => null));
    }
  } finally {
    state.pollingAllowed = false;
  }
}

// ---- Audit, sessions, events -------------------------------------------------------------------------------

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

// The event stream, read with fetch so that the token travels in a header. Event ids are opaque text (the server
// names its run in them). The first connection reads the first page of the queue, which names the last event it
// reflects, and follows the stream from there: nothing is replayed that the page already holds. A reconnection
// resumes after the last event received; when the server cannot continue from it (it restarted, or the events
// after it are no longer kept) it sends `resync`, and the page reads the first page of the queue again.
async function follow() {
  if (state.streamAbort) state.streamAbort.abort();
  const abort = new AbortController();
  state.streamAbort = abort;
  try {
    if (!state.lastEventId || state.stale) {
      const page = await fetchPage(true);
      if (!page) return;
      state.lastEventId = page.event_id;
      state.stale = false;
    }
    const response = await api("/v1/events", { headers: { "Last-Event-ID": state.lastEventId }, signal: abort.signal });
    if (response.status === 401) return askForToken();
    if (!response.ok || !response.body) throw new Error("status " + response.status);
    setStatus("live", "live");
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
        const kind = handle(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (kind === "resync") await resync();
      }
    }
  } catch (error) {
    if (abort.signal.aborted) return;
  }
  setStatus("reconnecting…", "down");
  setTimeout(follow, 1000);
}

/** What the page holds read again, after the server said the stream cannot account for what happened since. */
async function resync() {
  // Until the first page is read again, a reconnection reads it too.
  state.stale = true;
  if (!(await fetchPage(true))) return;
  state.stale = false;
  loadAudit();
  loadSessions();
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

function compact(value) {
  const text = JSON.stringify(value);
  return text && text.length > 300 ? text.slice(0, 300) + "…" : text || "";
}

// One line per session event, for the session's log on the page.
function logLine(kind, data) {
  switch (kind) {
    case "tool_start": return "step " + data.step + ": " + data.tool + " " + compact(data.input);
    case "tool_result": return "  -> " + data.decision + " " + data.status + (data.output ? ": " + data.output : "");
    case "step": return "step " + data.step + " done (" + data.tool_calls + " calls)";
    case "session_stop": return "stopped" + (data.cancelled ? " (cancelled)" : "") + ": " + data.reason;
    case "permission_request": return "  asks: " + data.reason;
    case "permission_resolved": return "  answered: " + data.state;
    default: return null;
  }
}

/** Applies one event of the stream to the page; returns its kind. */
function handle(block) {
  let kind = "message";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("id:")) state.lastEventId = line.slice(3).trim() || state.lastEventId;
    else if (line.startsWith("event:")) kind = line.slice(6).trim();
    else if (line.startsWith("data:")) data += line.slice(5).trim();
  }
  if (kind === "resync") return kind;
  if (!data) return kind;
  let parsed = {};
  try { parsed = JSON.parse(data); } catch (error) { return kind; }
  if (kind === "permission_request" || kind === "permission_resolved") askEvent(kind, parsed);
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
  if (kind !== "permission_request") refreshAuditSoon();
  return kind;
}

function askForToken() {
  if (state.streamAbort) state.streamAbort.abort();
  setStatus("token needed", "down");
  $("login").hidden = false;
  $("token").focus();
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
  $("more-asks").addEventListener("click", fetchMore);
  document.addEventListener("keydown", keys);
  // A hidden tab shows nothing: what is on screen when it comes back counts from then.
  document.addEventListener("visibilitychange", () => {
    for (const entry of state.visible) seenAgain(entry);
  });
  setInterval(markReadiness, 100);
  setInterval(pollAllowed, UNDO_POLL_MS);
  setInterval(() => {
    for (const entry of state.asks.values()) {
      entry.item.querySelector(".expires").textContent = remaining(entry.ask);
    }
  }, 1000);
  if ("Notification" in window && Notification.permission === "default") {
    document.addEventListener("click", () => Notification.requestPermission(), { once: true });
  }
  if (!state.token) return askForToken();
  follow();
}

start();
