/* Expert review page: the review form's keys (the image viewer's are viewer.js's handleKey),
 * and "save and next" as fast as the reader's next case.
 *
 * Every review key comes from the server: each control carries `data-keys`, each flag the
 * ratings it lowers (`data-rating-defaults`), the form the defaults (`data-defaults`) and the
 * key that accepts them (`data-defaults-key`). Nothing of the vocabulary is restated here.
 *
 * Save and next: while the expert reviews a question, the next one (the queue's choice once
 * this one is reviewed: the workspace's data-next-url) is fetched, its evidence too, and its
 * images drawn off screen (viewer.js prepare). Enter saves the review (JSON) and, once the
 * server has it, swaps the next question in; a review the server refuses is sent again as an
 * ordinary form, which shows why beside the fields. Without that ahead (or JavaScript), the
 * form posts and the server redirects, as before.
 *
 * The proposed correction (fieldset#correction, shown with "Revise"): `v` chooses Revise and
 * moves the focus into it, and while the focus is there its own keys apply (each control's
 * data-keys: a letter the key, Shift + a letter also correct, a digit the error type; the
 * fieldset's data-edit-key opens the words); Esc leaves it. The first key given without an
 * error type chosen picks the one it implies (a new key: wrong key; another accepted answer:
 * several valid), visibly, which the expert can change.
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
      try { at = Number(JSON.parse(store.getItem(name) || "{}").at); } catch (_) { /* unreadable: stale */ }
      if (name.split(":")[2] !== me || !(Date.now() - at < maxAge)) store.removeItem(name);
    });
  }

  function restoreDraft(f) {
    const key = f.dataset.draftKey;
    const store = storage();
    if (!key || !store) return;
    try { forgetStale(store, key, f.dataset.draftDays); } catch (_) { /* storage refused */ }
    let draft = null;
    try { draft = JSON.parse(store.getItem(key) || "null"); } catch (_) { /* unreadable: none */ }
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

  /* ---------- the next question, ahead ---------- */
  const AHEAD_MAX_AGE_MS = 120000;
  let ahead = null; // { url, page, workspace, title, at, ready } for the next question
  let saving = false;

  function parse(html) {
    const doc = new DOMParser().parseFromString(html, "text/html");
    const ws = doc.getElementById("workspace");
    return ws ? { ws: document.importNode(ws, true), title: doc.title } : null;
  }

  /** The next question's page (the server's redirect from data-next-url), its evidence and
   * its drawn images, ready to swap in. */
  function fetchAhead(ws) {
    const url = ws && ws.dataset.nextUrl;
    if (!url || !window.fetch) return;
    const at = performance.now();
    const entry = { at, ready: null, url };
    ahead = entry;
    entry.ready = fetch(url, { credentials: "same-origin", cache: "no-store" }).then(async (r) => {
      if (!r.ok || !(r.headers.get("Content-Type") || "").includes("text/html")) return null;
      const parsed = parse(await r.text());
      entry.page = r.url;
      if (!parsed) return entry; // the queue itself: no question left
      entry.workspace = parsed.ws;
      entry.title = parsed.title;
      const evidence = parsed.ws.querySelector("#evidence[hx-get]");
      const drawn = window.ReaderViewer.prepare ? window.ReaderViewer.prepare(parsed.ws).catch(() => null) : null;
      if (evidence) {
        const panel = await fetch(evidence.getAttribute("hx-get"), { credentials: "same-origin", headers: { "HX-Request": "true" } })
          .then((e) => (e.ok ? e.text() : null)).catch(() => null);
        if (panel) {
          const tpl = document.createElement("template");
          tpl.innerHTML = panel;
          const fresh = tpl.content.querySelector("#evidence");
          if (fresh) evidence.replaceWith(document.importNode(fresh, true));
        }
      }
      await drawn;
      ws.dataset.nextReady = "1"; // tests and the benchmark wait for this
      return entry;
    }).catch(() => null);
  }

  function freshAhead() {
    return ahead && performance.now() - ahead.at < AHEAD_MAX_AGE_MS ? ahead : null;
  }

  /** Shows the question fetched ahead in place of this one. */
  function swapIn(entry, message) {
    const old = document.getElementById("workspace");
    const next = entry.workspace;
    if (!old || !next) { window.location.assign(entry.page); return; }
    if (document.activeElement && old.contains(document.activeElement)) document.activeElement.blur();
    old.replaceWith(next);
    document.title = entry.title || document.title;
    history.pushState({ expert: true }, "", entry.page);
    window.ReaderViewer.init(next);
    const f = form();
    if (f) {
      restoreDraft(f);
      if (message) {
        const note = document.createElement("p");
        note.className = "expert-saved";
        note.setAttribute("role", "status");
        note.textContent = message;
        f.prepend(note);
      }
    }
    // htmx wires what the new question needs from the server (its evidence, if not ahead).
    if (window.htmx) window.htmx.process(next);
    requestAnimationFrame(() => {
      next.dataset.drawn = String(performance.now());
      setTimeout(() => fetchAhead(next), 0);
    });
  }

  function say(f, text) {
    let note = f.querySelector(".save-failed");
    if (!note) {
      note = document.createElement("p");
      note.className = "error save-failed";
      note.setAttribute("role", "alert");
      f.prepend(note);
    }
    note.textContent = text;
  }

  /** Enter or "Save and next": the review as JSON; then the next question at once. */
  async function saveAndNext(f, e) {
    const entry = freshAhead();
    if (!entry || saving) return false;
    e.preventDefault();
    saving = true;
    let response = null;
    try {
      response = await fetch(f.action || window.location.href, {
        method: "POST",
        body: new FormData(f),
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
    } catch (_) {
      /* offline, or the server is down: said below */
    }
    saving = false;
    if (!response) {
      // Offline, or the server is down: the page stays, and so does the review (a draft).
      say(f, `Not saved: ${navigator.onLine ? "the server could not be reached" : "this computer is offline"}. Your review is kept in this browser; press Enter to try again.`);
      return true;
    }
    const data = (response.headers.get("Content-Type") || "").includes("application/json")
      ? await response.json().catch(() => null) : null;
    if (!response.ok || !data || !data.saved) {
      // Refused (a rating missing, the question changed): the ordinary post shows why,
      // beside the fields.
      HTMLFormElement.prototype.submit.call(f);
      return true;
    }
    const key = f.dataset.draftKey;
    try { if (key) window.localStorage.removeItem(key); } catch (_) { /* storage refused */ }
    const ready = await entry.ready;
    // Not fetched ahead (the fetch failed): the next question is still asked for, as a page;
    // this one is saved and is not shown again.
    if (!ready || !ready.workspace) { window.location.assign((ready && ready.page) || entry.url); return true; }
    swapIn(ready, data.message);
    return true;
  }

  document.addEventListener("submit", (e) => {
    const f = e.target;
    // The session guard (session-guard.js) holds a post until it knows who is signed in, and
    // sends it again: only that second, checked submit is ours.
    if (e.defaultPrevented || !f || f.id !== "review-form") return;
    saveAndNext(f, e);
  });

  document.addEventListener("click", (e) => {
    const helpButton = e.target.closest && e.target.closest('[data-action="help"], [data-action="help-close"]');
    if (helpButton) {
      const help = document.getElementById("help");
      if (help) help.hidden = helpButton.dataset.action === "help-close";
      return;
    }
    const button = e.target.closest && e.target.closest('[data-action="defaults"]');
    const f = form();
    if (button && f && f.contains(button)) { acceptDefaults(f); changed(f); }
  });

  window.addEventListener("popstate", () => window.location.reload());

  document.addEventListener("DOMContentLoaded", () => {
    const workspace = document.getElementById("workspace");
    if (workspace) window.ReaderViewer.init(workspace);
    const f = form();
    if (f) restoreDraft(f);
    if (workspace && f) requestAnimationFrame(() => setTimeout(() => fetchAhead(workspace), 0));
  });

  /* ---------- the proposed correction's keys ---------- */
  function correctionBox() { return document.getElementById("correction"); }

  function inCorrection(t) {
    const box = correctionBox();
    return Boolean(box && t && box.contains(t));
  }

  function impliedErrorType(box, value) {
    if (box.querySelector('input[name="fix-error_type"]:checked')) return;
    const input = box.querySelector(`input[name="fix-error_type"][value="${CSS.escape(value)}"]`);
    if (input) input.checked = true;
  }

  function openCorrection(f) {
    const box = correctionBox();
    if (!box) return;
    requestAnimationFrame(() => box.focus({ preventScroll: false }));
    changed(f);
  }

  /** A key while the focus is in the correction: true when it was one of its keys. */
  function correctionKey(f, box, e) {
    if (e.key === "Escape") {  // back to the review keys; the correction stays as filled
      if (document.activeElement) document.activeElement.blur();
      return true;
    }
    if (e.key.length !== 1) return false;
    if (e.key === box.dataset.editKey || e.key === (box.dataset.editKey || "").toUpperCase()) {
      const words = box.querySelector("details.fix-words");
      if (words) words.open = true;
      const first = box.querySelector('textarea[name="fix-text"]');
      if (first) first.focus();
      return true;
    }
    if (e.shiftKey && /^[A-Z]$/.test(e.key)) {
      const also = box.querySelector(`input[name="fix-accepted"][data-keys~="${CSS.escape(e.key)}"]`);
      if (!also) return false;
      also.checked = !also.checked;
      impliedErrorType(box, "several_valid");
      return true;
    }
    const key = e.key.toLowerCase();
    const radio = box.querySelector(`input[name="fix-correct"][data-keys~="${CSS.escape(key)}"]`);
    if (radio) {
      const was = box.querySelector('input[name="fix-correct"]:checked');
      radio.checked = true;
      // The new key is no longer "also correct".
      const same = box.querySelector(`input[name="fix-accepted"][value="${CSS.escape(radio.value)}"]`);
      if (same) same.checked = false;
      if (!radio.defaultChecked && (!was || was.value !== radio.value)) impliedErrorType(box, "wrong_key");
      return true;
    }
    const type = box.querySelector(`input[name="fix-error_type"][data-keys~="${CSS.escape(key)}"]`);
    if (type) { type.checked = true; return true; }
    return false;
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    const help = document.getElementById("help");
    if (help && !help.hidden) {
      if (e.key === "Escape" || e.key === "?") { help.hidden = true; e.preventDefault(); }
      return;
    }
    if (window.ReaderViewer.typing(t)) {
      if (e.key === "Escape") {
        // Leaving a correction's text box goes back to the correction's keys.
        const box = correctionBox();
        if (box && box.contains(t)) box.focus({ preventScroll: true }); else t.blur();
      }
      return;
    }
    if (e.key === "?" && help) { help.hidden = false; e.preventDefault(); return; }
    const f = form();
    if (f && e.key !== "Enter" && inCorrection(t)) {
      if (correctionKey(f, correctionBox(), e)) { changed(f); e.preventDefault(); return; }
    }
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
      const input = f.querySelector(`input[data-keys~="${CSS.escape(key)}"]:not(fieldset[data-rating] input):not(#correction input)`);
      if (input) {
        if (input.type === "checkbox") input.checked = !input.checked;
        else input.checked = true;
        if (input.name === "decision" && input.value === "revise") { openCorrection(f); e.preventDefault(); return; }
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
