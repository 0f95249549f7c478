// GPU Classroom's little script: arrow keys between steps, CSRF on htmx requests, the panel fold on phones.
(function () {
  "use strict";
  const typing = (el) => el && (el.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName));

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (typing(event.target)) return;
    const which = event.key === "ArrowLeft" ? "prev" : event.key === "ArrowRight" ? "next" : null;
    if (!which) return;
    const control = document.querySelector(`[data-nav="${which}"]`);
    if (control) { event.preventDefault(); control.click(); }
  });

  document.addEventListener("htmx:configRequest", (event) => {
    const meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) event.detail.headers["X-CSRF-Token"] = meta.content;
  });

  // htmx's "input changed" compares values, and a checkbox's value never changes: send each toggle instead.
  document.addEventListener("input", (event) => {
    const box = event.target;
    if (box.type !== "checkbox" || !box.form || !box.form.matches("[data-widget-form]") || !window.htmx) return;
    event.stopPropagation();
    window.htmx.trigger(box.form, "submit");
  }, true);

  // Range outputs show the value while dragging, before the server answers.
  document.addEventListener("input", (event) => {
    const input = event.target;
    if (input.type !== "range" || !input.id) return;
    const out = document.querySelector(`output[for="${input.id}"]`);
    if (out && "percent" in out.dataset) out.textContent = Math.round(input.value * 100) + " %";
    else if (out) out.textContent = input.value + (out.dataset.unit || "");
  });

  const narrow = () => window.matchMedia("(max-width: 56rem)").matches;
  let folded = null;
  const applyFold = () => {
    const details = document.querySelector("#dgx-panel details[data-fold]");
    if (!details) return;
    if (folded === null) folded = narrow();
    details.open = !folded;
    details.addEventListener("toggle", () => { folded = !details.open; }, { once: true });
  };
  document.addEventListener("DOMContentLoaded", applyFold);
  document.addEventListener("htmx:afterSettle", applyFold);

  // Live widgets re-render every 500 ms; their polite live region speaks only when the sentence changes.
  document.addEventListener("htmx:afterSettle", () => {
    document.querySelectorAll("[data-announce]").forEach((source) => {
      const region = document.getElementById(source.dataset.announce);
      const text = source.textContent.trim();
      if (region && region.textContent.trim() !== text) region.textContent = text;
    });
  });

  // Plan-family widgets (issue 4, part A): controls that need JavaScript appear only with it, and a
  // widget swapped whole (a fix applied, a guess committed) takes the keyboard focus it would have lost.
  const showJsOnly = (root) => {
    if (root && root.querySelectorAll) root.querySelectorAll("[data-js-only]").forEach((el) => { el.hidden = false; });
  };
  document.addEventListener("DOMContentLoaded", () => showJsOnly(document));
  document.addEventListener("htmx:load", (event) => showJsOnly(event.detail.elt));
  document.addEventListener("htmx:afterSwap", (event) => {
    const old = event.detail.target;
    if (!old || !old.classList || !old.classList.contains("widget") || !old.id) return;
    const focused = document.activeElement;
    if (focused && focused !== document.body && document.body.contains(focused)) return;
    const fresh = document.getElementById(old.id);
    const spot = fresh && (fresh.querySelector("[data-focus-after-swap]") || fresh.querySelector(".widget-title"));
    if (spot) spot.focus();
  });
})();
