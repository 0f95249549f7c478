// Presenting mode: full screen on a button press (or F), speaker notes toggled (N) or in a second window that
// follows the slides. The arrow keys and PageUp/PageDown (what presentation clickers send) are handled here,
// before app.js's page-turning handler: they move the slide in place with htmx, so full screen stays on. Escape
// in a widget's field gives the keys back to the slide.
(function () {
  "use strict";
  const present = document.querySelector("[data-present]");
  const notesWindow = document.querySelector("[data-notes-window]");
  const root = present || notesWindow;
  if (!root || !window.htmx) return;
  const slug = root.dataset.slug;
  const channel = "BroadcastChannel" in window ? new BroadcastChannel(`gc-present-${slug}`) : null;
  const typing = (el) => el && (el.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName));
  const plainKey = (event) => !(event.altKey || event.ctrlKey || event.metaKey || typing(event.target));
  const current = (selector) => {
    const el = document.querySelector(selector);
    return el ? Number(el.dataset.step) : 0;
  };

  if (present) {
    const fullButton = present.querySelector("[data-present-fullscreen]");
    const notesButton = present.querySelector("[data-present-notes]");
    const notesLink = present.querySelector("[data-present-notes-window]");
    const exitLink = present.querySelector("[data-present-exit]");
    let notesShown = sessionStorage.getItem("gc-present-notes") === "1";

    const canFull = document.fullscreenEnabled && document.documentElement.requestFullscreen;
    if (canFull) fullButton.hidden = false;
    const toggleFull = () => {
      if (document.fullscreenElement) document.exitFullscreen();
      else document.documentElement.requestFullscreen().catch(() => { /* refused: stay windowed */ });
    };
    document.addEventListener("fullscreenchange", () => {
      const on = Boolean(document.fullscreenElement);
      fullButton.setAttribute("aria-pressed", String(on));
      fullButton.textContent = on ? "Leave full screen" : "Full screen";
    });
    fullButton.addEventListener("click", toggleFull);

    const applyNotes = () => {
      const box = document.getElementById("slide-notes");
      if (box) box.hidden = !notesShown;
      notesButton.setAttribute("aria-expanded", String(notesShown));
    };
    notesButton.addEventListener("click", () => {
      notesShown = !notesShown;
      sessionStorage.setItem("gc-present-notes", notesShown ? "1" : "0");
      applyNotes();
    });

    notesLink.addEventListener("click", (event) => {
      event.preventDefault();
      window.open(notesLink.href, "gc-notes", "popup,width=760,height=640");
    });

    const goTo = (n) => {
      const total = Number(present.dataset.total);
      if (!(n >= 1 && n <= total) || n === current("#slide")) return;
      const url = `/lessons/${slug}/${n}/present`;
      window.htmx.ajax("GET", url, { target: "#slide", swap: "outerHTML" })
        .then(() => history.pushState({ gcSlide: n }, "", url));
    };
    // Back and Forward bring the address's slide in place too, as the arrows do: these entries are this script's
    // (app.js's popstate leaves them alone), the first one included.
    history.replaceState({ ...(history.state || {}), gcSlide: current("#slide") }, "");
    window.addEventListener("popstate", () => {
      const found = location.pathname.match(/\/(\d+)\/present$/);
      if (!found || Number(found[1]) === current("#slide")) return;
      window.htmx.ajax("GET", location.pathname + location.search, { target: "#slide", swap: "outerHTML" });
    });

    const settle = () => {
      const n = current("#slide");
      applyNotes();
      notesLink.href = `/lessons/${slug}/${n}/notes`;
      exitLink.href = `/lessons/${slug}/${n}`;
      if (channel) channel.postMessage({ step: n });
    };
    document.body.addEventListener("htmx:afterSwap", (event) => {
      if (event.detail.target && event.detail.target.id === "slide") {
        settle();
        const title = document.getElementById("slide-title");
        if (title) title.focus({ preventScroll: true });
      }
    });
    if (channel) channel.onmessage = (event) => { if (event.data && event.data.go) goTo(Number(event.data.go)); };

    // Slides move by htmx.ajax, never by clicking a link that htmx may not have wired up yet (it does so as the
    // swap settles): a plain click there would load a new page and drop full screen. Captured, so app.js's
    // arrow-key handler sees the key already handled.
    // A widget's select or number field keeps the arrow keys while it has the focus (they change its value, as
    // the browser does); Escape hands them back to the slide, so the next arrow turns it (issue 27, I2).
    const step = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 };
    document.addEventListener("keydown", (event) => {
      const slide = document.getElementById("slide");
      if (event.key === "Escape" && typing(event.target) && slide && slide.contains(event.target)) {
        event.target.blur();
        slide.focus({ preventScroll: true });
        return;
      }
      if (!plainKey(event) || event.shiftKey) return;
      const key = event.key;
      if (key === "f" || key === "F") { event.preventDefault(); if (canFull) toggleFull(); }
      else if (key === "n" || key === "N") { event.preventDefault(); notesButton.click(); }
      else if (key in step) { event.preventDefault(); goTo(current("#slide") + step[key]); }
    }, true);
    settle();
  }

  if (notesWindow) {
    const show = (n) => {
      if (!n || n === current("#notes-view")) return;
      const url = `/lessons/${slug}/${n}/notes`;
      window.htmx.ajax("GET", url, { target: "#notes-view", swap: "outerHTML" }).then(() => history.replaceState({}, "", url));
    };
    document.addEventListener("click", (event) => {
      const link = event.target.closest && event.target.closest("[data-notes-go]");
      if (!link || !channel) return;
      event.preventDefault();
      const n = Number(link.dataset.notesGo);
      channel.postMessage({ go: n });
      show(n);
    });
    if (channel) channel.onmessage = (event) => { if (event.data && event.data.step) show(Number(event.data.step)); };
  }
})();
