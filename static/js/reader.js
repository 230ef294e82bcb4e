/* The reading page: navigation and rendering; shortcuts, drafts, zero-wait advance.
 *
 * - Keys: the answer keys come from the server (each radio's data-keys); the viewer's are
 *   viewer.js's (handleKey). Arrow keys never change an option (they move between cases, and
 *   the choice stays as a draft).
 * - Drafts: every change is kept in this browser (reader-store.js) until the server has the
 *   same values; a draft comes back whenever its case is shown again.
 * - Saves: Enter hands the answer to the outbox (reader-outbox.js: order, retry, CSRF,
 *   sign-in; no DOM) and shows the next case at once (fetched and drawn ahead by
 *   reader-cases.js). This file shows what the outbox reports: an alert in plain words while an
 *   answer waits, the sign-in dialog, the receipt's progress and next case.
 * - The server stays the source of truth: which case comes next is its answer to each save
 *   (the prefetched case is only its earlier guess), and Back fetches the case again.
 * - Between cases: when the next case cannot be opened after Enter (offline), the submitted
 *   case stays held and the next one opens by itself once it can (reader-advance.js); the
 *   clock counts no case meanwhile, so waiting is never reading time.
 * - A practice set (data-practice): Enter sends the answer and, once the server has it, shows
 *   the same case again as the server now renders it, with right or wrong, the key and the
 *   explanation (data-feedback); Enter there goes on to the next case (data-practice-next).
 *   The key is never in the page before the answer is saved.
 * The same file runs on the "All cases" page, where it marks drafts and sends the outbox.
 *
 * What a key does is reader-keys.js's decision, what the reader is told reader-notices.js's
 * words, and where a receipt sends the reader reader-receipts.js's (none of them touches the
 * DOM); this file gathers their facts from the page and carries their answers out.
 */
(function () {
  "use strict";

  const KEYS_PREF = "readerstudy.shortcuts";
  const PANEL_PREF = "readerstudy.panel";

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const { valuesOf, apply, chosenLabel, mainChoice, markSaved } = window.ReaderForm;

  let store = null;
  let outbox = null; // ReaderOutbox.Outbox: sends the answers (reader-outbox.js)
  let cases = null; // ReaderCases.Cases: fetches and prepares cases (reader-cases.js)
  let shownToken = 0; // bumps on every case shown: tells whether the reader moved since
  let awaitingEnd = null; // entry id of the last open case's save: go on once it is acknowledged
  let advance = null; // ReaderAdvance.Advance: the next case after Enter, once it can be opened
  const { SHOWN, MOVED, UNREACHABLE } = window.ReaderAdvance || { SHOWN: "shown", MOVED: "moved", UNREACHABLE: "unreachable" };
  let leaving = null; // the workspace submitted with Enter while the next case is on its way
  let tick = null;
  const receipts = new ReaderReceipts.Receipts(); // what the server said about this page's saves
  const refused = receipts.refused; // number -> { message, label, url, conflict }
  let sentSomething = false;
  let progressAt = 0; // when the progress shown last came from the server's receipt

  /* ---------- visible, unpaused time on the case (reader-clock.js) ---------- */
  const clock = new ReaderClock.Clock({ now: () => performance.now(), visible: document.visibilityState === "visible" });
  function startClock() { clock.startCase(); }
  function elapsed() { return clock.elapsed(); }
  document.addEventListener("visibilitychange", () => clock.setVisible(document.visibilityState === "visible"));

  /* ---------- pause and the break reminder ---------- */
  function isPaused() { return document.body.classList.contains("paused"); }
  function pauseKey() { const b = $('[data-action="pause"][data-key]'); return b ? b.dataset.key : ""; }
  function reviewLink() { return $('[data-action="review"][data-key]'); }
  function pause() {
    if (isPaused() || !workspace()) return;
    clock.pause();
    if (document.activeElement && workspace().contains(document.activeElement)) document.activeElement.blur();
    document.body.classList.add("paused");
    const screen = document.getElementById("paused");
    // The screen itself takes the focus, not Resume: an Enter typed in a burst must not resume.
    if (screen) { screen.hidden = false; screen.focus({ preventScroll: true }); }
    const reminder = reminderBox();
    if (reminder) reminder.hidden = true;
  }
  function resume() {
    if (!isPaused()) return;
    const screen = document.getElementById("paused");
    if (screen) screen.hidden = true;
    document.body.classList.remove("paused");
    clock.resume();
    // The case was hidden: answer keys wait for the minimum dwell again, as on a new case.
    const ws = workspace();
    if (ws && ws.dataset.drawn) {
      ws.dataset.drawn = String(performance.now());
      delete ws.dataset.seen;
      seenAfterDwell(ws);
    }
  }
  let reminderEl = null; // held by reference: it docks in the case's panel, which a swap replaces
  function reminderBox() { if (!reminderEl) reminderEl = document.getElementById("break-reminder"); return reminderEl; }
  function breakMinutes() { const el = reminderBox(); return el ? Number(el.dataset.breakMinutes) || 0 : 0; }
  function checkBreak() {
    const el = reminderBox();
    if (!el || isPaused() || !el.hidden || !clock.breakDue(breakMinutes())) return;
    $(".break-text", el).textContent = ReaderNotices.breakText(clock.reading());
    const spot = dockSpot();
    if (spot && el.parentNode !== spot) spot.prepend(el);
    el.hidden = false;
  }
  setInterval(checkBreak, 15000);

  /* ---------- the case on screen ---------- */
  function workspace() { return document.getElementById("workspace"); }
  function form() { return document.getElementById("answer-form"); }
  function shownNumber() { const ws = workspace(); return ws ? Number(ws.dataset.caseNumber) : null; }
  /** The case has been on screen for the reading policy's minimum dwell (the server's
   * data-min-dwell-ms), counted from the frame that drew its images (data-drawn). Until then
   * answer keys and Enter do nothing: a burst of keys meant for the case before cannot answer
   * (or submit a draft on) a case the reader has not seen. */
  function seen(ws) {
    ws = ws || workspace();
    if (!ws || !ws.dataset.drawn) return false;
    if (ws.dataset.seen) return true;
    const dwell = Number(ws.dataset.minDwellMs) || 0;
    return performance.now() - Number(ws.dataset.drawn) >= dwell;
  }
  const NOT_SEEN = ReaderKeys.NOT_SEEN;
  /** data-seen once the minimum dwell is over: keys act (and tests wait for it). A "keys
   * wait" note from a key pressed too early goes then too: it would say the opposite of
   * what the keys now do. */
  function seenAfterDwell(ws) {
    setTimeout(() => {
      if (!ws.isConnected) return;
      ws.dataset.seen = "1";
      const note = pausedNote();
      if (note && !note.hidden && note.textContent === NOT_SEEN) { clearTimeout(pausedTimer); note.hidden = true; }
    }, Number(ws.dataset.minDwellMs) || 0);
  }
  function editable() { const ws = workspace(); return !!(ws && ws.dataset.editable && $('button[type="submit"]', form())); }

  function onFormEdited() {
    const f = form(), n = shownNumber();
    if (!f || !store || !editable()) return;
    const values = valuesOf(f);
    if (ReaderStore.same(values, valuesOf(f, true))) store.clearDraft(n);
    else store.saveDraft(n, values);
    clientError("");
    renderNote();
    renderStrip();
  }

  function renderNote() {
    const f = form(), n = shownNumber();
    const note = f && $(".draft-note", f);
    if (!note || !store) return;
    const pending = outbox && outbox.pending(n);
    const draft = store.draft(n);
    const said = ReaderNotices.formNote({
      sending: !!pending && ReaderStore.same(pending.values, valuesOf(f)),
      trouble: !!(outbox && outbox.trouble && outbox.trouble.entry.number === n),
      refused: refused.get(n),
      draft: !!draft && !ReaderStore.same(draft.values, valuesOf(f, true)),
      answered: !!workspace().dataset.answered,
      saved: mainChoice(f, true),
      mine: mainChoice(f),
    });
    note.replaceChildren();
    note.className = "draft-note";
    if (said && said.kind === "conflict") {
      const strong = document.createElement("strong");
      strong.textContent = said.text;
      const actions = document.createElement("span");
      actions.className = "draft-actions";
      actions.append(noteButton("discard-draft", "Keep saved", ""), noteButton("save-draft", "Save my change", "primary"));
      note.append(strong, actions);
    } else if (said && said.kind === "draft") {
      note.append(said.text, noteButton("discard-draft", "Discard draft"));
    } else if (said) {
      note.textContent = said.text;
    }
    if (said && said.kind !== "draft") note.classList.add(said.kind);
    note.hidden = !note.textContent;
  }

  function noteButton(action, text, className = "link") {
    const b = document.createElement("button");
    b.type = "button";
    b.className = className;
    b.dataset.action = action;
    b.textContent = text;
    return b;
  }

  function renderStrip() {
    const strip = $(".strip-choice");
    const input = form() && $('input[type="radio"][required]:checked', form());
    if (strip) strip.textContent = input ? `Your choice: ${input.value}` : "No choice yet";
  }

  function clientError(message) {
    const f = form();
    if (!f) return;
    let el = $(".client-error", f);
    if (!message) { if (el) el.remove(); return; }
    if (!el) { el = document.createElement("p"); el.className = "error client-error"; el.setAttribute("role", "alert"); f.prepend(el); }
    el.textContent = message;
  }

  /* ---------- set-up of each case shown ---------- */
  function setup(ws, entry) {
    shownToken += 1;
    if (window.ReaderViewer) window.ReaderViewer.init(ws);
    startClock();
    // The case's time starts once its images are on screen (data-drawn): not while they load,
    // nor while the page waits for them offline.
    clock.wait(true);
    const f = form();
    const n = Number(ws.dataset.caseNumber);
    if (f && store) {
      const draft = store.draft(n);
      if (draft && !editable()) store.clearDraft(n);
      else if (draft && ReaderStore.same(draft.values, valuesOf(f, true))) store.clearDraft(n);
      else if (draft) apply(f, draft.values);
    }
    dock();
    renderNote();
    renderAlert();
    renderStrip();
    checkBreak();
    performance.mark("reader:shown");
    // The case on screen first; then, once the frame showing it is out (the prefetch's
    // decoding and drawing would hold that frame back), the next case in the background.
    ReaderCases.markDrawn(ws, entry).then(() => {
      if (ws.isConnected && ws === workspace() && !isLeaving()) clock.wait(false);
      seenAfterDwell(ws);
    }).then(ReaderCases.afterNextFrame).then(() => { if (ws.isConnected) cases.prefetch(ws); });
  }

  /* ---------- showing cases ---------- */
  /** Puts a fetched case on screen. `push` adds a history entry, `replace` rewrites it. */
  function show(entry, { push = false, replace = false } = {}) {
    // The prepared nodes the first time this case is shown, fresh ones after that (and when
    // its images could not be loaded ahead: fresh nodes load them again).
    const fragment = cases.nodesToShow(entry);
    const next = $("#workspace", fragment);
    const progress = $("#progress", fragment);
    if (progress) progress.remove();
    const old = workspace();
    if (!next || !old) { window.location.assign(entry.url); return; }
    if (document.activeElement && old.contains(document.activeElement)) document.activeElement.blur();
    old.replaceWith(next);
    // The reader went to another case while the next one could not be opened: no more wait.
    if (advance && advance.waiting && !advance.attempt) advance.cancel();
    // A prefetched case's count may predate the latest receipt: the receipt is newer then.
    if (progress && (entry.at || 0) > progressAt) {
      setProgress(Number(progress.dataset.answered), Number(progress.dataset.total));
      const pace = $(".progress-pace-text", progress);
      if (pace) setPace(pace.textContent);
    }
    if (push) history.pushState({ reader: true }, "", entry.url);
    else if (replace) history.replaceState({ reader: true }, "", entry.url);
    document.title = document.title.replace(/^Case \d+/, `Case ${next.dataset.caseNumber}`);
    // A case fetched before this page's own save of it was acknowledged shows the older
    // answer: the acknowledged one is what the server holds (and what a change changes).
    const own = receipts.newerThan(Number(next.dataset.caseNumber), entry.at);
    const nextForm = $("#answer-form", next);
    if (own && nextForm) {
      markSaved(next, nextForm, own);
      apply(nextForm, own);
    }
    cases.shown(entry);
    setup(next, entry);
  }

  function unreachableWhy() { return ReaderNotices.unreachableWhy(navigator.onLine); }

  /** Shows the case at `url`: from the prefetch when it has it, else from the server.
   * Resolves to SHOWN, MOVED (the reader went elsewhere meanwhile, or the page is loading it
   * as a new page) or UNREACHABLE (offline, a server error, or a sign-in is needed first);
   * `quiet`: the caller says why itself. */
  function go(url, opts = {}) {
    const ready = cases.ready(url);
    if (ready) { show(ready, opts); return Promise.resolve(SHOWN); }
    const token = shownToken;
    return cases.fetch(url).then((entry) => {
      if (token !== shownToken) return MOVED; // the reader went elsewhere meanwhile
      if (!entry) {
        if (outbox.needSignIn) return UNREACHABLE; // opened once the reader signs in again
        window.location.assign(url);
        return MOVED;
      }
      show(entry, opts);
      return SHOWN;
    }).catch(() => {
      if (!opts.quiet) status(`Could not open that case: ${unreachableWhy()}. You are still on case ${shownNumber()}.`);
      return UNREACHABLE;
    });
  }

  function setProgress(answered, total) {
    const el = document.getElementById("progress");
    const words = ReaderNotices.progress(answered, total);
    if (!el || !words) return;
    el.dataset.answered = answered;
    el.dataset.total = total;
    const bar = $("progress", el);
    if (bar) { bar.value = answered; bar.max = total; bar.setAttribute("aria-label", words.label); }
    const a = $(".progress-answered", el), left = $(".progress-left", el);
    if (a) a.textContent = words.answered;
    if (left) left.textContent = words.left;
  }
  /** The time left at the reader's pace, in the server's words (annotation.pacing). */
  function setPace(text) {
    const el = $("#progress .progress-pace");
    if (!el || typeof text !== "string") return;
    $(".progress-pace-text", el).textContent = text;
    el.hidden = !text;
    const onPause = $("#paused .paused-pace");
    if (onPause) onPause.textContent = ReaderNotices.paceSentence(text);
  }

  /* ---------- submitting ---------- */
  function submit() {
    const f = form(), ws = workspace();
    if (!f || !ws || !editable() || !outbox || isLeaving()) return;
    if (!seen(ws)) { notePaused(NOT_SEEN); return; } // never submit a case not shown in this visit
    const missing = $$('input[type="radio"][required]', f).some((r) => !$(`input[name="${CSS.escape(r.name)}"]:checked`, f));
    if (missing) { clientError(f.dataset.choiceRequired); return; }
    // A group the study requires (data-required: its message, the server's): a confidence.
    const unrated = $$("fieldset[data-required]", f).find((group) => !$$("input[name]", group).some((i) => (i.type === "radio" ? i.checked : i.value.trim() !== "")));
    if (unrated) { clientError(unrated.dataset.required); return; }
    if (!f.checkValidity()) {
      const bad = $(":invalid", f), group = bad && bad.closest("[data-required]"); // the server's words for its group
      clientError(group ? group.dataset.required : bad ? bad.validationMessage : "");
      return;
    }
    const number = Number(ws.dataset.caseNumber);
    const values = valuesOf(f);
    // What this answer changes: the page's saved answer, or this reader's own save of the case
    // still waiting in the outbox. The server refuses the change if the case was answered
    // elsewhere since (another tab): never written over without a word.
    const pending = outbox.pending(number);
    const entry = {
      id: `${Date.now()}-${Math.random().toString(36).slice(2)}`,
      number,
      url: f.action,
      caseUrl: ws.dataset.caseUrl,
      values,
      base: pending ? pending.values : valuesOf(f, true),
      time_ms: elapsed(),
      label: chosenLabel(f),
      practice: !!ws.dataset.practice,
    };
    refused.delete(number);
    status(`Saving case ${number}…`);
    // Until the next case is on screen (it may still be on its way from the server, or the
    // connection may be down), this case's answer is submitted: no key or click may change
    // it or send it again, and the clock counts no case.
    leave(ws, true);
    outbox.add(entry); // kept in this browser (and as the case's draft) until the receipt
    // A practice set waits for the server: the feedback comes with the saved answer.
    const nextUrl = entry.practice ? "" : ws.dataset.nextUrl;
    if (!nextUrl) { awaitingEnd = entry.id; renderNote(); return; }
    go(nextUrl, { push: true, quiet: true }).then((result) => {
      if (result === SHOWN) { nextShown(entry.id); return; }
      if (result === UNREACHABLE && ws === workspace()) {
        // Offline (or signed out): the case stays submitted, and the next one opens by
        // itself once it can; Enter does nothing here meanwhile.
        advance.stall(entry.id, nextUrl, Number(ws.dataset.nextNumber) || null);
        return;
      }
      leave(ws, false);
    });
  }

  /** The case after entry `entryId` is on screen: check it against the receipt. */
  function nextShown(entryId) {
    const receipt = receipts.shown(entryId, shownToken);
    if (receipt) reconcile(receipt); // the receipt came before the case: check it now
  }

  /** Holds (or releases) a submitted case's form while the next case is on its way. */
  function leave(ws, on) {
    if (on) clock.wait(true);
    else if (leaving === ws && ws === workspace() && ws.dataset.drawn) clock.wait(false);
    leaving = on ? ws : leaving === ws ? null : leaving;
    $$("#answer-form fieldset, #answer-form textarea, #answer-form button", ws).forEach((el) => {
      if (on) { if (!el.disabled) { el.disabled = true; el.dataset.leaving = "1"; } }
      else if (el.dataset.leaving) { el.disabled = false; delete el.dataset.leaving; }
    });
  }
  function isLeaving() { return !!(leaving && leaving.isConnected && leaving === workspace()); }

  /* ---------- what the outbox reports ---------- */
  /** A round of sending stopped: the notices say where the answers are. */
  function afterSending() {
    renderAlert();
    renderNote();
    if (store) ReaderList.mark(store, outbox.entries());
    // The "All cases" page counts what the server holds: show it once all is sent.
    if (!outbox.size && sentSomething && $("[data-case-list]")) window.location.reload();
  }

  function saved({ entry, data }) {
    sentSomething = true;
    receipts.acknowledge(entry.number, entry.values, performance.now());
    status(`Saved — case ${entry.number}`);
    if (data.progress) { setProgress(data.progress.answered, data.progress.total); progressAt = performance.now(); }
    if (data.pace) setPace(data.pace.text);
    const f = form();
    // The reader is on the case just saved (came back to it): it now is the saved answer.
    if (f && shownNumber() === entry.number) markSaved(workspace(), f, entry.values);
    if (awaitingEnd === entry.id) {
      awaitingEnd = null;
      const then = ReaderReceipts.afterWaitedSave(entry, data);
      if (then.again) {
        // The case again, as the server renders it now: with its feedback.
        cases.reset();
        go(then.again, { replace: true, quiet: true }).then((result) => {
          if (result === UNREACHABLE) window.location.assign(then.again);
        });
      } else if (then.next) {
        go(then.next, { push: true, quiet: true }).then((result) => {
          if (result === UNREACHABLE && workspace()) advance.stall(entry.id, then.next, then.number);
          else if (result !== SHOWN) leave(workspace(), false);
        });
      } else window.location.assign(then.review);
    }
    advance.saved(entry.id, data);
    if (receipts.saved(entry.id, data, shownToken)) reconcile(data);
  }

  /** The server's receipt against the case shown ahead of it: show the server's if they differ. */
  function reconcile(data) {
    const ws = workspace();
    const then = ReaderReceipts.reconcile(data, { number: shownNumber(), nextUrl: ws && ws.dataset.nextUrl });
    if (!then) return;
    if ("review" in then) window.location.assign(then.review);
    else if ("go" in then) go(then.go, { replace: true });
    else if (then.following) {
      // The server agrees with the case shown; the case after it changed meanwhile.
      ws.dataset.nextUrl = then.following.url;
      ws.dataset.nextNumber = String(then.following.number);
      cases.prefetch(ws);
    } else {
      delete ws.dataset.nextUrl;
      delete ws.dataset.nextNumber;
    }
  }

  function refusedSave({ entry, message, saved: held }) {
    // A second read's first answer sent from a page that never showed the AI, after another
    // tab gave it: that stage is over here too. The case is shown again as the server has it
    // (the first answer kept, the AI shown), the message on it, the choice kept as a draft.
    const staleStage = ReaderReceipts.staleStage(entry, held);
    refused.set(entry.number, { message, label: entry.label, url: entry.caseUrl, conflict: !!held && !staleStage });
    if (held) {
      // Answered elsewhere: what this page shows as saved is out of date. The case shows the
      // server's answer beside the draft; a prefetched copy of it is just as old.
      const f = form();
      const here = shownNumber() === entry.number;
      if (f && here && !staleStage) markSaved(workspace(), f, held);
      cases.reset();
      if (here && staleStage && entry.caseUrl) go(entry.caseUrl, { replace: true });
      else if (workspace()) cases.prefetch(workspace());
    }
    receipts.dropped(entry.id);
    if (awaitingEnd === entry.id) { awaitingEnd = null; leave(workspace(), false); }
    if (advance.waiting && advance.waiting.entryId === entry.id) {
      // Refused: the case it was submitted on is where the reader is, with the reason.
      advance.cancel();
      if (shownNumber() === entry.number) leave(workspace(), false);
    }
    status("");
  }

  /* ---------- what the reader is told ---------- */
  function status(text) {
    const el = statusBox();
    if (!el) return;
    el.textContent = text;
    el.hidden = !text;
  }

  /* The save alert and the key notes dock in the question panel (above the question; in the
   * folded strip when the panel is hidden), never over the image or the viewer's toolbar.
   * They are held by reference: a case swap takes the old panel away with them in it. */
  let alertEl = null, pausedEl = null, statusEl = null;
  function alertBox() { if (!alertEl) alertEl = document.getElementById("save-alert"); return alertEl; }
  function statusBox() { if (!statusEl) statusEl = document.getElementById("save-status"); return statusEl; }
  function pausedNote() { if (!pausedEl) pausedEl = document.getElementById("keys-paused"); return pausedEl; }
  function dockSpot() {
    const ws = workspace();
    const spot = ws && $(panelHidden() ? ".panel-strip" : ".panel-body", ws);
    // Full screen of the images alone leaves the panel out of sight: the note goes with them.
    if (spot && document.fullscreenElement && !document.fullscreenElement.contains(spot)) return null;
    return spot;
  }
  function dock() {
    const spot = dockSpot();
    if (!spot) return;
    const reminder = reminderBox();
    for (const el of [reminder, pausedNote(), alertBox()]) if (el && el.parentNode !== spot) spot.prepend(el);
    // "Saved — case 3" sits on the case counter's line (in the folded strip: at its end), where
    // it moves nothing when it comes and goes; never over the image.
    const line = statusBox();
    const counter = !panelHidden() && $(".panel-head .case-counter", workspace());
    if (line && counter && counter.nextSibling !== line) counter.after(line);
    else if (line && panelHidden() && line.parentNode !== spot) spot.append(line);
  }

  function renderAlert() {
    const box = alertBox();
    if (!box) return;
    clearInterval(tick);
    const text = $(".save-alert-text", box);
    const retry = $('[data-action="retry"]', box);
    const showCase = $('[data-action="show-failed"]', box);
    // The facts as they are now; the countdowns (the outbox's next try, the next case's) and
    // the case shown are read again on every tick.
    const facts = {
      waiting: outbox ? outbox.size : 0,
      trouble: outbox && outbox.trouble,
      needSignIn: outbox && outbox.needSignIn,
      stalled: advance && advance.waiting,
      numbers: outbox ? outbox.entries().map((entry) => entry.number) : [],
      refused: ReaderNotices.refusedElsewhere(refused, shownNumber()),
    };
    const now = () => ({ ...facts, online: navigator.onLine, shown: shownNumber(), retryAt: outbox ? outbox.retryAt : 0, now: Date.now() });
    const alert = ReaderNotices.saveAlert(now());
    if (!alert) { box.hidden = true; return; }
    text.textContent = alert.text;
    if (alert.ticks) tick = setInterval(() => { text.textContent = ReaderNotices.alertText(alert.kind, now()); }, 1000);
    retry.hidden = !alert.retry;
    if (alert.retry) retry.textContent = alert.retry;
    showCase.hidden = !alert.show;
    if (alert.show) {
      showCase.textContent = `Show case ${alert.show.number}`;
      showCase.dataset.url = alert.show.url;
    }
    box.hidden = false;
  }

  /* ---------- session ---------- */
  function sessionUrl() { const f = document.getElementById("signin-form"); return f ? f.dataset.sessionUrl : ""; }
  function pageCsrf() {
    try { return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || ""; } catch (_) { return ""; }
  }
  function setCsrf({ token }) {
    try { document.body.setAttribute("hx-headers", JSON.stringify({ "X-CSRFToken": token })); } catch (_) { /* fine */ }
  }

  /** The reader this page belongs to (read once: a case fetched later never changes it). */
  let pageReader = null;
  function readerId() {
    if (pageReader === null) { const el = $("[data-reader-context]"); pageReader = el ? el.dataset.reader : ""; }
    return pageReader;
  }

  function askSignIn() {
    const dialog = document.getElementById("signin");
    if (!dialog) return;
    if (dialog.hidden) {
      dialog.hidden = false;
      const pw = $('input[name="password"]', dialog);
      if (pw) pw.focus();
    }
    renderAlert();
  }

  async function signIn(f) {
    const error = $(".signin-error", f);
    const button = $('button[type="submit"]', f);
    const say = (msg) => { error.textContent = msg; error.hidden = !msg; };
    say("");
    button.disabled = true;
    const fields = new URLSearchParams(new FormData(f));
    fields.delete("csrfmiddlewaretoken");
    const result = await outbox.signIn(f.action, fields);
    button.disabled = false;
    if (result.kind === "ok") {
      document.getElementById("signin").hidden = true;
      $('input[name="password"]', f).value = "";
      const ws = workspace();
      if (ws) {
        // Images asked for while signed out were refused: load the case's images again.
        if (window.ReaderViewer) window.ReaderViewer.init(ws);
        cases.reset();
        cases.prefetch(ws);
      }
      if (advance) advance.retryNow();
    } else if (result.kind === "other-reader") {
      say(`You signed in as ${result.username}, but these answers belong to another reader. Sign in as that reader to send them.`);
    } else if (result.kind === "failed") {
      const alert = new DOMParser().parseFromString(result.html, "text/html").querySelector('[role="alert"]');
      say(alert ? alert.textContent.trim() : `Sign-in failed (error ${result.status}).`);
    } else {
      say(result.offline ? "This computer is offline. Try again when the connection is back." : "The server could not be reached. Try again in a moment.");
    }
  }

  /* ---------- panel and full screen ---------- */
  function mainArea() { return $(".reading-main"); }
  function panelHidden() { return document.body.classList.contains("panel-collapsed"); }
  function setPanel(hidden) {
    document.body.classList.toggle("panel-collapsed", hidden);
    $$('[data-action="panel"]').forEach((b) => b.setAttribute("aria-expanded", String(!hidden)));
    try { localStorage.setItem(PANEL_PREF, hidden ? "hidden" : "shown"); } catch (_) { /* fine */ }
    dock();
    renderStrip();
  }
  /** Answer keys act only while the question is on screen. */
  function questionHidden() {
    const f = form();
    if (!f) return true;
    if (document.fullscreenElement && !document.fullscreenElement.contains(f)) return true;
    return panelHidden();
  }
  let pausedTimer = null;
  function notePaused(text) {
    const note = pausedNote();
    if (!note) return;
    const spot = dockSpot();
    if (spot) { if (note.parentNode !== spot) spot.prepend(note); }
    else (document.fullscreenElement || mainArea() || document.body).appendChild(note);
    note.replaceChildren(text || (document.fullscreenElement && !panelHidden()
      ? "Answer keys are paused: full screen hides the question. Press Esc to leave full screen, or use f to show the question beside the image."
      : "Answer keys are paused while the question is hidden. Press q to show it."));
    note.hidden = false;
    clearTimeout(pausedTimer);
    pausedTimer = setTimeout(() => { note.hidden = true; }, 4000);
  }

  /* ---------- dialogs ---------- */
  function openDialog() { return $$(".overlay").find((o) => !o.hidden) || null; }
  function toggleOverlay(id, visible) {
    const el = document.getElementById(id);
    if (!el) return;
    el.hidden = visible === undefined ? !el.hidden : !visible;
    if (!el.hidden) { const b = $("button", el); if (b) b.focus(); }
  }

  /* ---------- keys ---------- */
  function shortcutsOn() { const box = document.getElementById("shortcuts-enabled"); return !box || box.checked; }
  function keyedInput(key) { return $(`#answer-form input[data-keys~="${CSS.escape(key)}"]`); }
  function choose(input) {
    if (!input || input.disabled || input.closest("fieldset:disabled")) return;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  /** The page as reader-keys.js asks about it. */
  const keyPage = {
    paused: isPaused,
    pauseKey,
    dialog: openDialog,
    inForm: (t) => !!(t.closest && t.closest("#answer-form")),
    typing: (t) => window.ReaderViewer.typing(t),
    shortcutsOn,
    reviewLink() { const link = reviewLink(); return link ? { key: link.dataset.key, href: link.href } : null; },
    comment(key) { // the comment, or the confidence box of a fine scale
      const el = $(`#answer-form :is(textarea, input[type="number"])[data-keys~="${CSS.escape(key)}"]`);
      return el ? { el, disabled: !!(el.disabled || el.closest("fieldset:disabled")) } : null;
    },
    questionHidden,
    practiceNext: () => $("[data-practice-next]", workspace()),
    seen: () => seen(),
    keyed: keyedInput,
    leaving: () => (isLeaving() ? { nextNumber: leaving.dataset.nextNumber, waiting: !!(advance && advance.waiting) } : null),
    shownNumber,
    navLink: (dir) => $(`.case-nav a[data-nav="${dir}"]`),
  };

  document.addEventListener("keydown", (e) => {
    if (!workspace()) return;
    const action = ReaderKeys.decide(e, keyPage);
    if (action.prevent) e.preventDefault();
    switch (action.act) {
      case "resume": resume(); break;
      case "close-dialog": action.dialog.hidden = true; break;
      case "submit": submit(); break;
      case "blur": action.target.blur(); break;
      case "help": toggleOverlay("help"); break;
      case "panel": setPanel(!panelHidden()); break;
      case "pause": pause(); break;
      case "follow": window.location.assign(action.url); break;
      case "focus": action.el.focus(); if (action.el.type === "number") action.el.select(); break; // typing replaces a rating
      case "note": notePaused(action.text || undefined); break;
      case "go": go(action.url, { push: true }); break;
      case "choose": choose(action.input); break;
      case "viewer": if (window.ReaderViewer) window.ReaderViewer.handleKey(e); break;
      default: break;
    }
  });

  /* The review page: the focus starts on "I have finished" (autofocus); Space ticks it and
   * Enter submits, unless answers are still being sent (the button waits for them). */
  document.addEventListener("keydown", (e) => {
    const box = e.target;
    if (e.key !== "Enter" || e.ctrlKey || e.metaKey || e.altKey || !box || !box.matches || !box.matches("[data-final-confirm]")) return;
    e.preventDefault();
    const button = $("[data-final-submit]");
    if (button && !button.disabled) button.click();
  });

  /* ---------- clicks and edits ---------- */
  document.addEventListener("click", (e) => {
    const nav = e.target.closest && e.target.closest(".case-nav a[data-nav]");
    if (nav && !e.ctrlKey && !e.metaKey && !e.shiftKey && e.button === 0) { e.preventDefault(); go(nav.href, { push: true }); return; }
    const el = e.target.closest && e.target.closest("[data-action]");
    if (!el) return;
    switch (el.dataset.action) {
      case "help": toggleOverlay("help", true); break;
      case "help-close": toggleOverlay("help", false); break;
      case "instructions": if (document.getElementById("instructions")) { e.preventDefault(); toggleOverlay("instructions", true); } break;
      case "instructions-close": toggleOverlay("instructions", false); break;
      case "panel": setPanel(!panelHidden()); break;
      case "pause": pause(); break;
      case "resume": resume(); break;
      case "break-later": {
        clock.snooze(breakMinutes());
        const reminder = reminderBox();
        if (reminder) reminder.hidden = true;
        break;
      }
      case "retry": if (outbox) outbox.retryNow(); if (advance) advance.retryNow(); break;
      case "show-failed": if (el.dataset.url) { if (workspace()) go(el.dataset.url, { push: true }); else window.location.assign(el.dataset.url); } break;
      case "save-draft": submit(); break;
      case "discard-draft": {
        const f = form();
        refused.delete(shownNumber());
        renderAlert();
        store.clearDraft(shownNumber());
        apply(f, valuesOf(f, true));
        renderNote(); renderStrip();
        break;
      }
      default: break;
    }
  });

  document.addEventListener("change", (e) => {
    if (e.target.closest && e.target.closest("#answer-form")) {
      onFormEdited();
      // A clicked radio keeps focus; move it to the form so no key can change it unseen.
      if (e.target.type === "radio" && shortcutsOn() && document.activeElement === e.target) form().focus({ preventScroll: true });
    }
  });
  document.addEventListener("input", (e) => { if (e.target.closest && e.target.closest("#answer-form")) onFormEdited(); });
  document.addEventListener("submit", (e) => {
    if (e.target.id === "answer-form") { e.preventDefault(); submit(); }
    else if (e.target.id === "signin-form") { e.preventDefault(); signIn(e.target); }
  });

  window.addEventListener("popstate", () => {
    // Back and Forward ask the server again (case pages are never cached): its state is the truth.
    if (!workspace()) return;
    const token = shownToken;
    cases.fetch(window.location.href).then((entry) => {
      if (token !== shownToken) return;
      if (entry) show(entry); else if (!outbox.needSignIn) window.location.reload();
    }).catch(() => window.location.reload());
  });
  window.addEventListener("online", () => {
    if (outbox && !outbox.needSignIn) outbox.retryNow();
    if (advance) advance.retryNow(); // reading carries on where it stopped
  });
  window.addEventListener("offline", () => { if (outbox && outbox.size) renderAlert(); });
  document.addEventListener("fullscreenchange", () => {
    const note = pausedNote();
    if (note && !document.fullscreenElement) { note.hidden = true; dock(); }
  });

  /* ---------- the window preset the reader chose (viewer.js asks for it per modality) ---------- */
  const presetsChosen = new Map(); // modality -> preset chosen on this page
  function serverPresets() {
    const ws = workspace();
    try { return JSON.parse((ws && ws.dataset.presets) || "{}") || {}; } catch (_) { return {}; }
  }
  function presetFor(modality) { return presetsChosen.get(modality) || serverPresets()[modality] || store.preset(modality); }
  function presetChosen(modality, name) {
    if (presetsChosen.get(modality) === name) return; // a second view of the same modality
    presetsChosen.set(modality, name);
    store.savePreset(modality, name);
    const ws = workspace();
    if (!ws || !ws.dataset.presetUrl) return;
    const body = new URLSearchParams({ modality, preset: name });
    fetch(ws.dataset.presetUrl, { method: "POST", body, headers: { "X-CSRFToken": outbox ? outbox.csrf : pageCsrf() }, credentials: "same-origin", keepalive: true })
      .catch(() => { /* kept in this browser; the next choice tells the server again */ });
  }

  /* ---------- start ---------- */
  function start() {
    if (window.htmx) { window.htmx.config.historyEnabled = false; window.htmx.config.historyCacheSize = 0; }
    const context = $("[data-reader-context]");
    readerId(); // fixed now, before any case is fetched
    if (context) {
      const ws = workspace();
      store = new ReaderStore.Store(context.dataset.study, context.dataset.reader, undefined, context.dataset.draftDays, context.dataset.layout, ws ? ws.dataset.studySlug : "");
      outbox = new ReaderOutbox.Outbox({ store, reader: readerId(), csrf: pageCsrf(), sessionUrl: sessionUrl() })
        .on("saved", saved)
        .on("refused", refusedSave)
        .on("signin", askSignIn)
        .on("csrf", setCsrf)
        .on("settled", afterSending);
      // The reader's window preset sticks across cases, sessions and arms (per modality):
      // chosen on this page, else as the server has it, else as this browser kept it.
      if (window.ReaderViewer) window.ReaderViewer.remember({ get: presetFor, set: presetChosen });
    }
    advance = new ReaderAdvance.Advance({ open: (url) => go(url, { push: true, quiet: true }) })
      .on("change", renderAlert)
      .on("shown", ({ entryId }) => nextShown(entryId))
      .on("finish", ({ url }) => window.location.assign(url));
    if (window.ReaderCases) cases = new ReaderCases.Cases({ readerId, signedOut: () => { if (outbox) outbox.requireSignIn(); }, layout: () => (store ? store.layout : "") });
    const box = document.getElementById("shortcuts-enabled");
    if (box) {
      try { box.checked = localStorage.getItem(KEYS_PREF) !== "off"; } catch (_) { /* default on */ }
      box.addEventListener("change", () => { try { localStorage.setItem(KEYS_PREF, box.checked ? "on" : "off"); } catch (_) { /* fine */ } });
    }
    let panelPref = "shown";
    try { panelPref = localStorage.getItem(PANEL_PREF) || "shown"; } catch (_) { /* shown */ }
    if (workspace()) {
      setPanel(panelPref === "hidden");
      history.replaceState({ reader: true }, "", window.location.href);
      setup(workspace());
    }
    if (store) ReaderList.mark(store, outbox.entries());
    if (outbox) outbox.pump();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
