/* The results pages (a reader's debrief, one case of it in the viewer): keyboard first.
 *
 * Every key is in the markup (data-key, from readerstudy.vocabulary.RESULTS_SHORTCUTS): a key
 * follows its link, presses its button, or focuses its control (data-focus); Enter on a choice
 * in a form (the interval of "practise my misses") sends the form. On a case page the viewer's
 * own keys (viewer.js) work as on the reading page. No rule is re-stated here. `resolve` has
 * no DOM of its own: tests/js/results.test.js runs it in Node.
 */
(function () {
  "use strict";

  const ResultsKeys = {
    /** The key of a keydown as data-key holds it: letters in lower case, "ArrowRight". */
    keyOf(e) { return e.key.length === 1 ? e.key.toLowerCase() : e.key; },

    /** What `key` does among `elements` (those with data-key): the element and how it acts
     * ("focus", "follow" a link, "press" a button), or null when no element has that key. */
    resolve(key, elements) {
      const el = elements.find((candidate) => candidate.dataset && candidate.dataset.key === key);
      if (!el) return null;
      if (el.hasAttribute("data-focus")) return { el, how: "focus" };
      return { el, how: el.tagName === "A" ? "follow" : "press" };
    },
  };

  if (typeof module !== "undefined" && module.exports) { module.exports = ResultsKeys; return; }

  function typing(target) {
    if (window.ReaderViewer && window.ReaderViewer.typing) return window.ReaderViewer.typing(target);
    return !!target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
  }

  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.key === "Enter" && t && t.tagName === "SELECT" && t.form) { e.preventDefault(); t.form.requestSubmit(); return; }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(t)) return;
    const action = ResultsKeys.resolve(ResultsKeys.keyOf(e), Array.from(document.querySelectorAll("[data-key]")));
    if (action) {
      e.preventDefault();
      if (action.how === "focus") action.el.focus();
      else if (action.how === "follow") window.location.assign(action.el.href);
      else action.el.click();
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
