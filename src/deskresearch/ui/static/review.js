// deskresearch ui: the review a research waits for (review_plan), loaded before app.js, whose
// helpers ($, el, api, act, current) it uses. The run shows its queries and the pages it would
// read; the person ticks the pages to read, and the answer resumes the run.
"use strict";

let reviewShown = ""; // the review on screen (run and pages): a new snapshot keeps the ticks

function showReview(run) {
  const box = $("#review");
  if (!run.review) {
    box.hidden = true;
    reviewShown = "";
    return;
  }
  box.hidden = false;
  const key = `${run.thread_id} ${JSON.stringify(run.review.pages.map((p) => p.url))}`;
  if (key === reviewShown) return;
  reviewShown = key;
  $("#review-queries").replaceChildren(...run.review.queries.map((q) => el("li", { text: q })));
  $("#review-pages").replaceChildren(...run.review.pages.map((page) => el("li", {},
    el("label", {},
      el("input", { type: "checkbox", checked: "", value: page.url }), " ",
      el("span", { text: page.title || page.url }), " ",
      el("small", { className: "muted", text: page.url })))));
  countTicked();
}

// The button says what the answer will do: how many pages it reads, or none at all (the person
// may mean it: the queries went wrong; the run goes on with what other rounds find).
function countTicked() {
  const boxes = [...document.querySelectorAll("#review-pages input")];
  const ticked = boxes.filter((box) => box.checked).length;
  $("#review-go").textContent = ticked
    ? `Read the ticked pages (${ticked} of ${boxes.length})`
    : "Read none of these pages";
}

async function sendReview() {
  const boxes = [...document.querySelectorAll("#review-pages input")];
  const keep = boxes.filter((box) => box.checked).map((box) => box.value);
  const answer = keep.length === boxes.length ? true : { keep_urls: keep };
  await api("POST", `/api/runs/${current}/review`, { answer });
}

function wireReview() {
  $("#review-go").addEventListener("click", () => act($("#review-go"), "Sending…", sendReview));
  $("#review-pages").addEventListener("change", countTicked);
}
