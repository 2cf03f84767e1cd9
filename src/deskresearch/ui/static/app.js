// deskresearch ui: the page. Plain JavaScript, no build step, no library. Whatever comes from
// the server is set as text, never as HTML; the report itself is the CLI's HTML page, shown in a
// sandboxed frame. One event stream per tab (closed while the tab is hidden) brings the list's
// changes and the watched run's progress. The question form is ask.js, the review review.js.
"use strict";

const $ = (selector) => document.querySelector(selector);

const STATUS = {
  running: "running",
  ok: "report ready",
  insufficient_evidence: "no usable sources",
  unfinished: "stopped, can resume",
  failed: "failed, can resume",
  "awaiting review": "awaiting review",
};

let current = null; // the research shown (its thread id), or null: the question form
let source = null; // the event stream
// The server's change count of the run shown. The page's own requests and the event stream race:
// an answer that left the server before the latest event is older than what is shown, and is
// set aside (else a run waiting for its review could be shown as still researching).
let shownVersion = 0;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = value;
    else if (key === "className" || key === "value" || key === "href") node[key] = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const type = response.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await response.json() : {};
  if (!response.ok) {
    const error = new Error(data.error || `${response.status} ${response.statusText}`);
    error.problems = data.problems || [];
    throw error;
  }
  return data;
}

// ---- come back: the list -------------------------------------------------------------------

function when(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

function costOf(row) {
  if (row.status === "running") return "";
  if (row.cost_usd === null) return ` · ${row.tokens.toLocaleString()} tokens, no price known`;
  return ` · ≈ $${row.cost_usd.toFixed(4)}`;
}

async function loadRuns() {
  try {
    const rows = await api("GET", "/api/runs");
    $("#runs").replaceChildren(...rows.map((row) => el("li", {},
      el("a", { href: `#run/${row.thread_id}`, className: "run", "data-thread": row.thread_id, "data-status": row.status },
        el("span", { className: "q", text: row.topic || "(no question)" }),
        el("span", { className: "meta" },
          el("span", { className: `badge s-${row.status.replace(/\W+/g, "-")}`, text: STATUS[row.status] || row.status }),
          ` · ${when(row.started)}${costOf(row)}`)))));
    $("#runs-empty").hidden = rows.length > 0;
    $("#runs-problem").textContent = "";
    markCurrent();
  } catch (error) {
    $("#runs-problem").textContent = error.message;
  }
}

function markCurrent() {
  for (const link of document.querySelectorAll("#runs a")) {
    if (link.dataset.thread === current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

// ---- watch and read ------------------------------------------------------------------------

function resetRun() {
  $("#run-topic").textContent = "";
  $("#run-status").textContent = "";
  $("#run-problem").textContent = "";
  for (const id of ["#cancel", "#resume", "#delete", "#downloads", "#progress", "#report", "#resume-command", "#review"]) {
    $(id).hidden = true;
  }
  $("#report").removeAttribute("src");
  $("#progress").open = true;
  delete $("#progress").dataset.state;
  $("#cancel").disabled = false;
  $("#resume").disabled = false;
}

function describe(run) {
  if (run.state === "running") return run.review ? "Waiting for your review: tick the pages to read." : "Researching…";
  if (run.state === "failed") return `Failed: ${run.error}`;
  if (run.state === "cancelled") return "Cancelled. Every finished step is saved: resume it here or on the command line.";
  if (run.state === "unfinished" && run.awaits_review) return "Waiting for its review: resume it to see the pages it would read.";
  if (run.state === "unfinished") return "Stopped before it finished. Every finished step is saved: resume it here or on the command line.";
  if (run.status === "ok") return `Report ready${run.sources ? ` · ${run.sources} sources` : ""}`;
  return `No report: ${run.reason}`;
}

function showRun(run) {
  if (run.version < shownVersion) return;
  shownVersion = run.version;
  const running = run.state === "running";
  $("#run-topic").textContent = run.topic;
  $("#run-status").textContent = describe(run);
  $("#run-status").dataset.state = run.state;
  $("#cancel").hidden = !running;
  $("#resume").hidden = running || run.state === "done";
  $("#delete").hidden = running;
  $("#resume-command").hidden = running || run.state === "done";
  $("#resume-command code").textContent = run.resume;
  if (run.rows) showPanel(run);
  showReview(run);
  if (run.state === "done") showReport(run);
}

function showPanel(snap) {
  $("#panel tbody").replaceChildren(...snap.rows.map((row) => el("tr", { className: row.done ? "done" : "running" },
    el("td", { className: "mark" }, row.done ? "✓" : el("span", { className: "spin", "aria-label": "running" })),
    el("td", { className: "label", text: row.label }),
    el("td", { className: "count", text: row.counted ? `${row.finished}/${row.started}` : "" }),
    el("td", { className: "bar" }, row.counted ? el("progress", { max: String(Math.max(row.started, 1)), value: String(row.finished) }) : ""),
    el("td", { className: "extra", text: row.extra }),
    el("td", { className: "took", text: `${row.seconds.toFixed(1)}s` }))));
  const [tokensIn, tokensOut] = snap.tokens;
  $("#totals").textContent = `elapsed ${snap.elapsed.toFixed(1)}s · tokens ${tokensIn.toLocaleString()} in / ${tokensOut.toLocaleString()} out · ${snap.cost}`;
  $("#lines").textContent = snap.lines.join("\n");
  $("#progress").hidden = false;
  $("#progress").dataset.eventAt = String(snap.at); // when the server saw it (the benchmark's clock)
}

function showReport(run) {
  const frame = $("#report");
  const src = `/runs/${run.thread_id}/report`;
  if (frame.getAttribute("src") !== src) frame.src = src;
  frame.hidden = false;
  for (const link of document.querySelectorAll("#downloads a")) {
    link.href = `/runs/${run.thread_id}/download/${link.dataset.fmt}`;
    link.hidden = link.dataset.fmt === "json" && !(run.files || []).includes("json");
  }
  $("#downloads").hidden = false;
}

async function openRun(thread, { keep = false } = {}) {
  if (!keep) resetRun();
  try {
    const run = await api("GET", `/api/runs/${thread}`);
    if (current === thread) showRun(run);
  } catch (error) {
    if (current === thread) $("#run-problem").textContent = error.message;
  }
}

function onProgress(event) {
  const snap = JSON.parse(event.data);
  if (snap.thread_id !== current) return;
  showRun(snap);
  const panel = $("#progress");
  if (panel.dataset.state !== snap.state) panel.open = snap.state === "running"; // then: the report's room
  panel.dataset.state = snap.state;
  if (snap.state !== "running") openRun(current, { keep: true }); // its files, its report
}

async function act(button, busy, work) {
  button.disabled = true;
  const label = button.textContent;
  button.textContent = busy;
  try {
    await work();
  } catch (error) {
    $("#run-problem").textContent = error.message;
  } finally {
    button.textContent = label;
    button.disabled = false;
  }
}

function confirmDelete() {
  const dialog = $("#confirm");
  $("#confirm-text").textContent = `Delete “${$("#run-topic").textContent}”: its saved run and its report files? This cannot be undone.`;
  dialog.showModal();
}

// ---- the page ------------------------------------------------------------------------------

// What the page says of its event stream: nothing while it flows; while the browser tries to
// reconnect (the server stopped, the network dropped), that it is trying; when the server
// refuses it (a restarted `deskresearch ui` has a new key, so this page's cookie is stale),
// what to do. A stream back after a loss shows the run again: what it missed is fetched.
const LOST = {
  refused: "deskresearch ui no longer answers this page. If it was restarted, open the new link it printed; else reload the page.",
  reconnecting: "Lost touch with deskresearch ui: reconnecting… (is it still running?)",
};

function lost(stream) {
  const line = $("#connection");
  if (stream !== source) return; // an older stream, closed on purpose
  const state = stream.readyState === EventSource.CLOSED ? "refused" : "reconnecting";
  if (line.dataset.state === state) return; // the browser's next try: said once is enough
  line.dataset.state = state;
  line.textContent = LOST[state];
}

function connect() {
  if (source) source.close();
  source = null;
  if (document.hidden) {
    // A hidden tab holds no connection (browsers allow six per host); what happens meanwhile is
    // fetched when it is shown again, as after a loss.
    if ($("#connection").dataset.state === "open") $("#connection").dataset.state = "away";
    return;
  }
  const stream = new EventSource(`/api/events${current ? `?watch=${encodeURIComponent(current)}` : ""}`);
  source = stream;
  stream.addEventListener("open", () => {
    shownVersion = 0; // a new stream (a restarted server counts from 0): its first snapshot is current
    const line = $("#connection");
    const back = line.dataset.state !== "open";
    line.dataset.state = "open";
    line.textContent = "";
    loadRuns();
    if (back && current) openRun(current, { keep: true }); // what changed while it was away
  });
  stream.addEventListener("error", () => lost(stream));
  stream.addEventListener("runs", loadRuns);
  stream.addEventListener("progress", onProgress);
}

function route() {
  const match = location.hash.match(/^#run\/([A-Za-z0-9_-]+)$/);
  current = match ? match[1] : null;
  shownVersion = 0; // another run, or the same one opened again: its first answer is shown
  $("#ask-view").hidden = Boolean(current);
  $("#run-view").hidden = !current;
  markCurrent();
  connect();
  if (current) openRun(current);
  else $("#topic").focus();
}

function wire() {
  $("#ask").addEventListener("submit", ask);
  $("#topic").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("#ask").requestSubmit();
    }
  });
  $("#cancel").addEventListener("click", () => act($("#cancel"), "Cancelling…",
    () => api("POST", `/api/runs/${current}/cancel`)));
  $("#resume").addEventListener("click", () => act($("#resume"), "Resuming…", async () => {
    await api("POST", `/api/runs/${current}/resume`);
    await openRun(current);
  }));
  $("#delete").addEventListener("click", confirmDelete);
  wireReview();
  $("#confirm-keep").addEventListener("click", () => $("#confirm").close());
  $("#confirm-delete").addEventListener("click", () => act($("#confirm-delete"), "Deleting…", async () => {
    await api("DELETE", `/api/runs/${current}`);
    $("#confirm").close();
    location.hash = "";
  }));
  window.addEventListener("hashchange", route);
  document.addEventListener("visibilitychange", connect);
}

async function start() {
  wire();
  route();
  try {
    await Promise.all([loadForm(), loadRuns()]);
  } catch (error) {
    $("#problem-").textContent = error.message;
  }
  document.body.dataset.ready = "true"; // the form has its defaults, the list its runs
  performance.mark("deskresearch-ready"); // the benchmark's "interactive"
}

start();
