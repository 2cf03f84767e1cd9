// deskresearch HTML report: show a cited sentence's evidence on click, Enter or Space.
// No network, no storage: the page's Content-Security-Policy allows this script by its hash only.
(function () {
  "use strict";
  function toggle(button, open) {
    var box = document.getElementById(button.getAttribute("aria-controls"));
    if (!box) return;
    var show = open === undefined ? box.hidden : open;
    box.hidden = !show;
    button.setAttribute("aria-expanded", String(show));
  }
  function buttonFor(claim) {
    return document.getElementById("ev-btn-" + claim.getAttribute("data-claim"));
  }
  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    var button = target.closest(".ev-toggle");
    if (button) return toggle(button);
    if (target.closest("a, .evidence")) return; // links navigate; evidence text stays selectable
    var claim = target.closest(".claim");
    if (claim && buttonFor(claim)) toggle(buttonFor(claim));
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || !(event.target instanceof Element)) return;
    var box = event.target.closest(".evidence");
    var button = box ? document.getElementById("ev-btn-" + box.id.slice(3)) : event.target.closest(".ev-toggle");
    if (button) { toggle(button, false); button.focus(); }
  });
  var all = document.getElementById("toggle-all");
  if (all) {
    all.hidden = false;
    all.addEventListener("click", function () {
      var open = all.getAttribute("aria-pressed") !== "true";
      all.setAttribute("aria-pressed", String(open));
      all.textContent = open ? "Hide all evidence" : "Show all evidence";
      document.querySelectorAll(".ev-toggle").forEach(function (b) { toggle(b, open); });
    });
  }
})();
