/* The reading page: shortcuts, drafts, saves that cannot fail silently, zero-wait advance.
 *
 * - Keys: the answer keys come from the server (each radio's data-keys); arrow keys never
 *   change an option (they move between cases, and the choice stays as a draft).
 * - Drafts: every change is kept in this browser (reader-store.js) until the server has the
 *   same values; a draft comes back whenever its case is shown again.
 * - Saves: Enter queues the answer in a persistent outbox and shows the next case at once
 *   (prefetched with its images while the reader looked at this one). The outbox is sent in
 *   order; a failure shows an alert in plain words, the answer stays, and it is sent again
 *   with backoff (or at once with Retry, or when the connection returns). An ended session
 *   asks to sign in on the page, then sends what waited.
 * - The server stays the source of truth: which case comes next is its answer to each save
 *   (the prefetched case is only its earlier guess), and Back fetches the case again.
 * The same file runs on the "All cases" page, where it marks drafts and sends the outbox.
 */
(function () {
  "use strict";

  const KEYS_PREF = "readerstudy.shortcuts";
  const PANEL_PREF = "readerstudy.panel";
  const PREFETCH_MAX_AGE_MS = 120000;
  const RETRY_MAX_MS = 30000;
  const VIEWER_KEYS = { i: "invert", 0: "reset", " ": "reset", "+": "zoom-in", "=": "zoom-in", "-": "zoom-out", l: "link" };

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  let store = null;
  let csrf = "";
  let prefetched = null; // { url, html, fragment, decoded, at, shown }
  let prefetching = null; // { url, promise }
  let shownToken = 0; // bumps on every case shown: tells whether the reader moved since
  let optimistic = null; // { entryId, token }: the case shown ahead of this save's receipt
  let awaitingEnd = null; // entry id of the last open case's save: go on once it is acknowledged
  let leaving = null; // the workspace submitted with Enter while the next case is on its way
  let pumping = false;
  let needSignIn = false;
  let retryDelay = 0;
  let retryAt = 0;
  let retryTimer = null;
  let tick = null;
  let trouble = null; // { entry, message }: why the head of the outbox is waiting
  const refused = new Map(); // number -> { message, label }: saves the server refused
  const acked = new Map(); // number -> { values, at }: this page's saves the server acknowledged
  let sentSomething = false;
  const receipts = new Map(); // entry id -> the server's receipt, for a case shown after it came
  let progressAt = 0; // when the progress shown last came from the server's receipt

  /* ---------- visible time on the case ---------- */
  let visibleMs = 0;
  let since = null;
  function startClock() {
    visibleMs = 0;
    since = document.visibilityState === "visible" ? performance.now() : null;
  }
  function elapsed() { return Math.round(visibleMs + (since !== null ? performance.now() - since : 0)); }
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") since = performance.now();
    else if (since !== null) { visibleMs += performance.now() - since; since = null; }
  });

  /* ---------- the case on screen ---------- */
  function workspace() { return document.getElementById("workspace"); }
  function form() { return document.getElementById("answer-form"); }
  function shownNumber() { const ws = workspace(); return ws ? Number(ws.dataset.caseNumber) : null; }
  function editable() { const ws = workspace(); return !!(ws && ws.dataset.editable && $('button[type="submit"]', form())); }

  /** The form's answer fields as {name: value}: every radio group and text field. */
  function valuesOf(f, initial) {
    const values = {};
    for (const el of f.elements) {
      if (!el.name || el.type === "hidden" || el.type === "submit" || el.type === "button") continue;
      if (el.type === "radio") {
        if (!(el.name in values)) values[el.name] = "";
        if (initial ? el.defaultChecked : el.checked) values[el.name] = el.value;
      } else if (el.tagName === "TEXTAREA" || el.type === "text") {
        values[el.name] = initial ? el.defaultValue : el.value;
      }
    }
    return values;
  }
  function apply(f, values) {
    for (const el of f.elements) {
      if (!el.name || !(el.name in values)) continue;
      if (el.type === "radio") el.checked = values[el.name] === el.value;
      else if (el.tagName === "TEXTAREA" || el.type === "text") el.value = values[el.name];
    }
  }
  function setDefaults(f, values) {
    for (const el of f.elements) {
      if (!el.name || !(el.name in values)) continue;
      if (el.type === "radio") el.defaultChecked = values[el.name] === el.value;
      else if (el.tagName === "TEXTAREA" || el.type === "text") el.defaultValue = values[el.name];
    }
  }
  /** The chosen option as the reader sees it ("B. Pneumothorax"), for messages. */
  function chosenLabel(f) {
    const input = $('input[type="radio"][required]:checked', f);
    const text = input && input.closest("label") && $("span", input.closest("label"));
    return text ? text.textContent.trim() : input ? input.value : "";
  }

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
    const pending = store.pending(n);
    const draft = store.draft(n);
    const isDraft = draft && !ReaderStore.same(draft.values, valuesOf(f, true));
    note.replaceChildren();
    note.className = "draft-note";
    if (pending && ReaderStore.same(pending.values, valuesOf(f))) {
      note.textContent = trouble && trouble.entry.number === n ? "Not saved yet: it will be sent again (see the red notice)." : "Sending this answer…";
      note.classList.add("pending");
    } else if (refused.has(n)) {
      note.textContent = `Not saved: ${refused.get(n).message}`;
      note.classList.add("refused");
    } else if (isDraft) {
      note.append("Draft, not submitted yet: kept in this browser. Press Enter to submit. ");
      const discard = document.createElement("button");
      discard.type = "button";
      discard.className = "link";
      discard.dataset.action = "discard-draft";
      discard.textContent = "Discard draft";
      note.append(discard);
    }
    note.hidden = !note.textContent;
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
    const f = form();
    const n = Number(ws.dataset.caseNumber);
    if (f && store) {
      const draft = store.draft(n);
      if (draft && !editable()) store.clearDraft(n);
      else if (draft && ReaderStore.same(draft.values, valuesOf(f, true))) store.clearDraft(n);
      else if (draft) apply(f, draft.values);
    }
    renderNote();
    renderStrip();
    performance.mark("reader:shown");
    // The case on screen first; then, once the frame showing it is out (the prefetch's
    // decoding and drawing would hold that frame back), the next case in the background.
    markDrawn(ws, entry).then(afterNextFrame).then(() => { if (ws.isConnected) prefetchNext(ws); });
  }

  function afterNextFrame() {
    return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  }

  /** Sets data-drawn on the workspace when the frame showing its images begins: the signal
   * tests and the benchmark wait for. Where the viewer says whether its images are loaded
   * (and so drawn: it draws on load), that is watched for at once, on every change to the
   * case's DOM and every frame; otherwise the images' decode stands in for it. */
  function markDrawn(ws, entry) {
    const viewerViews = () => {
      const viewer = window.ReaderViewer && window.ReaderViewer.current;
      return viewer && Array.isArray(viewer.views) ? viewer.views : null;
    };
    const ready = viewerViews() ? Promise.resolve() : (entry && entry.decoded) || Promise.all(
      $$(".view[data-src]", ws).map((fig) => { const img = new Image(); img.src = fig.dataset.depthSrc || fig.dataset.src; return img.decode().catch(() => null); }));
    return ready.then(() => whenViewerDrawn(ws, viewerViews, 600)).then(() => new Promise((resolve) => {
      requestAnimationFrame(() => {
        if (ws.isConnected) {
          performance.mark("reader:drawn");
          ws.dataset.drawn = String(performance.now());
          ws.dispatchEvent(new CustomEvent("reader:drawn", { bubbles: true }));
        }
        resolve();
      });
    }));
  }
  function whenViewerDrawn(ws, viewerViews, maxFrames) {
    return new Promise((resolve) => {
      let frames = 0;
      let done = false;
      const drawn = () => { const views = viewerViews(); return !views || views.every((v) => v.loaded !== false); };
      const observer = new MutationObserver(() => { if (drawn()) finish(); });
      function finish() {
        if (done) return;
        done = true;
        observer.disconnect();
        performance.mark("reader:viewer-loaded");
        resolve();
      }
      observer.observe(ws, { subtree: true, childList: true, characterData: true });
      const tick = () => { if (done) return; if (drawn() || ++frames > maxFrames) finish(); else requestAnimationFrame(tick); };
      tick();
    });
  }

  /* ---------- prefetch and showing cases ---------- */
  function prefetchNext(ws) {
    const url = ws.dataset.nextUrl;
    if (!url || !ws.dataset.editable) return;
    if (prefetched && prefetched.url === url && performance.now() - prefetched.at < PREFETCH_MAX_AGE_MS) return;
    fetchCase(url).then((entry) => {
      if (!entry) return;
      if (prefetched && prefetched !== entry) forget(prefetched);
      prefetched = entry;
      // Tests and the benchmark wait for this: the next case is ready to show at once.
      entry.decoded.then(() => { if (ws.isConnected && ws.dataset.nextUrl === url) ws.dataset.nextReady = "1"; });
    }).catch(() => {});
  }

  /** The case fragment at `url` and its images, decoded; null when the server said no. */
  function fetchCase(url) {
    if (prefetching && prefetching.url === url) return prefetching.promise;
    const asked = performance.now(); // the page shows the server's state as of about then
    const promise = fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin", cache: "no-store" })
      .then((r) => {
        if (r.status === 401) { askSignIn(); return null; }
        if (!r.ok || !(r.headers.get("Content-Type") || "").includes("text/html")) return null;
        return r.text();
      })
      .then((html) => {
        if (!html || !html.includes('id="workspace"')) return null;
        const fragment = parse(html);
        const next = $("#workspace", fragment);
        // Someone else signed in in this browser meanwhile (another tab): that reader's case
        // and answers are not shown on this reader's page, which asks to sign in again.
        if (next && String(next.dataset.reader) !== String(readerId())) { askSignIn(); return null; }
        // The viewer loads, decodes, uploads and draws the case's images now, off screen, at
        // the size they will have: Enter then only puts the drawn canvases on screen.
        if (window.ReaderViewer && window.ReaderViewer.prepare && next && $(".viewer", next)) {
          const decoded = window.ReaderViewer.prepare(next).catch(() => null);
          return { url, html, fragment, decoded, at: asked };
        }
        // No viewer: decode the images (the full-depth file where the case has it), and draw
        // them once on a 1-pixel canvas, so they are not decoded after Enter.
        const images = $$(".view[data-src]", fragment).map((fig) => {
          const img = new Image();
          img.src = fig.dataset.depthSrc || fig.dataset.src;
          return img;
        });
        const decoded = Promise.all(images.map((img) => img.decode().catch(() => null))).then(() => {
          const ctx = warmCanvas();
          images.forEach((img) => { try { ctx.drawImage(img, 0, 0, 1, 1); } catch (_) { /* not drawable */ } });
        });
        return { url, html, fragment, images, decoded, at: asked };
      })
      .finally(() => { if (prefetching && prefetching.url === url) prefetching = null; });
    prefetching = { url, promise };
    return promise;
  }

  let warm = null;
  function warmCanvas() {
    if (!warm) { const c = document.createElement("canvas"); c.width = c.height = 1; warm = c.getContext("2d"); }
    return warm;
  }

  /** A case page's HTML as nodes of this document (so its canvases can draw before it is shown). */
  function parse(html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    return document.importNode(tpl.content, true);
  }

  function preparedWell(fragment) {
    const viewer = window.ReaderViewer;
    const ws = $("#workspace", fragment);
    return !(viewer && viewer.preparedWell && ws && $(".viewer", ws)) || viewer.preparedWell(ws);
  }

  /** Releases what was prepared for a fetched case that was not shown. */
  function forget(entry) {
    if (!entry.shown && entry.fragment && window.ReaderViewer && window.ReaderViewer.discard) {
      window.ReaderViewer.discard($("#workspace", entry.fragment));
    }
  }

  /** Puts a fetched case on screen. `push` adds a history entry, `replace` rewrites it. */
  function show(entry, { push = false, replace = false } = {}) {
    // The prepared nodes the first time this case is shown, fresh ones after that (and when
    // its images could not be loaded ahead: fresh nodes load them again).
    let fragment = entry.fragment && !entry.shown ? entry.fragment : null;
    if (fragment && !preparedWell(fragment)) { forget(entry); fragment = null; }
    fragment = fragment || parse(entry.html);
    entry.shown = true;
    const next = $("#workspace", fragment);
    const progress = $("#progress", fragment);
    if (progress) progress.remove();
    const old = workspace();
    if (!next || !old) { window.location.assign(entry.url); return; }
    if (document.activeElement && old.contains(document.activeElement)) document.activeElement.blur();
    old.replaceWith(next);
    // A prefetched case's count may predate the latest receipt: the receipt is newer then.
    if (progress && (entry.at || 0) > progressAt) setProgress(Number(progress.dataset.answered), Number(progress.dataset.total));
    if (push) history.pushState({ reader: true }, "", entry.url);
    else if (replace) history.replaceState({ reader: true }, "", entry.url);
    document.title = document.title.replace(/^Case \d+/, `Case ${next.dataset.caseNumber}`);
    // A case fetched before this page's own save of it was acknowledged shows the older
    // answer: the acknowledged one is what the server holds (and what a change changes).
    const own = acked.get(Number(next.dataset.caseNumber));
    const nextForm = $("#answer-form", next);
    if (own && nextForm && own.at > (entry.at || 0)) {
      markSaved(next, nextForm, own.values);
      apply(nextForm, own.values);
    }
    if (prefetched && prefetched.url === entry.url) {
      if (prefetched !== entry) forget(prefetched);
      prefetched = null;
    }
    setup(next, entry);
  }

  /** Shows the case at `url`: from the prefetch when it has it, else from the server. */
  function go(url, opts) {
    const fresh = prefetched && prefetched.url === url && performance.now() - prefetched.at < PREFETCH_MAX_AGE_MS;
    if (fresh) { show(prefetched, opts); return Promise.resolve(true); }
    const token = shownToken;
    return fetchCase(url).then((entry) => {
      if (token !== shownToken) return false; // the reader went elsewhere meanwhile
      if (!entry) { if (!needSignIn) window.location.assign(url); return false; }
      show(entry, opts);
      return true;
    }).catch(() => {
      status(`Could not open that case: ${navigator.onLine ? "the server could not be reached" : "this computer is offline"}. You are still on case ${shownNumber()}.`);
      return false;
    });
  }

  function setProgress(answered, total) {
    const el = document.getElementById("progress");
    if (!el || Number.isNaN(answered) || Number.isNaN(total)) return;
    el.dataset.answered = answered;
    el.dataset.total = total;
    const bar = $("progress", el);
    if (bar) { bar.value = answered; bar.max = total; bar.setAttribute("aria-label", `${answered} of ${total} answered`); }
    const a = $(".progress-answered", el), left = $(".progress-left", el);
    if (a) a.textContent = `${answered} / ${total} answered`;
    if (left) left.textContent = `${Math.max(total - answered, 0)} left`;
  }

  /* ---------- submitting ---------- */
  function submit() {
    const f = form(), ws = workspace();
    if (!f || !ws || !editable() || !store || isLeaving()) return;
    const missing = $$('input[type="radio"][required]', f).some((r) => !$(`input[name="${CSS.escape(r.name)}"]:checked`, f));
    if (missing) { clientError(f.dataset.choiceRequired); return; }
    if (!f.checkValidity()) { const bad = $(":invalid", f); clientError(bad ? bad.validationMessage : ""); return; }
    const number = Number(ws.dataset.caseNumber);
    const values = valuesOf(f);
    // What this answer changes: the page's saved answer, or this reader's own save of the case
    // still waiting in the outbox. The server refuses the change if the case was answered
    // elsewhere since (another tab): never written over without a word.
    const pending = store.outbox().filter((e) => e.number === number).pop();
    const entry = {
      id: `${Date.now()}-${Math.random().toString(36).slice(2)}`,
      number,
      url: f.action,
      caseUrl: ws.dataset.caseUrl,
      values,
      base: pending ? pending.values : valuesOf(f, true),
      time_ms: elapsed(),
      label: chosenLabel(f),
    };
    store.saveDraft(number, values); // the draft is the safety net until the receipt
    store.enqueue(entry);
    refused.delete(number);
    status(`Saving case ${number}…`);
    pump();
    const nextUrl = ws.dataset.nextUrl;
    if (!nextUrl) { awaitingEnd = entry.id; renderNote(); return; }
    // Until the next case is on screen (it may still be on its way from the server), this
    // case's answer is submitted: no key or click may change it or send it again.
    leave(ws, true);
    go(nextUrl, { push: true }).then((shown) => {
      if (!shown) { leave(ws, false); return; }
      const receipt = receipts.get(entry.id);
      if (receipt) reconcile(receipt); // the receipt came before the case: check it now
      else optimistic = { entryId: entry.id, token: shownToken };
    });
  }

  /** Holds (or releases) a submitted case's form while the next case is on its way. */
  function leave(ws, on) {
    leaving = on ? ws : leaving === ws ? null : leaving;
    $$("#answer-form fieldset, #answer-form textarea, #answer-form button", ws).forEach((el) => {
      if (on) { if (!el.disabled) { el.disabled = true; el.dataset.leaving = "1"; } }
      else if (el.dataset.leaving) { el.disabled = false; delete el.dataset.leaving; }
    });
  }
  function isLeaving() { return !!(leaving && leaving.isConnected && leaving === workspace()); }

  /* ---------- the outbox ---------- */
  function send(entry) {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(entry.values)) body.append(name, value);
    body.append("time_ms", String(entry.time_ms || 0));
    if (entry.base) body.append("base", JSON.stringify(entry.base));
    const size = body.toString().length;
    return fetch(entry.url, {
      method: "POST",
      body,
      headers: { Accept: "application/json", "X-CSRFToken": csrf },
      credentials: "same-origin",
      cache: "no-store",
      keepalive: size < 60000, // finishes even if the page is closed meanwhile
    }).then(async (r) => {
      const json = (r.headers.get("Content-Type") || "").includes("application/json") ? await r.json().catch(() => null) : null;
      if (r.status === 401 || r.headers.get("X-Login-Required")) return { kind: "signin" };
      if (r.status === 403 && r.headers.get("X-CSRF-Failed")) return { kind: "csrf" };
      if (r.ok && json && json.saved) return { kind: "saved", data: json };
      if (r.ok) return { kind: "signin" }; // a page, not a receipt: the sign-in page after a redirect
      if ([400, 403, 404, 409, 422].includes(r.status)) {
        return { kind: "refused", message: (json && json.error) || refusal(r.status) };
      }
      return { kind: "retry", message: `the server had a problem (error ${r.status})` };
    }, () => ({
      kind: "retry",
      message: navigator.onLine ? "the server could not be reached" : "this computer is offline",
    }));
  }
  function refusal(status) {
    if (status === 404) return "this case is no longer in your study.";
    if (status === 403) return "you no longer have access to this study.";
    return "the server did not accept this answer.";
  }

  async function pump() {
    if (pumping || needSignIn || !store) return;
    pumping = true;
    clearTimeout(retryTimer);
    let csrfTries = 0;
    try {
      for (;;) {
        const entry = store.outbox()[0];
        if (!entry) { trouble = null; retryDelay = 0; break; }
        const result = await send(entry);
        if (result.kind === "saved") {
          store.dequeue(entry.id);
          trouble = null; retryDelay = 0; csrfTries = 0;
          saved(entry, result.data);
        } else if (result.kind === "refused") {
          store.dequeue(entry.id);
          refusedSave(entry, result.message);
        } else if (result.kind === "csrf" && csrfTries++ < 1) {
          const session = await refreshSession();
          if (session === "signin") { trouble = { entry, message: "your session has ended: sign in to send it" }; break; }
          if (session === "error") { trouble = { entry, message: "the server could not be reached" }; scheduleRetry(); break; }
        } else if (result.kind === "signin" || result.kind === "csrf") {
          trouble = { entry, message: "your session has ended: sign in to send it" };
          askSignIn();
          break;
        } else {
          trouble = { entry, message: result.message };
          scheduleRetry();
          break;
        }
      }
    } finally {
      pumping = false;
      renderAlert();
      renderNote();
      markList();
      if (!store.outbox().length && sentSomething && $("[data-case-list]")) window.location.reload();
    }
  }

  function scheduleRetry() {
    retryDelay = Math.min(RETRY_MAX_MS, retryDelay ? retryDelay * 2 : 1000);
    retryAt = Date.now() + retryDelay;
    clearTimeout(retryTimer);
    retryTimer = setTimeout(pump, retryDelay);
  }

  /** The case's form now shows `values` as the server's saved answer. */
  function markSaved(ws, f, values) {
    setDefaults(f, values);
    ws.dataset.answered = "1";
    const button = $('button[type="submit"]', f);
    if (button && button.firstChild) button.firstChild.textContent = "Save change ";
  }

  function saved(entry, data) {
    sentSomething = true;
    acked.set(entry.number, { values: entry.values, at: performance.now() });
    store.clearDraft(entry.number, entry.values);
    refused.delete(entry.number);
    status(`Saved — case ${entry.number}`);
    if (data.progress) { setProgress(data.progress.answered, data.progress.total); progressAt = performance.now(); }
    const f = form();
    // The reader is on the case just saved (came back to it): it now is the saved answer.
    if (f && shownNumber() === entry.number) markSaved(workspace(), f, entry.values);
    if (awaitingEnd === entry.id) {
      awaitingEnd = null;
      if (data.next_url) go(data.next_url, { push: true });
      else window.location.assign(data.review_url);
    }
    receipts.set(entry.id, data);
    if (receipts.size > 20) receipts.delete(receipts.keys().next().value);
    if (optimistic && optimistic.entryId === entry.id) {
      const moved = optimistic.token !== shownToken;
      optimistic = null;
      if (!moved) reconcile(data);
    }
  }

  /** The server's receipt against the case shown ahead of it: show the server's if they differ. */
  function reconcile(data) {
    if (data.next === null) { window.location.assign(data.review_url); return; }
    if (data.next !== shownNumber()) { go(data.next_url, { replace: true }); return; }
    // The server agrees with the case shown; the case after it may have changed meanwhile.
    const ws = workspace();
    if (data.following_url && ws.dataset.nextUrl !== data.following_url) {
      ws.dataset.nextUrl = data.following_url;
      ws.dataset.nextNumber = String(data.following);
      prefetchNext(ws);
    } else if (!data.following_url && ws.dataset.nextUrl) {
      delete ws.dataset.nextUrl;
      delete ws.dataset.nextNumber;
    }
  }

  function refusedSave(entry, message) {
    refused.set(entry.number, { message, label: entry.label, url: entry.caseUrl });
    if (store.draft(entry.number) === null) store.saveDraft(entry.number, entry.values);
    if (optimistic && optimistic.entryId === entry.id) optimistic = null;
    if (awaitingEnd === entry.id) awaitingEnd = null;
    status("");
  }

  /* ---------- what the reader is told ---------- */
  function status(text) {
    const el = document.getElementById("save-status");
    if (!el) return;
    el.textContent = text;
    el.hidden = !text;
  }

  function renderAlert() {
    const box = document.getElementById("save-alert");
    if (!box) return;
    clearInterval(tick);
    const text = $(".save-alert-text", box);
    const retry = $('[data-action="retry"]', box);
    const showCase = $('[data-action="show-failed"]', box);
    const waiting = store ? store.outbox().length : 0;
    if (trouble) {
      const e = trouble.entry;
      const answer = e.label ? ` (your answer: ${e.label})` : "";
      const update = () => {
        const wait = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
        const when = needSignIn ? "after you sign in" : wait > 0 ? `again in ${wait} s` : "again now";
        const more = waiting > 1 ? ` ${waiting} answers are waiting, and will be sent in order.` : "";
        text.textContent = `Case ${e.number} is not saved yet${answer}: ${trouble.message}. It is kept in this browser and will be sent ${when}.${more}`;
      };
      update();
      if (!needSignIn) tick = setInterval(update, 1000);
      retry.hidden = false;
      retry.textContent = needSignIn ? "Sign in" : "Retry now";
      showCase.hidden = shownNumber() === e.number || !e.caseUrl;
      showCase.textContent = `Show case ${e.number}`;
      showCase.dataset.url = e.caseUrl || "";
      box.hidden = false;
      return;
    }
    if (refused.size) {
      const [number, info] = refused.entries().next().value;
      const answer = info.label ? ` (${info.label})` : "";
      text.textContent = `Case ${number} was not saved${answer}: ${info.message} Your choice is kept as a draft on that case.`;
      retry.hidden = true;
      showCase.hidden = shownNumber() === number || !info.url;
      showCase.textContent = `Show case ${number}`;
      showCase.dataset.url = info.url || "";
      box.hidden = false;
      return;
    }
    box.hidden = true;
  }

  /* ---------- session ---------- */
  function sessionUrl() { const f = document.getElementById("signin-form"); return f ? f.dataset.sessionUrl : ""; }
  function setCsrf(token) {
    csrf = token;
    try { document.body.setAttribute("hx-headers", JSON.stringify({ "X-CSRFToken": token })); } catch (_) { /* fine */ }
  }

  /** A fresh CSRF token for the signed-in reader: "ok", "signin" (asked for) or "error". */
  async function refreshSession() {
    try {
      const r = await fetch(sessionUrl(), { headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
      const data = r.ok ? await r.json() : null;
      if (r.status === 401 || (data && String(data.reader) !== String(readerId()))) { askSignIn(); return "signin"; }
      if (!data) return "error";
      setCsrf(data.csrf);
      return "ok";
    } catch (_) {
      return "error";
    }
  }

  /** The reader this page belongs to (read once: a case fetched later never changes it). */
  let pageReader = null;
  function readerId() {
    if (pageReader === null) { const el = $("[data-reader-context]"); pageReader = el ? el.dataset.reader : ""; }
    return pageReader;
  }

  function askSignIn() {
    needSignIn = true;
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
    try {
      const page = await fetch(f.action, { credentials: "same-origin", cache: "no-store" });
      const doc = new DOMParser().parseFromString(await page.text(), "text/html");
      const token = doc.querySelector('input[name="csrfmiddlewaretoken"]');
      const body = new URLSearchParams(new FormData(f));
      body.set("csrfmiddlewaretoken", token ? token.value : "");
      body.set("next", sessionUrl());
      const r = await fetch(f.action, { method: "POST", body, credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
      const type = r.headers.get("Content-Type") || "";
      if (r.ok && type.includes("application/json")) {
        const data = await r.json();
        if (String(data.reader) !== String(readerId())) {
          say(`You signed in as ${data.username}, but these answers belong to another reader. Sign in as that reader to send them.`);
          return;
        }
        setCsrf(data.csrf);
        needSignIn = false;
        document.getElementById("signin").hidden = true;
        $('input[name="password"]', f).value = "";
        pump();
        const ws = workspace();
        if (ws) {
          // Images asked for while signed out were refused: load the case's images again.
          if (window.ReaderViewer) window.ReaderViewer.init(ws);
          if (prefetched) forget(prefetched);
          prefetched = null;
          prefetchNext(ws);
        }
        return;
      }
      const answer = new DOMParser().parseFromString(await r.text(), "text/html");
      const alert = answer.querySelector('[role="alert"]');
      say(alert ? alert.textContent.trim() : `Sign-in failed (error ${r.status}).`);
    } catch (_) {
      say(navigator.onLine ? "The server could not be reached. Try again in a moment." : "This computer is offline. Try again when the connection is back.");
    } finally {
      button.disabled = false;
    }
  }

  /* ---------- the "All cases" list ---------- */
  function markList() {
    const list = $("[data-case-list]");
    if (!list || !store) return;
    const drafts = new Set(store.draftNumbers());
    const waiting = new Set(store.outbox().map((e) => e.number));
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

  /* ---------- panel and full screen ---------- */
  function mainArea() { return $(".reading-main"); }
  function panelHidden() { return document.body.classList.contains("panel-collapsed"); }
  function setPanel(hidden) {
    document.body.classList.toggle("panel-collapsed", hidden);
    $$('[data-action="panel"]').forEach((b) => b.setAttribute("aria-expanded", String(!hidden)));
    try { localStorage.setItem(PANEL_PREF, hidden ? "hidden" : "shown"); } catch (_) { /* fine */ }
    renderStrip();
  }
  /** Answer keys act only while the question is on screen. */
  function questionHidden() {
    const f = form();
    if (!f) return true;
    if (document.fullscreenElement && !document.fullscreenElement.contains(f)) return true;
    return panelHidden();
  }
  function toggleFullscreen() {
    if (document.fullscreenElement) { document.exitFullscreen().catch(() => {}); return; }
    const area = mainArea();
    if (area && area.requestFullscreen) area.requestFullscreen().catch(() => {});
  }
  let pausedTimer = null;
  function notePaused(text) {
    const note = document.getElementById("keys-paused");
    if (!note) return;
    (document.fullscreenElement || mainArea() || document.body).appendChild(note);
    note.replaceChildren(text || (document.fullscreenElement && !panelHidden()
      ? "Answer keys are paused: full screen hides the question. Press Esc to leave full screen, or use f to show the question beside the image."
      : "Answer keys are paused while the question is hidden. Press q to show it."));
    note.hidden = false;
    clearTimeout(pausedTimer);
    pausedTimer = setTimeout(() => { note.hidden = true; }, 4000);
  }

  /* ---------- dialogs ---------- */
  function openDialog() { return $$(".overlay").find((o) => !o.hidden) || null; }
  function toggleOverlay(id, show) {
    const el = document.getElementById(id);
    if (!el) return;
    el.hidden = show === undefined ? !el.hidden : !show;
    if (!el.hidden) { const b = $("button", el); if (b) b.focus(); }
  }

  /* ---------- keys ---------- */
  function shortcutsOn() { const box = document.getElementById("shortcuts-enabled"); return !box || box.checked; }
  function keyedInput(key) { return $(`#answer-form input[data-keys~="${CSS.escape(key)}"]`); }
  function typing(t) {
    return t && (t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable ||
      (t.tagName === "INPUT" && !["radio", "checkbox"].includes(t.type)));
  }
  function choose(input) {
    if (!input || input.disabled || input.closest("fieldset:disabled")) return;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  document.addEventListener("keydown", (e) => {
    if (!workspace()) return;
    const dialog = openDialog();
    if (dialog) {
      if (e.key === "Escape") { dialog.hidden = true; e.preventDefault(); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (typing(t)) { if (e.key === "Escape") t.blur(); return; }
    if (!shortcutsOn()) return; // an ordinary form: Tab, arrows and Space as the browser does
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    const onRadio = t && t.tagName === "INPUT" && t.type === "radio";
    if (onRadio && key.startsWith("Arrow")) e.preventDefault(); // never change an option silently
    if (key === "?") { toggleOverlay("help"); e.preventDefault(); return; }
    if (key === "q") { setPanel(!panelHidden()); e.preventDefault(); return; }
    if (key === "f") { toggleFullscreen(); e.preventDefault(); return; }
    const keyed = key.length === 1 ? keyedInput(key) : null;
    if (keyed || key === "Enter") {
      if (key === "Enter" && t && (t.tagName === "BUTTON" || t.tagName === "A")) return;
      e.preventDefault();
      if (questionHidden()) { notePaused(); return; }
      if (isLeaving()) { notePaused(`Case ${shownNumber()} is submitted; case ${leaving.dataset.nextNumber || "next"} is opening. Answer keys wait until it is on screen.`); return; }
      if (keyed) choose(keyed); else submit();
      return;
    }
    if (key in VIEWER_KEYS) { if (window.ReaderViewer) window.ReaderViewer.action(VIEWER_KEYS[key]); e.preventDefault(); return; }
    if (key === "ArrowLeft" || key === "ArrowRight") {
      const link = $(`.case-nav a[data-nav="${key === "ArrowLeft" ? "prev" : "next"}"]`);
      if (link) { go(link.href, { push: true }); e.preventDefault(); }
    }
  });

  /* ---------- clicks and edits ---------- */
  // Capture phase: full screen takes the whole reading area, so the question stays in view.
  document.addEventListener("click", (e) => {
    const fs = e.target.closest && e.target.closest('.viewer [data-action="fullscreen"]');
    if (fs && workspace()) { e.preventDefault(); e.stopPropagation(); toggleFullscreen(); }
  }, true);

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
      case "retry": if (needSignIn) askSignIn(); else { retryDelay = 0; pump(); } break;
      case "show-failed": if (el.dataset.url) { if (workspace()) go(el.dataset.url, { push: true }); else window.location.assign(el.dataset.url); } break;
      case "discard-draft": {
        const f = form();
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
    fetchCase(window.location.href).then((entry) => {
      if (token !== shownToken) return;
      if (entry) show(entry); else if (!needSignIn) window.location.reload();
    }).catch(() => window.location.reload());
  });
  window.addEventListener("online", () => { retryDelay = 0; pump(); });
  window.addEventListener("offline", () => { if (store && store.outbox().length) renderAlert(); });
  document.addEventListener("fullscreenchange", () => {
    const note = document.getElementById("keys-paused");
    if (note && !document.fullscreenElement && mainArea()) { mainArea().appendChild(note); note.hidden = true; }
  });

  /* ---------- start ---------- */
  function start() {
    if (window.htmx) { window.htmx.config.historyEnabled = false; window.htmx.config.historyCacheSize = 0; }
    try {
      const headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
      csrf = headers["X-CSRFToken"] || "";
    } catch (_) { csrf = ""; }
    const context = $("[data-reader-context]");
    if (context) store = new ReaderStore.Store(context.dataset.study, context.dataset.reader, Number(context.dataset.draftDays));
    readerId(); // fixed now, before any case is fetched
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
    markList();
    pump();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
