/* The "All cases" page's list: which cases have a draft, which an answer not yet saved.
 * reader.js calls mark() whenever the outbox has sent what it could; on a case page (no list)
 * it does nothing.
 */
(function () {
  "use strict";

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  /** Marks the list's cases with a draft or an answer still waiting (`outbox`: its entries),
   * and holds the final submit while any answer waits. */
  function mark(store, outbox) {
    const list = $("[data-case-list]");
    if (!list) return;
    const drafts = new Set(store.draftNumbers());
    const waiting = new Set(outbox.map((e) => e.number));
    for (const li of $$("li[data-case]", list)) {
      const n = Number(li.dataset.case);
      li.classList.toggle("drafted", drafts.has(n) && !waiting.has(n));
      li.classList.toggle("unsent", waiting.has(n));
      let badge = $(".draft-badge", li);
      const text = waiting.has(n) ? "not saved yet" : drafts.has(n) ? "draft" : "";
      if (!text) { if (badge) badge.remove(); continue; }
      if (!badge) { badge = document.createElement("span"); badge.className = "draft-badge"; li.append(badge); }
      badge.textContent = text;
      badge.title = waiting.has(n) ? "Submitted in this browser, not yet acknowledged by the server" : "Chosen but not submitted: open the case and press Enter";
    }
    const finish = $("[data-final-submit]");
    const note = $("[data-final-note]");
    if (finish) finish.disabled = waiting.size > 0;
    if (note) {
      const drafted = Array.from(drafts).filter((n) => !waiting.has(n)).sort((a, b) => a - b);
      if (waiting.size) {
        note.textContent = `${waiting.size} answer${waiting.size === 1 ? " is" : "s are"} still being sent; the final submit waits for ${waiting.size === 1 ? "it" : "them"}.`;
      } else if (drafted.length) {
        note.textContent = `Case${drafted.length === 1 ? "" : "s"} ${drafted.join(", ")} ${drafted.length === 1 ? "has a draft" : "have drafts"} you have not submitted: a draft does not count as an answer.`;
      } else {
        note.textContent = "";
      }
      note.hidden = !note.textContent;
    }
  }

  window.ReaderList = { mark };
})();
