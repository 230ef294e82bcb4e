/* The outbox of a reader's answers: sends them to the server in order until each is saved or
 * refused. No DOM: the page (reader.js) listens to its events and says what happened.
 *
 * - Order: only the head of the outbox is sent; the next waits until the head is saved or
 *   refused, so the server sees the answers in the order the reader gave them.
 * - Kept: the outbox lives in the store (reader-store.js, this browser's storage), so answers
 *   survive a reload, a closed tab or an ended session, and are sent by the next page.
 * - Retry: a network failure or a server error (5xx) waits 1 s, 2 s, 4 s … (at most 30 s) and
 *   tries again; retryNow() (the Retry button, the connection coming back) tries at once.
 * - CSRF: a 403 marked X-CSRF-Failed fetches a fresh token from the session URL once, then
 *   sends again. An ended session (401, X-Login-Required, or a page instead of a receipt) stops
 *   sending until signIn() succeeds as the same reader.
 * - Refused (400, 403, 404, 409, 422): the server will never take this answer as it is. It is
 *   dropped from the outbox (never sent again), kept as the case's draft, and reported.
 *
 * Events (on(type, fn); fn receives one detail object):
 *   saved    {entry, data}            the server's receipt for the entry
 *   refused  {entry, message, saved}  dropped, with the server's reason in plain words (and,
 *                                     when the case was answered elsewhere, what it holds)
 *   waiting  {entry, message, retryAt, signIn}  the head could not be sent; when it will be
 *   signin   {}                       an ended session: the page asks the reader to sign in
 *   csrf     {token}                  a fresh CSRF token (the page's own requests use it too)
 *   drained  {}                       the outbox became empty
 *   settled  {}                       a round of sending stopped (the page redraws its notices)
 *
 * Loaded as a plain script in the page (window.ReaderOutbox) and as a CommonJS module in Node
 * for the unit tests (tests/js/), which give it a fake fetch, store and clock.
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ReaderOutbox = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const RETRY_FIRST_MS = 1000;
  const RETRY_MAX_MS = 30000;
  const KEEPALIVE_MAX_BYTES = 60000; // browsers refuse keepalive bodies above 64 KB
  const REFUSED_STATUSES = [400, 403, 404, 409, 422];
  const SESSION_ENDED = "your session has ended: sign in to send it";

  function refusal(status) {
    if (status === 404) return "this case is no longer in your study.";
    if (status === 403) return "you no longer have access to this study.";
    return "the server did not accept this answer.";
  }

  /** The login form's CSRF token in a page's HTML (Django renders name before value). */
  function tokenIn(html) {
    const input = /<input[^>]*name="csrfmiddlewaretoken"[^>]*>/.exec(html || "");
    const value = input && /value="([^"]*)"/.exec(input[0]);
    return value ? value[1] : "";
  }

  function isJson(response) {
    return (response.headers.get("Content-Type") || "").includes("application/json");
  }

  class Outbox {
    /**
     * @param {object} options
     *   store       a ReaderStore.Store (outbox and drafts)
     *   reader      this page's reader id: a session or sign-in as anyone else is refused
     *   csrf        the CSRF token the page was served with
     *   sessionUrl  where a fresh token comes from (JSON {reader, username, csrf})
     *   fetch, setTimeout, clearTimeout, now, online   injected for tests; the browser's by default
     */
    constructor(options) {
      this.store = options.store;
      this.reader = String(options.reader === undefined || options.reader === null ? "" : options.reader);
      this.csrf = options.csrf || "";
      this.sessionUrl = options.sessionUrl || "";
      const g = typeof globalThis !== "undefined" ? globalThis : {};
      this.fetch = options.fetch || ((...a) => g.fetch(...a));
      this.setTimeout = options.setTimeout || ((...a) => g.setTimeout(...a));
      this.clearTimeout = options.clearTimeout || ((...a) => g.clearTimeout(...a));
      this.now = options.now || (() => Date.now());
      this.online = options.online || (() => !g.navigator || g.navigator.onLine !== false);
      this.listeners = new Map();
      this.pumping = false;
      this.needSignIn = false;
      this.retryDelay = 0;
      this.retryAt = 0;
      this.retryTimer = null;
      this.trouble = null; // {entry, message}: why the head of the outbox is waiting
      this.idle = Promise.resolve(); // settles when the current round of sending stops
    }

    on(type, fn) {
      if (!this.listeners.has(type)) this.listeners.set(type, []);
      this.listeners.get(type).push(fn);
      return this;
    }
    /** Tells every listener; one that throws (a page's rendering bug) never stops the sending. */
    emit(type, detail = {}) {
      for (const fn of this.listeners.get(type) || []) {
        try { fn(detail); } catch (error) { if (typeof console !== "undefined") console.error(error); }
      }
    }

    /** The answers waiting, in the order they will be sent. */
    entries() { return this.store.outbox(); }
    get size() { return this.entries().length; }
    /** The waiting answer for case `number`, if any. */
    pending(number) { return this.store.pending(number); }

    /** Queues an answer (a newer one for the same case replaces an unsent older one) and sends.
     * The draft stays until the receipt: it is the safety net if the answer is refused. */
    add(entry) {
      this.store.saveDraft(entry.number, entry.values);
      // The design the answer was given under (the store's layout): a refusal keeps it as a
      // draft of that layout only, never of the case the number names under a newer design.
      this.store.enqueue({ layout: this.store.layout, ...entry });
      return this.pump();
    }

    /** Sends at once (Retry, the connection is back), unless the reader must sign in first. */
    retryNow() {
      if (this.needSignIn) { this.emit("signin"); return this.idle; }
      this.retryDelay = 0;
      return this.pump();
    }

    /** The session has ended (any request of the page found out): stop sending until sign-in. */
    requireSignIn() {
      this.needSignIn = true;
      this.emit("signin");
    }

    setCsrf(token) {
      this.csrf = token;
      this.emit("csrf", { token });
    }

    /** Sends the outbox, head first, until it is empty or the head has to wait. */
    pump() {
      if (this.pumping || this.needSignIn) return this.idle;
      this.pumping = true;
      this.clearTimeout(this.retryTimer);
      this.retryTimer = null;
      this.idle = this.run().finally(() => {
        this.pumping = false;
        this.emit("settled");
      });
      return this.idle;
    }

    async run() {
      let csrfTries = 0;
      let had = false;
      for (;;) {
        const entry = this.entries()[0];
        if (!entry) {
          this.trouble = null;
          this.retryDelay = 0;
          if (had) this.emit("drained");
          return;
        }
        had = true;
        const result = await this.send(entry);
        if (result.kind === "saved") {
          this.store.dequeue(entry.id);
          this.store.clearDraft(entry.number, entry.values);
          this.trouble = null;
          this.retryDelay = 0;
          csrfTries = 0;
          this.emit("saved", { entry, data: result.data });
        } else if (result.kind === "refused") {
          this.store.dequeue(entry.id);
          // The reader's answer is kept: as the case's draft, unless a newer draft is there;
          // under the layout it was given in (dropped when read under another design).
          if (this.store.draft(entry.number) === null) this.store.saveDraft(entry.number, entry.values, entry.layout);
          this.emit("refused", { entry, message: result.message, saved: result.saved || null });
        } else if (result.kind === "csrf" && csrfTries++ < 1) {
          const session = await this.refreshSession();
          if (session === "signin") { this.wait(entry, SESSION_ENDED); return; }
          if (session === "error") { this.wait(entry, "the server could not be reached", true); return; }
        } else if (result.kind === "signin" || result.kind === "csrf") {
          this.needSignIn = true;
          this.wait(entry, SESSION_ENDED);
          this.emit("signin");
          return;
        } else {
          this.wait(entry, result.message, true);
          return;
        }
      }
    }

    /** The head waits: with `retry`, sent again after a backoff; else after sign-in. */
    wait(entry, message, retry = false) {
      this.trouble = { entry, message };
      if (retry) {
        this.retryDelay = Math.min(RETRY_MAX_MS, this.retryDelay ? this.retryDelay * 2 : RETRY_FIRST_MS);
        this.retryAt = this.now() + this.retryDelay;
        this.clearTimeout(this.retryTimer);
        this.retryTimer = this.setTimeout(() => { this.retryTimer = null; this.pump(); }, this.retryDelay);
      }
      this.emit("waiting", { entry, message, retryAt: retry ? this.retryAt : null, signIn: !retry });
    }

    /** One POST of one entry, classified: saved, refused, csrf, signin or retry. */
    async send(entry) {
      const body = new URLSearchParams();
      for (const [name, value] of Object.entries(entry.values)) body.append(name, value);
      body.append("time_ms", String(entry.time_ms || 0));
      if (entry.base) body.append("base", JSON.stringify(entry.base));
      let r;
      try {
        r = await this.fetch(entry.url, {
          method: "POST",
          body,
          headers: { Accept: "application/json", "X-CSRFToken": this.csrf },
          credentials: "same-origin",
          cache: "no-store",
          keepalive: body.toString().length < KEEPALIVE_MAX_BYTES, // finishes if the page closes
        });
      } catch (_) {
        return { kind: "retry", message: this.online() ? "the server could not be reached" : "this computer is offline" };
      }
      const json = isJson(r) ? await r.json().catch(() => null) : null;
      if (r.status === 401 || r.headers.get("X-Login-Required")) return { kind: "signin" };
      if (r.status === 403 && r.headers.get("X-CSRF-Failed")) return { kind: "csrf" };
      if (r.ok && json && json.saved) return { kind: "saved", data: json };
      if (r.ok) return { kind: "signin" }; // a page, not a receipt: the sign-in page after a redirect
      if (REFUSED_STATUSES.includes(r.status)) return { kind: "refused", message: (json && json.error) || refusal(r.status), saved: (json && json.saved) || null };
      return { kind: "retry", message: `the server had a problem (error ${r.status})` };
    }

    /** A fresh CSRF token for this page's reader: "ok", "signin" (asked for) or "error". */
    async refreshSession() {
      try {
        const r = await this.fetch(this.sessionUrl, { headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
        const data = r.ok ? await r.json() : null;
        if (r.status === 401 || (data && String(data.reader) !== this.reader)) { this.requireSignIn(); return "signin"; }
        if (!data) return "error";
        this.setCsrf(data.csrf);
        return "ok";
      } catch (_) {
        return "error";
      }
    }

    /**
     * Signs in again without leaving the page (`url`: the login form's action; `fields`: its
     * username and password) and, as the same reader, sends what waited. Resolves to
     * {kind: "ok"}, {kind: "other-reader", username}, {kind: "failed", status, html} (the
     * login page's answer, for its message) or {kind: "unreachable"}.
     */
    async signIn(url, fields) {
      try {
        const page = await this.fetch(url, { credentials: "same-origin", cache: "no-store" });
        const body = new URLSearchParams(fields);
        body.set("csrfmiddlewaretoken", tokenIn(await page.text()));
        body.set("next", this.sessionUrl);
        const r = await this.fetch(url, { method: "POST", body, credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
        if (r.ok && isJson(r)) {
          const data = await r.json();
          if (String(data.reader) !== this.reader) return { kind: "other-reader", username: data.username };
          this.setCsrf(data.csrf);
          this.needSignIn = false;
          this.pump();
          return { kind: "ok" };
        }
        return { kind: "failed", status: r.status, html: await r.text() };
      } catch (_) {
        return { kind: "unreachable", offline: !this.online() };
      }
    }
  }

  return { Outbox, RETRY_FIRST_MS, RETRY_MAX_MS, tokenIn };
});
