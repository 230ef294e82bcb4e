/* Reader case page: keyboard shortcuts, visible-time measurement, preloading, htmx swaps. */
(function () {
  "use strict";

  const STORAGE_KEY = "readerstudy.shortcuts";
  let visibleMs = 0;
  let since = null;

  function startClock() {
    visibleMs = 0;
    since = document.visibilityState === "visible" ? performance.now() : null;
  }
  function elapsed() {
    return Math.round(visibleMs + (since !== null ? performance.now() - since : 0));
  }
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") since = performance.now();
    else if (since !== null) { visibleMs += performance.now() - since; since = null; }
  });

  function form() { return document.getElementById("answer-form"); }
  let lastWorkspace = null;

  // Capture phase: runs before htmx (bound on the form) reads the form's values.
  document.addEventListener("submit", (e) => {
    const input = e.target.querySelector && e.target.querySelector('input[name="time_ms"]');
    if (input) input.value = String(elapsed());
  }, true);

  function shortcutsOn() {
    const box = document.getElementById("shortcuts-enabled");
    return !box || box.checked;
  }

  function setup() {
    const workspace = document.getElementById("workspace");
    if (!workspace) return;
    window.ReaderViewer.init(workspace);
    startClock();
    document.querySelectorAll("link[data-preload]").forEach((l) => { const img = new Image(); img.src = l.href; });
    lastWorkspace = workspace;
    if (document.activeElement && document.activeElement.tagName === "TEXTAREA") document.activeElement.blur();
  }

  // The answer's shortcut keys come from the server, on each radio's data-keys attribute.
  function keyedInput(key) {
    return document.querySelector(`#answer-form input[data-keys~="${CSS.escape(key)}"]`);
  }

  function choose(input) {
    if (input && !input.disabled && !input.closest("fieldset:disabled")) { input.checked = true; input.focus({ preventScroll: true }); }
  }

  function toggleHelp(show) {
    const help = document.getElementById("help");
    if (!help) return;
    help.hidden = show === undefined ? !help.hidden : !show;
    if (!help.hidden) help.querySelector("button").focus();
  }

  function submit() {
    const f = form();
    if (!f || !f.querySelector('button[type="submit"]')) return;
    if (!f.querySelector('input[name="choice"]:checked')) {
      let msg = f.querySelector(".client-error");
      if (!msg) { msg = document.createElement("p"); msg.className = "error client-error"; msg.setAttribute("role", "alert"); f.prepend(msg); }
      msg.textContent = f.dataset.choiceRequired;
      return;
    }
    f.requestSubmit();
  }

  const VIEWER_KEYS = { i: "invert", 0: "reset", " ": "reset", "+": "zoom-in", "=": "zoom-in", "-": "zoom-out", l: "link", f: "fullscreen" };

  document.addEventListener("keydown", (e) => {
    const help = document.getElementById("help");
    if (e.key === "Escape" && help && !help.hidden) { toggleHelp(false); return; }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && !["radio", "checkbox"].includes(t.type)) || t.tagName === "SELECT" || t.isContentEditable)) return;
    if (!shortcutsOn()) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (key === "?") { toggleHelp(); e.preventDefault(); return; }
    if (help && !help.hidden) return;
    const keyed = key.length === 1 ? keyedInput(key) : null;
    if (keyed) { choose(keyed); e.preventDefault(); }
    else if (key in VIEWER_KEYS) { window.ReaderViewer.action(VIEWER_KEYS[key]); e.preventDefault(); }
    else if (key === "Enter") { if (!t || t.tagName !== "BUTTON" && t.tagName !== "A") { submit(); e.preventDefault(); } }
    else if (key === "ArrowLeft" || key === "ArrowRight") {
      const link = document.querySelector(`.case-nav a[data-nav="${key === "ArrowLeft" ? "prev" : "next"}"]`);
      if (link) { window.location.href = link.href; e.preventDefault(); }
    }
  });

  document.addEventListener("click", (e) => {
    const el = e.target.closest("[data-action]");
    if (!el) return;
    if (el.dataset.action === "help") toggleHelp(true);
    if (el.dataset.action === "help-close") toggleHelp(false);
  });

  document.addEventListener("DOMContentLoaded", () => {
    const box = document.getElementById("shortcuts-enabled");
    if (box) {
      box.checked = localStorage.getItem(STORAGE_KEY) !== "off";
      box.addEventListener("change", () => localStorage.setItem(STORAGE_KEY, box.checked ? "on" : "off"));
    }
    setup();
  });
  document.body.addEventListener("htmx:afterSettle", () => {
    const workspace = document.getElementById("workspace");
    if (workspace && workspace !== lastWorkspace) setup();
  });
})();
