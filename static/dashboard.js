// The instructor's dashboard between polls (templates/classroom/dashboard.html). Each poll brings only the rows
// that changed since the page's stamp, in the hidden #grid-updates table: each replaces its old row or joins the
// grid in name order. The texts that change with the clock ("2 min ago", time on this step) are worked out here
// from each row's timestamps, on the server's clock (the poller's data-generated), the way app/classroom's
// dashboard._minutes says them, so a row the server sent once stays true without being sent again.
(function () {
  "use strict";
  let offset = 0; // the server's clock minus this browser's, in ms

  function minutes(seconds) {
    if (seconds >= 90 * 60) return (seconds / 3600).toFixed(1) + " h";
    return seconds >= 90 ? Math.round(seconds / 60) + " min" : Math.round(seconds) + " s";
  }

  function poller() {
    return document.getElementById("live-poll");
  }

  function syncClock() {
    const p = poller();
    if (p && p.dataset.generated) offset = Date.parse(p.dataset.generated) - Date.now();
  }

  function tick() {
    const p = poller();
    if (!p || p.hasAttribute("data-frozen")) return; // a closed class: the texts stop at its end
    const now = Date.now() + offset;
    document.querySelectorAll("#grid-body td[data-last]").forEach((td) => {
      const idle = Math.max((now - Date.parse(td.dataset.last)) / 1000, 0);
      td.textContent = idle < 10 ? "just now" : minutes(idle) + " ago";
    });
    // active time: the gap since the last counted activity counts while it is no longer than the idle limit
    const idle = parseFloat(p.dataset.idle || "300");
    document.querySelectorAll("#grid-body td[data-on-base]").forEach((td) => {
      const counted = td.dataset.counted ? Date.parse(td.dataset.counted) : null;
      const gap = counted === null ? 0 : Math.max((now - counted) / 1000, 0);
      td.textContent = minutes(parseFloat(td.dataset.onBase) + (gap <= idle ? gap : 0));
    });
  }

  function place(row, body) {
    const old = body.querySelector('tr[data-learner="' + row.dataset.learner + '"]');
    if (old) {
      old.replaceWith(row);
      return;
    }
    const keyOf = (r) => (r.cells[0] && r.cells[0].dataset.key) || "";
    const key = keyOf(row);
    const next = Array.from(body.rows).find((r) => keyOf(r) > key);
    body.insertBefore(row, next || null);
  }

  function mark(row, stuck, left) {
    row.classList.toggle("left", left);
    row.classList.toggle("stuck", stuck);
    const hidden = row.querySelector("th .visually-hidden");
    const note = hidden && hidden.querySelector(".stuck-note");
    if (stuck && hidden && !note) {
      const added = document.createElement("span");
      added.className = "stuck-note";
      added.textContent = ", may be stuck";
      hidden.appendChild(added);
    } else if (!stuck && note) {
      note.remove();
    }
  }

  function applyUpdates() {
    const updates = document.getElementById("grid-updates");
    const body = document.getElementById("grid-body");
    if (!updates || !body) return;
    Array.from(updates.querySelectorAll("tbody tr")).forEach((r) => place(r, body));
    const foot = updates.querySelector("tfoot");
    const gridFoot = document.getElementById("grid-foot");
    if (foot && gridFoot) gridFoot.innerHTML = foot.innerHTML;
    updates.innerHTML = "";
    // who may be stuck (and who left the room) changes with the clock too: the summary says who, every poll
    // (the list names the worst 50; data-stuck-ids names every one flagged); rows removed or merged go
    const summary = document.getElementById("live-summary");
    const ids = (name) => new Set(((summary && summary.dataset[name]) || "").split(" ").filter(Boolean));
    const list = document.querySelector("#live-summary [data-stuck-ids]");
    const stuck = new Set(list ? list.dataset.stuckIds.split(" ").filter(Boolean) : []);
    const gone = ids("goneIds");
    const left = ids("leftIds");
    Array.from(body.rows).forEach((r) => {
      if (gone.has(r.dataset.learner)) r.remove();
      else mark(r, stuck.has(r.dataset.learner), left.has(r.dataset.learner));
    });
    const table = body.closest("table");
    if (table) table.dataset.learners = String(body.rows.length);
  }

  document.addEventListener("htmx:afterSettle", () => {
    if (!poller()) return;
    syncClock();
    applyUpdates();
    tick();
  });
  document.addEventListener("DOMContentLoaded", () => {
    if (!poller()) return;
    syncClock();
    tick();
    setInterval(tick, 5000);
  });
})();
