// deskresearch ui: the question form (loaded before app.js, whose helpers $, el and api it uses).
// The fields come from the server with the values a run would take; a field is checked as soon
// as it is left, and a bad value is named at its field in the pre-flight's words. Checks and
// asks can be answered out of order: the newest one's word stands.
"use strict";

async function loadForm() {
  const data = await api("GET", "/api/form");
  const box = $("#fields");
  box.replaceChildren();
  for (const f of data.fields) {
    const input = el("input", {
      id: `f-${f.name}`, name: f.name, type: f.kind === "checkbox" ? "checkbox" : "text", value: String(f.value),
      placeholder: f.placeholder, title: f.help, autocomplete: "off", spellcheck: "false",
      "aria-describedby": `hint-${f.name} problem-${f.name}`,
    });
    if (f.kind === "number") input.setAttribute("inputmode", "numeric");
    if (f.kind === "checkbox") input.checked = f.value === true;
    input.dataset.default = String(f.value);
    input.addEventListener("change", checkFields);
    const hint = f.origin.startsWith("the default") ? `default · ${f.flag}` : `from ${f.origin}`;
    box.append(el("div", { className: "field" },
      el("label", { for: `f-${f.name}`, text: f.label }), input,
      el("small", { id: `hint-${f.name}`, className: "hint", text: hint }),
      el("p", { id: `problem-${f.name}`, className: "problem", role: "alert" })));
  }
  $("#warning").textContent = data.warning;
  $("#where").textContent = `runs: ${data.store} · reports: ${data.folder}`;
}

function settingsOf() {
  const changed = {};
  for (const input of document.querySelectorAll("#fields input")) {
    const ticked = input.type === "checkbox";
    const value = ticked ? String(input.checked) : input.value.trim();
    if (value !== input.dataset.default) changed[input.name] = ticked ? input.checked : value;
  }
  return changed;
}

// A problem's field from its element's id: a setting's, "topic", or "" (the general ones).
const fieldOf = (id) => (id.startsWith("problem-") ? id.slice("problem-".length) : "");
const isSetting = (field) => field !== "" && field !== "topic";

// Show `problems` in place of those shown; `only` "settings" or "rest" (the topic and the
// general ones) leaves the other kind as it is.
function showProblems(problems, { only = "" } = {}) {
  const mine = (field) => !only || (only === "settings") === isSetting(field);
  for (const p of document.querySelectorAll("#ask .problem")) {
    if (mine(fieldOf(p.id))) {
      p.textContent = "";
      delete p.dataset.from;
    }
  }
  for (const input of document.querySelectorAll("#ask [aria-invalid]")) {
    if (mine(input.id === "topic" ? "topic" : input.id.slice("f-".length))) {
      input.removeAttribute("aria-invalid");
    }
  }
  let first = null;
  for (const problem of problems.filter((p) => mine(p.field))) {
    const target = document.getElementById(`problem-${problem.field}`) || $("#problem-");
    target.textContent = [target.textContent, problem.message].filter(Boolean).join(" ");
    const input = problem.field === "topic" ? $("#topic") : document.getElementById(`f-${problem.field}`);
    if (input) {
      input.setAttribute("aria-invalid", "true");
      if (input.id !== "topic") $("#settings").open = true;
      first = first || input;
    }
  }
  if (first && only !== "settings") first.focus();
}

// Checks and asks sent so far: answers can come back out of order, and an older one (a field
// left before a bad value was typed) must not clear the problems a newer one showed.
let sent = 0;

async function checkFields() {
  const mine = ++sent;
  let problems = null;
  let failure = "";
  try {
    ({ problems } = await api("POST", "/api/check", { settings: settingsOf() }));
  } catch (error) {
    failure = error.message;
  }
  if (mine === sent) {
    const general = $("#problem-");
    if (failure) {
      general.textContent = failure;
      general.dataset.from = "check"; // a check that failed: the next one that answers clears it
    } else {
      if (general.dataset.from === "check") {
        general.textContent = "";
        delete general.dataset.from;
      }
      showProblems(problems, { only: "settings" });
    }
  }
  const answered = [document.body.dataset.checked, mine].filter(Boolean).join(" ");
  document.body.dataset.checked = answered; // the checks answered so far (tests wait on them)
}

async function ask(event) {
  event.preventDefault();
  const button = $("#go");
  if (button.disabled) return;
  const mine = ++sent; // a field check still on its way is older than this ask
  button.disabled = true;
  button.textContent = "Checking…";
  showProblems([]);
  try {
    const body = { topic: $("#topic").value, settings: settingsOf() };
    const { thread_id: thread } = await api("POST", "/api/runs", body);
    $("#topic").value = "";
    location.hash = `#run/${thread}`;
  } catch (error) {
    const found = error.problems?.length ? error.problems : [{ field: "", message: error.message }];
    // A field left while this ask was on its way was checked since: its word on settings stands.
    showProblems(found, { only: mine === sent ? "" : "rest" });
  } finally {
    button.disabled = false;
    button.textContent = "Research";
  }
}
