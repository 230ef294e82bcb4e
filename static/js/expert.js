/* Expert review page: the review form's keys (the image viewer's are viewer.js's handleKey).
 *
 * Every review key comes from the server: each control carries `data-keys`, each flag the
 * ratings it lowers (`data-rating-defaults`), the form the defaults (`data-defaults`) and the
 * key that accepts them (`data-defaults-key`). Nothing of the vocabulary is restated here.
 */
(function () {
  "use strict";
  function form() { return document.getElementById("review-form"); }

  function checkedValue(f, name) {
    const input = f.querySelector(`input[name="${CSS.escape(name)}"]:checked`);
    return input ? input.value : null;
  }

  function setRadio(f, name, value) {
    const input = f.querySelector(`input[name="${CSS.escape(name)}"][value="${CSS.escape(value)}"]`);
    if (input) input.checked = true;
  }

  // A digit rates the quality row holding the focus, else the first one not yet rated.
  function rate(f, key, target) {
    const rows = Array.from(f.querySelectorAll("fieldset[data-rating]"));
    let row = target && target.closest ? target.closest("fieldset[data-rating]") : null;
    if (!row) row = rows.find((r) => !r.querySelector("input:checked"));
    if (!row) return false;
    const input = row.querySelector(`input[data-keys~="${CSS.escape(key)}"]`);
    if (!input) return false;
    input.checked = true;
    const next = rows[rows.indexOf(row) + 1];
    if (target && target.closest && target.closest("fieldset[data-rating]") && next) {
      (next.querySelector("input:checked") || next.querySelector("input")).focus({ preventScroll: true });
    }
    return true;
  }

  // Fill every rating and the difficulty still unset: the form's defaults, lowered where a
  // checked flag says so.
  function acceptDefaults(f) {
    // A question with a problem (a flag, or a decision the server lists) gets only what the
    // expert judged: the ratings a flag speaks against and the difficulty, from the markup.
    const problemDecisions = JSON.parse(f.dataset.problemDecisions || "[]");
    const problem = Boolean(f.querySelector("input[name=flags]:checked")) ||
      problemDecisions.includes(checkedValue(f, "decision"));
    const base = problem ? f.dataset.problemDefaults : f.dataset.defaults;
    const values = Object.assign({}, JSON.parse(base || "{}"));
    f.querySelectorAll("input[name=flags]:checked[data-rating-defaults]").forEach((flag) => {
      Object.assign(values, JSON.parse(flag.dataset.ratingDefaults));
    });
    Object.entries(values).forEach(([name, value]) => {
      if (checkedValue(f, name) === null) setRadio(f, name, value);
    });
  }

  /* ---------- drafts: a review is never lost to an expired session or a closed tab ----------
   * Every change is kept in this browser (keyed by study, expert and question) until the page
   * shows a saved review with the same values: then the draft goes. A draft
   * that differs is put back into the form, with a notice; nothing is saved until Enter. */
  function valuesOf(f) {
    const pairs = [];
    new FormData(f).forEach((value, name) => {
      if (name !== "csrfmiddlewaretoken" && typeof value === "string") pairs.push([name, value]);
    });
    return JSON.stringify(pairs.sort());
  }

  /** A key set a control without an event: let the form's listeners (the draft) know. */
  function changed(f) {
    f.dispatchEvent(new Event("change"));
  }

  function storage() {
    try { return window.localStorage; } catch (_) { return null; }
  }

  /** Drafts expire after the study's draft_days; another user's drafts in this browser go. */
  function forgetStale(store, key, days) {
    const [, , me] = key.split(":");
    const maxAge = (Number(days) > 0 ? Number(days) : 14) * 24 * 60 * 60 * 1000;
    const names = [];
    for (let i = 0; i < store.length; i++) names.push(store.key(i));
    names.forEach((name) => {
      if (!name || !name.startsWith("review:")) return;
      let at = 0;
      try { at = Number(JSON.parse(store.getItem(name) || "{}").at); } catch (_) { at = 0; }
      if (name.split(":")[2] !== me || !(Date.now() - at < maxAge)) store.removeItem(name);
    });
  }

  function restoreDraft(f) {
    const key = f.dataset.draftKey;
    const store = storage();
    if (!key || !store) return;
    try { forgetStale(store, key, f.dataset.draftDays); } catch (_) { /* storage refused */ }
    let draft = null;
    try { draft = JSON.parse(store.getItem(key) || "null"); } catch (_) { draft = null; }
    if (draft && draft.values !== valuesOf(f)) {
      f.querySelectorAll("input[type=radio], input[type=checkbox]").forEach((i) => { i.checked = false; });
      JSON.parse(draft.values).forEach(([name, value]) => {
        f.querySelectorAll(`[name="${CSS.escape(name)}"]`).forEach((input) => {
          if (input.type === "radio" || input.type === "checkbox") {
            if (input.value === value) input.checked = true;
          } else {
            input.value = value;
          }
        });
      });
      const note = document.createElement("p");
      note.className = "draft-note";
      note.setAttribute("role", "status");
      note.textContent = "Your unsaved review of this question was restored. Press Enter to save it.";
      f.prepend(note);
    } else if (draft && f.dataset.saved === "1") {
      store.removeItem(key);  // the server has these values: saved
    }
    const keep = () => { try { store.setItem(key, JSON.stringify({ values: valuesOf(f), at: Date.now() })); } catch (_) { /* full */ } };
    f.addEventListener("change", keep);
    f.addEventListener("input", keep);
    f.addEventListener("submit", keep);  // a key's change fires no event: keep what is sent
  }

  document.addEventListener("DOMContentLoaded", () => {
    const workspace = document.getElementById("workspace");
    if (workspace) window.ReaderViewer.init(workspace);
    const f = form();
    if (f) {
      const button = f.querySelector('[data-action="defaults"]');
      if (button) button.addEventListener("click", () => { acceptDefaults(f); changed(f); });
      restoreDraft(f);
    }
  });

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (window.ReaderViewer.typing(t)) {
      if (e.key === "Escape") t.blur();
      return;
    }
    const f = form();
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (f && key === "Enter") {
      if (t && (t.tagName === "BUTTON" || t.tagName === "A" || t.tagName === "SUMMARY")) return;
      e.preventDefault();
      f.requestSubmit();  // the browser names any required choice still missing
      return;
    }
    if (f && key.length === 1) {
      if (key === f.dataset.defaultsKey) { acceptDefaults(f); changed(f); e.preventDefault(); return; }
      if (rate(f, key, t)) { changed(f); e.preventDefault(); return; }
      const input = f.querySelector(`input[data-keys~="${CSS.escape(key)}"]:not(fieldset[data-rating] input)`);
      if (input) {
        if (input.type === "checkbox") input.checked = !input.checked;
        else input.checked = true;
        if (input.value === "other" && input.checked) {
          const text = f.querySelector('input[name="other_text"]');
          if (text) { text.focus(); changed(f); e.preventDefault(); return; }
        }
        changed(f);
        e.preventDefault();
        return;
      }
    }
    window.ReaderViewer.handleKey(e);
  });
})();
