/* The results pages (a reader's debrief, one case of it in the viewer): keyboard first.
 *
 * Every key is in the markup (data-key, from readerstudy.vocabulary.RESULTS_SHORTCUTS): a key
 * follows its link, presses its button, or focuses its control (data-focus). On a case page
 * the viewer's own keys (viewer.js) work as on the reading page. No rule is re-stated here.
 */
(function () {
  "use strict";

  function keyOf(e) { return e.key.length === 1 ? e.key.toLowerCase() : e.key; }

  function typing(target) {
    if (window.ReaderViewer && window.ReaderViewer.typing) return window.ReaderViewer.typing(target);
    return !!target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    const key = keyOf(e);
    const target = Array.from(document.querySelectorAll("[data-key]")).find((el) => el.dataset.key === key);
    if (target) {
      e.preventDefault();
      if (target.hasAttribute("data-focus")) target.focus();
      else if (target.tagName === "A") window.location.assign(target.href);
      else target.click();
      return;
    }
    if (window.ReaderViewer) window.ReaderViewer.handleKey(e);
  });

  function start() {
    const ws = document.querySelector("[data-results-case]");
    if (ws && window.ReaderViewer) window.ReaderViewer.init(ws);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
