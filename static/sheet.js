// The workload sheet: htmx saves it as the learner types; this keeps unsent edits on the device and resends them.
(function () {
  "use strict";
  const KEY = "gc-sheet-draft-v1";
  const RETRY_MS = 5000;
  const form = document.querySelector("[data-sheet-form]");
  if (!form || form.dataset.sheetReady) return;
  form.dataset.sheetReady = "1";

  let sent = 0;
  let timer = null;

  const read = () => {
    try { return JSON.parse(localStorage.getItem(KEY) || "null"); } catch (e) { return null; }
  };
  const write = (draft) => {
    try { localStorage.setItem(KEY, JSON.stringify(draft)); } catch (e) { /* storage full or blocked */ }
  };
  const status = (text, state) => {
    const el = document.getElementById("sheet-status");
    if (!el) return;
    el.textContent = text;
    el.dataset.state = state;
  };

  // What the learner typed: every text field and the checked status of each heading.
  const snapshot = () => {
    const data = {};
    for (const el of form.elements) {
      if (!el.name || el.type === "hidden" || el.type === "submit") continue;
      if (el.type === "radio") { if (el.checked) data[el.name] = el.value; } else data[el.name] = el.value;
    }
    return data;
  };
  const fill = (data) => {
    for (const el of form.elements) {
      if (!el.name || !(el.name in data)) continue;
      if (el.type === "radio") el.checked = el.value === data[el.name];
      else if (el.type !== "hidden") el.value = data[el.name];
    }
  };

  const remember = () => {
    const old = read();
    write({ seq: (old && old.seq || 0) + 1, dirty: true, data: snapshot(), at: Date.now() });
  };
  form.addEventListener("input", remember);
  form.addEventListener("change", remember);

  const resend = () => {
    const draft = read();
    if (draft && draft.dirty && !draft.refused && window.htmx) window.htmx.trigger(form, "sheet:resend");
  };
  const keepTrying = () => {
    if (timer === null) timer = window.setInterval(resend, RETRY_MS);
  };
  const stopTrying = () => {
    if (timer !== null) window.clearInterval(timer);
    timer = null;
  };
  const unsent = () => {
    const draft = read();
    if (draft) { draft.dirty = true; draft.refused = false; write(draft); }
    status("Not saved yet: the server cannot be reached. Your edits are kept on this device and will be sent when the connection returns.", "offline");
    keepTrying();
  };

  form.addEventListener("htmx:beforeRequest", () => {
    const draft = read();
    sent = draft ? draft.seq : 0;
  });
  form.addEventListener("htmx:afterRequest", (event) => {
    const code = event.detail.xhr ? event.detail.xhr.status : 0;
    if (code === 200 || code === 422) {
      stopTrying();
      const draft = read();
      // Edits typed while this request was in flight stay marked unsent; htmx sends them next.
      if (draft && draft.seq === sent) { draft.dirty = code === 422; draft.refused = code === 422; write(draft); }
    } else {
      unsent();
    }
  });
  form.addEventListener("htmx:sendError", unsent);
  // A message beside a field marks the field invalid for assistive technology, and clears with the message.
  // Numbers are marked one by one: the message names a number still to measure that holds a figure without a
  // note, and that number's value is the control marked invalid; any other message marks the heading's text.
  const mark = (control, bad) => {
    if (bad) control.setAttribute("aria-invalid", "true");
    else control.removeAttribute("aria-invalid");
  };
  document.body.addEventListener("htmx:afterSettle", () => {
    for (const box of form.querySelectorAll("textarea")) {
      const message = document.getElementById(`${box.id}-error`);
      const bad = Boolean(message && message.textContent.trim());
      let numberBad = false;
      for (const row of (box.closest(".sheet-field") || form).querySelectorAll(".sheet-number")) {
        const value = row.querySelector("input[name$='_value']");
        const note = row.querySelector("input[name$='_note']");
        const measure = row.querySelector("input[type=radio][value='to_measure']");
        const wrong = bad && value && /\d/.test(value.value) && measure && measure.checked && note && !note.value.trim();
        if (value) mark(value, wrong);
        numberBad = numberBad || wrong;
      }
      mark(box, bad && !numberBad);
    }
  });
  window.addEventListener("online", resend);

  // Back after a reload or a lost connection: put the unsent edits back in the form and send them.
  document.addEventListener("DOMContentLoaded", () => {
    window.setTimeout(() => {
      const draft = read();
      if (!draft || !draft.dirty) return;
      fill(draft.data || {});
      draft.refused = false;
      write(draft);
      status("Restored edits kept on this device; sending them now.", "saving");
      resend();
    }, 0);
  });
})();
