// The profiling widget: starts the Web Worker, shows its progress, then the median and spread of each phase,
// and fills the form that attaches the result (with this browser and its core count) to the workload sheet.
(function () {
  "use strict";
  const root = document.querySelector('[data-widget="profile"]');
  if (!root || root.dataset.profileReady) return;
  root.dataset.profileReady = "1";
  const form = root.querySelector("[data-profile-form]");
  const run = root.querySelector("[data-profile-run]");
  const bar = root.querySelector("[data-profile-progress]");
  const phaseText = root.querySelector("[data-profile-phase]");
  const errorText = root.querySelector("[data-profile-error]");
  const resultBox = root.querySelector("[data-profile-result]");
  const repeatError = form.querySelector(".field-error");
  const PHASES = ["read", "parse", "arithmetic"];
  const VERBS = { read: "reading", parse: "parsing", arithmetic: "computing" };

  // The same units as the engine's `seconds` formatter: 3 figures in µs below a millisecond, in ms, then s.
  const fmt = (s) => {
    if (s === 0) return "0 s";
    if (s < 1e-3) return `${Number((s * 1e6).toPrecision(3))} µs`;
    if (s < 1) return `${Number((s * 1e3).toPrecision(3))} ms`;
    return `${Number(s.toPrecision(3))} s`;
  };
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const browser = () => {
    const brands = navigator.userAgentData && navigator.userAgentData.brands;
    const named = brands && brands.find((b) => !/Not.?A.?Brand/i.test(b.brand) && b.brand !== "Chromium");
    const brand = named || (brands && brands.find((b) => b.brand === "Chromium"));
    if (brand) return `${brand.brand} ${brand.version}`;
    const m = navigator.userAgent.match(/(Firefox|Edg|Chrome|Version)\/(\d+)/);
    if (!m) return navigator.userAgent.slice(0, 200);
    return `${m[1] === "Version" ? "Safari" : m[1] === "Edg" ? "Edge" : m[1]} ${m[2]}`;
  };

  const show = (result) => {
    for (const name of PHASES) {
      const xs = result.phases[name].seconds;
      const row = resultBox.querySelector(`tr[data-phase="${name}"]`);
      const cells = { median: median(xs), spread: Math.max(...xs) - Math.min(...xs), fastest: Math.min(...xs), slowest: Math.max(...xs) };
      for (const [key, value] of Object.entries(cells)) row.querySelector(`[data-cell="${key}"]`).textContent = fmt(value);
    }
    const env = result.environment;
    resultBox.querySelector("[data-profile-caption]").textContent =
      `In this browser: ${env.runtime}, ${env.cores} logical cores; ${Number(result.size_bytes / 1e6).toLocaleString("en")} MB of CSV, ` +
      `${result.values.toLocaleString("en")} numbers, ${result.repeat} repeats`;
    const slowest = PHASES.reduce((a, b) => (median(result.phases[a].seconds) >= median(result.phases[b].seconds) ? a : b));
    resultBox.querySelector("[data-profile-slowest]").textContent =
      `The slowest phase here is ${slowest}. Spread is the slowest repeat minus the fastest. This says how this CPU handles this job, nothing about a GPU.`;
    const report = resultBox.querySelector("[data-profile-report]");
    if (report) report.value = JSON.stringify(result);
    const note = root.querySelector("#profile-attach-note");
    if (note) note.textContent = "";
    resultBox.hidden = false;
  };

  const finish = () => { run.disabled = false; run.textContent = "Run the profile again"; };

  run.addEventListener("click", () => {
    const repeat = Number(form.elements.repeat.value);
    if (!Number.isInteger(repeat) || repeat < 1 || repeat > 20) {
      repeatError.textContent = "Enter a whole number of repeats from 1 to 20.";
      form.elements.repeat.setAttribute("aria-invalid", "true");
      return;
    }
    repeatError.textContent = "";
    form.elements.repeat.removeAttribute("aria-invalid");
    errorText.textContent = "";
    const size = Number(form.elements.size_mb.value);
    run.disabled = true;
    bar.hidden = false;
    const progressEl = bar.querySelector("progress");
    progressEl.value = 0;
    const worker = new Worker(form.dataset.worker);
    worker.onmessage = (event) => {
      const m = event.data;
      if (m.type === "progress") {
        const done = ((m.repeat - 1) * 3 + PHASES.indexOf(m.phase) + m.fraction) / (m.of * 3);
        progressEl.value = Math.min(1, done);
        phaseText.textContent = `Repeat ${m.repeat} of ${m.of}: ${VERBS[m.phase]}`;
      } else if (m.type === "done") {
        worker.terminate();
        progressEl.value = 1;
        phaseText.textContent = "Done.";
        const result = m.result;
        result.environment = { runtime: browser(), platform: (navigator.userAgentData && navigator.userAgentData.platform) || navigator.platform || "", processor: "", cores: navigator.hardwareConcurrency || 1 };
        result.measured_at = new Date().toISOString();
        show(result);
        finish();
      } else if (m.type === "error") {
        worker.terminate();
        errorText.textContent = `The profile stopped: ${m.message}. Try a smaller size, or the terminal version below.`;
        finish();
      }
    };
    worker.onerror = (event) => {
      worker.terminate();
      errorText.textContent = `The profile could not run here: ${event.message || "the worker failed"}.`;
      finish();
    };
    worker.postMessage({ url: `${form.dataset.url}?size_mb=${size}`, repeat });
  });
  run.disabled = false;
})();
