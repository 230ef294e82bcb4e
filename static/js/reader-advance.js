/* Going on to the next case after Enter when it could not be opened at once (offline, the
 * server unreachable, the session ended): the submitted case stays held on screen, and the
 * next case opens by itself as soon as it can, never turning the answer just given into a
 * revision. No DOM: reader.js shows what it reports and gives it the way to open a case.
 *
 * - `stall(entryId, url, number)`: the case after the submitted one (entry `entryId`) could
 *   not be opened (`number`: the case's number, for the page's words). It is tried again after 1 s, 2 s, 4 s … (at most 30 s), at once on retryNow() (the
 *   connection is back, Retry, a sign-in), and when the server's receipt for that entry comes
 *   (`saved`), at the case the receipt names (the server's choice of the next case).
 * - `open(url)` (given by the page) resolves to "shown", "moved" (the reader went elsewhere,
 *   or the page is navigating) or "unreachable" (try again later).
 * - One attempt at a time; the page's waiting time is the clock's (reader-clock.js `wait`),
 *   never the reading time of either case.
 *
 * Events (on(type, fn)): change {waiting} when a wait starts, retries or ends;
 * shown {entryId} when the next case is on screen; finish {url} when the receipt says no case
 * is left (the review page).
 *
 * A plain script in the page (window.ReaderAdvance) and a CommonJS module in Node for the unit
 * tests (tests/js/), which give it a fake open() and timers.
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ReaderAdvance = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const RETRY_FIRST_MS = 1000;
  const RETRY_MAX_MS = 30000;
  const SHOWN = "shown";
  const MOVED = "moved";
  const UNREACHABLE = "unreachable";

  class Advance {
    /** `open(url)`: shows the case at url (a promise of SHOWN, MOVED or UNREACHABLE);
     * setTimeout, clearTimeout, now: injected for tests. */
    constructor({ open, setTimeout: set, clearTimeout: clear, now } = {}) {
      const g = typeof globalThis !== "undefined" ? globalThis : {};
      this.open = open;
      this.setTimeout = set || ((...a) => g.setTimeout(...a));
      this.clearTimeout = clear || ((...a) => g.clearTimeout(...a));
      this.now = now || (() => Date.now());
      this.waiting = null; // { entryId, url, number, retryAt }: the next case not opened yet
      this.delay = 0;
      this.timer = null;
      this.attempt = null; // the attempt in flight (a promise)
      this.listeners = new Map();
    }

    on(type, fn) {
      if (!this.listeners.has(type)) this.listeners.set(type, []);
      this.listeners.get(type).push(fn);
      return this;
    }
    emit(type, detail = {}) {
      for (const fn of this.listeners.get(type) || []) {
        try { fn(detail); } catch (error) { if (typeof console !== "undefined") console.error(error); }
      }
    }

    /** The case after entry `entryId` could not be opened at `url`: wait and try again. */
    stall(entryId, url, number = null) {
      this.waiting = { entryId, url, number, retryAt: 0 };
      this.delay = 0;
      this.schedule();
    }

    schedule() {
      this.clearTimeout(this.timer);
      this.delay = Math.min(RETRY_MAX_MS, this.delay ? this.delay * 2 : RETRY_FIRST_MS);
      this.waiting.retryAt = this.now() + this.delay;
      this.timer = this.setTimeout(() => { this.timer = null; this.retryNow(); }, this.delay);
      this.emit("change", { waiting: this.waiting });
    }

    /** Try now (the connection is back, Retry, signed in again). */
    retryNow() {
      if (!this.waiting) return Promise.resolve(null);
      if (this.attempt) return this.attempt;
      const waiting = this.waiting;
      this.clearTimeout(this.timer);
      this.timer = null;
      this.attempt = Promise.resolve()
        .then(() => this.open(waiting.url))
        .catch(() => UNREACHABLE)
        .then((result) => {
          this.attempt = null;
          if (this.waiting !== waiting) return result; // given up meanwhile (the reader moved)
          if (result === UNREACHABLE) {
            // The receipt may have named another case meanwhile: the next try opens that one.
            this.schedule();
            return result;
          }
          this.waiting = null;
          this.delay = 0;
          this.emit("change", { waiting: null });
          if (result === SHOWN) this.emit("shown", { entryId: waiting.entryId });
          return result;
        });
      return this.attempt;
    }

    /** The server's receipt for entry `entryId`: the case it says comes next is the one to
     * open (or, with none left, the review page). */
    saved(entryId, data) {
      const waiting = this.waiting;
      if (!waiting || waiting.entryId !== entryId || !data) return;
      if (data.next === null || data.next === undefined) {
        if (!data.next_url && data.review_url) {
          this.cancel();
          this.emit("finish", { url: data.review_url });
          return;
        }
      }
      if (data.next_url) { waiting.url = data.next_url; waiting.number = data.next; }
      this.retryNow();
    }

    /** Stop waiting (the reader went to another case, the page is leaving). */
    cancel() {
      this.clearTimeout(this.timer);
      this.timer = null;
      if (!this.waiting) return;
      this.waiting = null;
      this.delay = 0;
      this.emit("change", { waiting: null });
    }
  }

  return { Advance, SHOWN, MOVED, UNREACHABLE, RETRY_FIRST_MS, RETRY_MAX_MS };
});
