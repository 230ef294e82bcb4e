/* A proposal's page: its yes / no keys (data-yes-key, data-no-key on the form, from
 * readerstudy.vocabulary.PROPOSAL_SHORTCUTS) press the matching button; not while typing. */
(function () {
  "use strict";
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) return;
    const f = document.getElementById("decision-form");
    if (!f) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : "";
    const choice = key === f.dataset.yesKey ? "yes" : key === f.dataset.noKey ? "no" : "";
    const button = choice ? f.querySelector(`button[data-choice="${choice}"]`) : null;
    if (!button) return;
    e.preventDefault();
    f.requestSubmit(button);
  });
})();
