// GPU Classroom's little script: arrow keys between steps, CSRF on htmx requests, the panel fold on phones.
(function () {
  "use strict";
  const typing = (el) => el && (el.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName));

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (typing(event.target) || !onPageBody(event)) return;
    const which = event.key === "ArrowLeft" ? "prev" : event.key === "ArrowRight" ? "next" : null;
    if (!which) return;
    const control = document.querySelector(`[data-nav="${which}"]`);
    if (control) { event.preventDefault(); control.click(); }
  });

  // Arrow keys turn the page only from the page itself (issue 13, item 7): not while a control has the focus,
  // nor after one was activated (a Launch button, a fix link swapped away leaves the focus on the body) until
  // the learner clicks the page itself again.
  let controlUsed = false;
  const CONTROL = "a[href], button, input, select, textarea, summary, label, [tabindex], [hx-get], [hx-post]";
  document.addEventListener("pointerdown", (event) => {
    controlUsed = Boolean(event.target.closest && event.target.closest(CONTROL));
  }, true);
  document.addEventListener("focusin", (event) => {
    if (event.target !== document.body) controlUsed = true;
  });
  function onPageBody(event) {
    const target = event.target;
    return (target === document.body || target === document.documentElement) && !controlUsed;
  }

  document.addEventListener("htmx:configRequest", (event) => {
    const meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) event.detail.headers["X-CSRF-Token"] = meta.content;
  });

  // A widget's request, a drill's answer and a guess name the panel the page shows as `panel_key` (the server leaves
  // an unchanged panel out): the one way it is sent, read from the panel's data-key, which back/forward cannot
  // restore to an old value as it can an input's.
  document.addEventListener("htmx:configRequest", (event) => {
    const panel = document.getElementById("dgx-panel");
    const form = event.detail.elt;
    if (panel && panel.dataset.key && form && form.matches && form.matches("[data-widget-form], form.drill-form, form.predict")) {
      event.detail.parameters.panel_key = panel.dataset.key;
    }
  });

  // The class banner's poll (templates/classroom/banner.html): a shown tab asks with wait=1, so the server holds
  // a poll that finds nothing new until the class changes or 10 s pass (app/classroom/bell.py), and the page asks
  // again at once after a held answer, never more than once every 5 s; a hidden tab asks without waiting, and each
  // answer that brings nothing new doubles its spacing, up to 60 s; showing the tab again polls at once. The poll
  // sends the banner's token back as If-None-Match: a class that did not change answers 304, no body.
  const BANNER_EVERY = 5000;
  let bannerAsked = 0;
  const BANNER_HIDDEN_MAX = 60000;
  let bannerTimer = 0;
  let bannerUnchanged = 0;
  const bannerPolls = () => {
    const banner = document.getElementById("class-banner");
    return banner && banner.hasAttribute("hx-get") && window.htmx ? banner : null;
  };
  const bannerDelay = () => (document.hidden
    ? Math.min(BANNER_EVERY * 2 ** Math.min(bannerUnchanged, 4), BANNER_HIDDEN_MAX) : BANNER_EVERY);
  const scheduleBanner = (delay) => {
    clearTimeout(bannerTimer);
    if (!bannerPolls()) return;
    bannerTimer = setTimeout(() => {
      const banner = bannerPolls();
      if (banner) window.htmx.trigger(banner, "gc-poll");
    }, delay === undefined ? bannerDelay() : delay);
  };
  document.addEventListener("DOMContentLoaded", () => scheduleBanner(0));  // held by the server: a change shows at once
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) return;
    bannerUnchanged = 0;
    scheduleBanner(0);
  });
  document.addEventListener("htmx:configRequest", (event) => {
    const elt = event.detail.elt;
    if (elt && elt.id === "class-banner" && elt.dataset.token) {
      event.detail.headers["If-None-Match"] = `"banner-${elt.dataset.token}"`;
      // only a shown tab holds a poll open: a browser keeps 6 connections to a site, and many hidden tabs each
      // holding one would leave none for the page in front
      if (!document.hidden) event.detail.parameters.wait = "1";
      bannerAsked = Date.now();
    }
  });
  document.addEventListener("htmx:beforeSwap", (event) => {
    const elt = event.detail.elt;
    if (elt && elt.id === "class-banner" && event.detail.xhr && event.detail.xhr.status === 304) {
      event.detail.shouldSwap = false;
    }
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    const elt = event.detail.elt;
    if (!elt || elt.id !== "class-banner") return;
    const status = event.detail.xhr ? event.detail.xhr.status : 0;
    bannerUnchanged = status === 304 || status === 204 ? bannerUnchanged + 1 : 0;
    const waited = status && status < 500 ? Date.now() - bannerAsked : 0;  // a held answer: ask again at once
    scheduleBanner(Math.max(bannerDelay() - waited, 0));
  });
  document.addEventListener("htmx:load", (event) => {  // a new banner swapped in: the class changed
    if (!event.detail.elt || event.detail.elt.id !== "class-banner") return;
    bannerUnchanged = 0;
    scheduleBanner(bannerAsked ? Math.max(bannerDelay() - (Date.now() - bannerAsked), 0) : undefined);
  });

  // htmx's "input changed" compares values, and a checkbox's value never changes: send each toggle instead.
  document.addEventListener("input", (event) => {
    const box = event.target;
    if (box.type !== "checkbox" || !box.form || !box.form.matches("[data-widget-form]") || !window.htmx) return;
    event.stopPropagation();
    window.htmx.trigger(box.form, "submit");
  }, true);

  // A widget's messages: a 422 swaps them in beside the fields (out of band), a good answer clears them here;
  // either way each control's aria-invalid follows its message.
  document.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt;
    const status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (!status || !form || !form.matches || !form.matches("[data-widget-form]")) return;
    (form.closest(".widget") || form).querySelectorAll(".field-error").forEach((slot) => {
      if (status < 300) slot.textContent = "";
      const bad = slot.textContent.trim() !== "";
      const field = slot.closest(".field");
      if (field) field.classList.toggle("invalid", bad);
      const control = field && field.querySelector("input:not([type=hidden]), select, textarea");
      if (control && bad) control.setAttribute("aria-invalid", "true");
      else if (control) control.removeAttribute("aria-invalid");
    });
  });

  // Shareable state: a widget's answer names the address of its own inputs (X-Share-Url), those that differ from
  // the lesson's, under keys named after the widget: "/lessons/x/1?w2.gpus=4#w2" (the fragment names the widget).
  // Merged into the address, it replaces that widget's keys and keeps the other widgets' keys, so a copied link
  // reproduces the whole step; an old link's plain keys for that widget ("?w=2&gpus=4") give way to the new ones.
  // The address bar follows a pause after the last answer (recordWidgetState): history.pushState costs several
  // milliseconds, too much to pay inside every update of a dragged slider (htmx's HX-Replace-Url does it inside
  // the swap). A fix link (hx-push-url) is merged the same way before htmx pushes it.
  const mergeShare = (address, url, wid) => {
    const here = new URL(address, location.href);
    const next = new URL(url, location.href);
    // a slide in presenting mode (/lessons/x/3/present) keeps its address: the widget's keys go on it (issue 27, I2)
    if (here.pathname === next.pathname + "/present") next.pathname = here.pathname;
    if (next.pathname !== here.pathname || !/^w[0-9]+$/.test(wid)) return next.pathname + next.search;
    const own = (key) => key.startsWith(wid + ".");
    const form = document.querySelector(`#${wid} form[data-widget-form]`);
    const plain = (here.searchParams.get("w") || "1") === wid.slice(1) && form
      ? new Set(Array.from(form.elements, (el) => el.name).filter((name) => name && !name.includes(".")))
      : new Set();
    const params = new URLSearchParams();
    here.searchParams.forEach((value, key) => { if (!own(key) && !plain.has(key)) params.append(key, value); });
    next.searchParams.forEach((value, key) => { if (own(key)) params.append(key, value); });
    const query = params.toString();
    return here.pathname + (query ? "?" + query : "") + here.hash;
  };
  const shared = new Map();  // the answers not yet in the address bar, the latest per widget, with their page's path
  let shareTimer = 0;
  const current = () => location.pathname + location.search + location.hash;
  const flushShared = () => {
    clearTimeout(shareTimer);
    let address = current();
    // an answer given on another page (a slide turned in place since) is that page's, never this one's address
    shared.forEach(({ url, page }, wid) => {
      if (page === location.pathname) address = mergeShare(address, url, wid);
    });
    shared.clear();
    recordWidgetState(address);
    return address;
  };
  document.addEventListener("htmx:afterRequest", (event) => {
    const xhr = event.detail.xhr;
    const url = xhr && xhr.status ? xhr.getResponseHeader("X-Share-Url") : null;
    if (!url) return;
    shared.set(new URL(url, location.href).hash.slice(1), { url, page: location.pathname });
    clearTimeout(shareTimer);
    shareTimer = setTimeout(flushShared, WIDGET_PAUSE);
  });
  // A slide turned inside the pause (presenting mode swaps #slide in place: no page load, no pagehide) records its
  // widgets' latest answers in its own address first, so Back returns to the slide as it was left (issue 27, I2).
  document.addEventListener("htmx:beforeRequest", (event) => {
    const target = event.detail.target;
    if (target && target.id === "slide" && shared.size) flushShared();
  });
  document.addEventListener("htmx:beforeHistoryUpdate", (event) => {
    const { history: update, target } = event.detail;
    if (!update || !target || !/^w[0-9]+$/.test(target.id)) return;
    shared.delete(target.id);  // the fix is newer than that widget's pending answer
    update.path = mergeShare(flushShared(), update.path, target.id);
  });

  // The address of widget states (issue 27, W36): the address bar follows the widget's state after each pause, so a
  // copied link or a reload shows what is on screen, but by replacing the step's history entry, never adding one:
  // Back leaves the step, as a learner expects, instead of undoing edits one by one (a fix link too: htmx is told
  // to replace). Going back to the step from the next page reloads it at the address, which holds the whole state.
  const WIDGET_PAUSE = 400;  // ms without an answer: a pause in typing or dragging (a live run polls every 500)
  let rendered = location.pathname + location.search;
  function recordWidgetState(address) {
    if (address === current()) return;
    history.replaceState({ ...(history.state || {}), gcWidgets: true }, "", address);
    rendered = location.pathname + location.search;
  }
  document.addEventListener("htmx:beforeHistoryUpdate", (event) => {
    const update = event.detail.history;
    const target = event.detail.target;
    if (update && target && /^w[0-9]+$/.test(target.id)) update.type = "replace";
  });
  document.addEventListener("htmx:replacedInHistory", () => { rendered = location.pathname + location.search; });
  // Leaving inside a pause: record the latest answer first, so coming back shows what was typed.
  window.addEventListener("pagehide", () => { if (shared.size) flushShared(); });
  window.addEventListener("popstate", (event) => {
    if (event.state && event.state.htmx) return;  // htmx restores (reloads) its own entries
    if (event.state && event.state.gcSlide) return;  // present.js brings a slide in place, keeping full screen
    if (location.pathname + location.search !== rendered) location.reload();
  });

  // hx-swap="replace": outerHTML done natively for widget results. htmx's own outerHTML walks every element
  // it removes (two events each) and copies attributes for CSS transitions we don't use: ~4 ms an update.
  // The new elements still go through htmx (wired, htmx:load); the old ones are detached, and htmx's polling
  // stops by itself for elements no longer in the page.
  if (window.htmx) window.htmx.defineExtension("gc-swap", {
    handleSwap(style, target, fragment, settleInfo) {
      if (style !== "replace" || !target.parentNode) return false;
      const fresh = [...fragment.childNodes];
      target.replaceWith(...fresh);
      const elements = fresh.filter((node) => node.nodeType === Node.ELEMENT_NODE);
      settleInfo.elts = settleInfo.elts.filter((elt) => elt !== target).concat(elements);
      return elements;
    },
  });

  // The dgx-1 panel is plain markup (nothing in it for htmx to wire), so its out-of-band copy replaces it
  // natively: htmx's own swap walks and cleans every element it removes, several milliseconds per update.
  // The copy leaves the parts that never change empty (data-kept: the hatch pattern, the legend); the page's
  // own move into it. The server sends the copy only when the panel changed (app/web/panel.py).
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const { target, fragment } = event.detail;
    const fresh = fragment && fragment.firstElementChild;
    if (!target || target.id !== "dgx-panel" || !fresh || fresh.id !== "dgx-panel") return;
    fresh.querySelectorAll("[data-kept]").forEach((slot) => {
      const kept = target.querySelector(`[data-kept="${slot.dataset.kept}"]`);
      if (kept && !slot.firstChild) slot.replaceWith(kept);
    });
    target.replaceWith(fresh);
    event.detail.shouldSwap = false;
  });

  // Out-of-band parts marked data-plain (a widget's used values, its stale note, its field messages, the panel's
  // announcement) hold nothing for htmx, so they too are swapped natively: htmx's own swap walks and cleans every
  // element it removes (the plan's used values are 21 inputs) on every keystroke. An outerHTML part arrives as a
  // fragment holding the element; an innerHTML one as the element whose children replace the target's.
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const { target, fragment } = event.detail;
    if (!target || !fragment || !event.detail.shouldSwap) return;
    const whole = fragment.nodeType === Node.DOCUMENT_FRAGMENT_NODE ? fragment.firstElementChild : null;
    if (whole && whole.id === target.id && whole.hasAttribute("data-plain")) {
      target.replaceWith(whole);
    } else if (fragment.nodeType === Node.ELEMENT_NODE && fragment.hasAttribute("data-plain")) {
      target.replaceChildren(...fragment.childNodes);
    } else {
      return;
    }
    event.detail.shouldSwap = false;
  });

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

  // Glossary terms (issue 14): the server renders a marked term as a link to its /glossary entry with its
  // definition hidden beside it (so it works without JavaScript). Here each link becomes a button with
  // aria-expanded that opens the definition in place, by click, tap, Enter or Space; Escape closes it.
  const armTerms = (root) => {
    if (!root || !root.querySelectorAll) return;
    root.querySelectorAll(".term > a.term-name[data-def]").forEach((link) => {
      const def = document.getElementById(link.dataset.def);
      if (!def) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "term-name";
      button.textContent = link.textContent;
      button.setAttribute("aria-expanded", "false");
      button.setAttribute("aria-controls", def.id);
      link.replaceWith(button);
    });
  };
  const setTerm = (button, open) => {
    const def = document.getElementById(button.getAttribute("aria-controls"));
    if (!def) return;
    button.setAttribute("aria-expanded", String(open));
    def.hidden = !open;
  };
  document.addEventListener("DOMContentLoaded", () => armTerms(document));
  document.addEventListener("htmx:load", (event) => armTerms(event.detail.elt));
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button.term-name");
    if (button) setTerm(button, button.getAttribute("aria-expanded") !== "true");
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    const term = event.target.closest && event.target.closest(".term");
    const button = term && term.querySelector("button.term-name[aria-expanded='true']");
    if (button) { setTerm(button, false); button.focus(); }
  });

  // Cues for content cut at an edge (issue 27, W38, I1): a table wider than the screen says it scrolls sideways,
  // and a presenting-mode column taller than the slide says there is more below until it is scrolled to its end.
  // Marked here, drawn by app.css; checked on load, after each swap, on resize and as a column scrolls.
  // Sizes are read all at once, then written (a read after a write would lay the page out again for each
  // table), and after a swap only once the new answer has been painted: a cue is not worth delaying the answer.
  const markOverflow = (root) => {
    if (!root || !root.querySelectorAll) return;
    // On a phone each chart is drawn at its own size (1 SVG unit = 1 CSS px, so 12-unit labels read at 12 px,
    // issue 27, W39) and scrolls sideways; app.css's 32rem is the floor without JavaScript.
    const phone = window.matchMedia("(max-width: 30rem)").matches;
    root.querySelectorAll(".chart svg[viewBox]").forEach((svg) => {
      const box = svg.viewBox.baseVal;
      svg.style.minWidth = phone && box && box.width ? `${box.width}px` : "";
    });
    const tables = [...root.querySelectorAll("table.data")];
    const figures = [...root.querySelectorAll("figure.chart:not([tabindex])")];
    const regions = [...root.querySelectorAll("[data-scroll-region]")];
    const wide = (el) => el.scrollWidth > el.clientWidth + 1;
    const tablesOver = tables.map(wide), figuresOver = figures.map(wide), regionsMore = regions.map(moreBelow);
    tables.forEach((table, i) => {
      table.toggleAttribute("data-overflows", tablesOver[i]);
      if (tablesOver[i]) table.tabIndex = 0;  // the keyboard scrolls it too; its caption names it
      else table.removeAttribute("tabindex");
    });
    figures.forEach((figure, i) => { if (figuresOver[i]) figure.tabIndex = 0; });  // scrolled by keyboard too
    regions.forEach((region, i) => region.toggleAttribute("data-more-below", regionsMore[i]));
  };
  const moreBelow = (region) => region.scrollTop + region.clientHeight < region.scrollHeight - 4;
  const markMoreBelow = (region) => region.toggleAttribute("data-more-below", moreBelow(region));
  let overflowPending = false;
  const markOverflowAfterPaint = () => {
    if (overflowPending) return;
    overflowPending = true;
    requestAnimationFrame(() => setTimeout(() => { overflowPending = false; markOverflow(document); }, 0));
  };
  document.addEventListener("DOMContentLoaded", () => markOverflow(document));
  document.addEventListener("htmx:afterSettle", markOverflowAfterPaint);
  window.addEventListener("resize", markOverflowAfterPaint);
  document.addEventListener("scroll", (event) => {
    const region = event.target;
    if (region && region.matches && region.matches("[data-scroll-region]")) markMoreBelow(region);
  }, true);

  // A Print button (the cheat sheet): shown only where JS can print, so a page without JS has no dead button.
  const armPrint = (root) => {
    root.querySelectorAll("button[data-print]").forEach((button) => { button.hidden = false; });
  };
  document.addEventListener("DOMContentLoaded", () => armPrint(document));
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button[data-print]");
    if (button) window.print();
  });

  // Author mode only (`gpu-classroom author`): the server says when this page's lesson was reloaded from a
  // save; reload the page where the reader was. Elsewhere there is no #author-mode and nothing runs.
  const SCROLL_KEY = "gc-author-scroll";
  document.addEventListener("DOMContentLoaded", () => {
    const mode = document.getElementById("author-mode");
    if (!mode || !window.EventSource) return;
    const here = location.pathname + location.search;
    try {
      const saved = JSON.parse(sessionStorage.getItem(SCROLL_KEY) || "null");
      sessionStorage.removeItem(SCROLL_KEY);
      if (saved && saved.at === here) window.scrollTo(0, saved.y);
    } catch (error) { /* storage off: the page opens at the top */ }
    const source = new EventSource(mode.dataset.authorEvents);
    source.addEventListener("reload", () => {
      source.close();
      try { sessionStorage.setItem(SCROLL_KEY, JSON.stringify({ at: here, y: window.scrollY })); } catch (error) { /* no storage */ }
      location.reload();
    });
  });
})();
