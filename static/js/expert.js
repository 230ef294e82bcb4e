/* Expert review page: the same viewer as readers, with its keys while not typing. */
(function () {
  "use strict";
  const KEYS = { i: "invert", 0: "reset", "+": "zoom-in", "=": "zoom-in", "-": "zoom-out", l: "link", f: "fullscreen" };
  document.addEventListener("DOMContentLoaded", () => {
    const workspace = document.getElementById("workspace");
    if (workspace) window.ReaderViewer.init(workspace);
  });
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.tagName === "TEXTAREA" || t.tagName === "SELECT" || (t.tagName === "INPUT" && !["radio", "checkbox"].includes(t.type)))) return;
    if (e.key in KEYS) { window.ReaderViewer.action(KEYS[e.key]); e.preventDefault(); }
  });
})();
