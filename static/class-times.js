// Class pages (templates/classroom): times are written in UTC on the server; here each <time data-local> is shown in
// this browser's own time zone ("14:25" or "4 Dec, 14:25"), and each [data-timer-ends] drill timer counts down every
// second ("1 min 40 s left", then "time is up"). Without JavaScript the UTC texts and the server's countdown stay.
(function () {
  "use strict";

  function two(n) { return String(n).padStart(2, "0"); }

  function localise(root) {
    root.querySelectorAll("time[data-local]").forEach((el) => {
      if (el.dataset.localised === el.getAttribute("datetime")) return;
      const at = new Date(el.getAttribute("datetime"));
      if (Number.isNaN(at.getTime())) return;
      const clock = two(at.getHours()) + ":" + two(at.getMinutes()) +
        (el.textContent.split(":").length > 2 ? ":" + two(at.getSeconds()) : "");
      const day = at.toLocaleDateString(undefined, { day: "numeric", month: "short" });
      el.textContent = el.dataset.local === "date" ? day + ", " + clock : clock;
      el.title = at.toString();
      el.dataset.localised = el.getAttribute("datetime");
    });
  }

  function left(seconds) {
    if (seconds <= 0) return "time is up";
    const s = Math.ceil(seconds);
    if (s < 60) return s + " s left";
    const m = Math.floor(s / 60);
    return m + " min" + (s % 60 ? " " + two(s % 60) + " s" : "") + " left";
  }

  function tick() {
    document.querySelectorAll("[data-timer-ends]").forEach((el) => {
      const ends = Date.parse(el.dataset.timerEnds);
      if (Number.isNaN(ends)) return;
      const prefix = el.dataset.timerPrefix || "";
      el.textContent = (prefix ? prefix + " " : "") + left((ends - Date.now()) / 1000);
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    localise(document);
    tick();
    setInterval(tick, 1000);
  });
  document.addEventListener("htmx:afterSettle", (event) => {
    localise(document);
    tick();
  });
})();
