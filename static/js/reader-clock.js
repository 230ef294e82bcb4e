/* The reading clock: the visible, unpaused time on the case shown, and the reading time since
 * the last break, for the break reminder.
 *
 * A case's time counts only while the page is visible, not paused and not waiting: Pause (and
 * a hidden tab) stops it, and so does the wait between a submitted case and the next one on
 * screen (offline, a slow server: `wait`), so a reader's stored time, their pace and the
 * analysis's reading times never hold a coffee break or a lost connection. The time since the last break counts the same way across cases; an
 * interruption (paused or hidden) of at least BREAK_MS is a break and starts it again.
 *
 * No DOM: a plain script in the page (window.ReaderClock) and a CommonJS module in Node, where
 * the unit tests (tests/js/) give it a fake clock.
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ReaderClock = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const BREAK_MS = 5 * 60 * 1000;

  class Clock {
    /** `now`: a monotonic clock in ms (performance.now in the page); `visible`: whether the
     * page is visible at the start. */
    constructor({ now, visible = true, breakMs = BREAK_MS } = {}) {
      this.now = now || (() => Date.now());
      this.breakMs = breakMs;
      this.visible = visible;
      this.paused = false;
      this.waiting = false; // between a submitted case and the next one on screen
      this.caseMs = 0;
      this.readingMs = 0; // since the last break
      this.since = this.running ? this.now() : null; // when the current running stretch began
      this.stoppedAt = this.running ? null : this.now(); // when the clock last stopped
    }

    get running() { return this.visible && !this.paused && !this.waiting; }

    /** Counts the running stretch up to now into the case's and the reading time. */
    settle() {
      if (this.since === null) return;
      const t = this.now();
      this.caseMs += t - this.since;
      this.readingMs += t - this.since;
      this.since = t;
    }

    update(change) {
      const was = this.running;
      this.settle();
      change();
      const is = this.running;
      if (was && !is) { this.since = null; this.stoppedAt = this.now(); }
      if (!was && is) {
        if (this.stoppedAt !== null && this.now() - this.stoppedAt >= this.breakMs) this.readingMs = 0;
        this.stoppedAt = null;
        this.since = this.now();
      }
    }

    /** A new case is shown: its time starts at 0 (the reading time goes on). */
    startCase() { this.settle(); this.caseMs = 0; }
    setVisible(visible) { this.update(() => { this.visible = visible; }); }
    pause() { this.update(() => { this.paused = true; }); }
    resume() { this.update(() => { this.paused = false; }); }
    /** Waiting for the next case (true) or showing one (false): no case is read meanwhile. */
    wait(waiting) { this.update(() => { this.waiting = !!waiting; }); }

    /** Visible, unpaused ms on the case shown. */
    elapsed() { this.settle(); return Math.round(this.caseMs); }
    /** Reading ms since the last break. */
    reading() { this.settle(); return Math.round(this.readingMs); }
    /** Whether a break is due after `minutes` of reading (0: never). */
    breakDue(minutes) { return Number(minutes) > 0 && this.reading() >= Number(minutes) * 60000; }
    /** "Later": remind again after another `minutes` of reading. */
    snooze(minutes) { this.settle(); this.readingMs = Math.max(0, this.readingMs - Number(minutes) * 60000); }
  }

  return { Clock, BREAK_MS };
});
