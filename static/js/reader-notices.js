/* What the reading page tells the reader, in words: the save alert (answers waiting, offline,
 * a sign-in needed, the next case not opened yet, a refused save), the note on the case's
 * form (sending, not saved, a draft, a saved answer beside a different draft), the progress
 * and pace lines and the break reminder.
 *
 * No DOM: reader.js gathers the facts (from the outbox, reader-advance.js and the page) and
 * puts these words and choices on screen. A plain script in the page (window.ReaderNotices)
 * and a CommonJS module in Node (tests/js/), which gives it facts and a time.
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ReaderNotices = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  /** Whole seconds from `now` until `at` (never below 0). */
  function secondsUntil(at, now) { return Math.max(0, Math.ceil((at - now) / 1000)); }

  /** Why a case could not be opened. */
  function unreachableWhy(online) { return online ? "the server could not be reached" : "this computer is offline"; }

  /** "case 3 is", "cases 3, 4 and 5 are". */
  function casesAre(numbers) {
    return numbers.length > 1
      ? `cases ${numbers.slice(0, -1).join(", ")} and ${numbers[numbers.length - 1]} are`
      : `case ${numbers[0]} is`;
  }

  /** The save alert's kind for these facts: "offline", "trouble", "stalled", "refused", or
   * null (no alert). Facts: trouble ({entry, message} of the answer the outbox could not send,
   * or null), needSignIn, online, stalled (reader-advance.js's `waiting`: the case after the
   * submitted one, not opened yet, or null), refused ([[number, {message, label, url}]] not
   * shown on their own case). */
  function alertKind(f) {
    if (f.trouble && !f.needSignIn && !f.online) return "offline";
    if (f.trouble) return "trouble";
    if (f.stalled) return "stalled";
    if (f.refused && f.refused.length) return "refused";
    return null;
  }

  /** The case after the one submitted, not opened yet: it opens by itself (reader-advance.js). */
  function opens(f, why) {
    const stalled = f.stalled;
    if (!stalled) return "";
    const next = stalled.number ? `Case ${stalled.number}` : "The next case";
    if (f.needSignIn) return ` ${next} opens once you have signed in.`;
    const wait = secondsUntil(stalled.retryAt, f.now);
    const when = f.online ? `trying again ${wait > 0 ? `in ${wait} s` : "now"}` : "when the connection is back";
    return ` ${next} could not be opened${why ? ` (${why})` : ""}: it opens by itself ${when}; no reading time is counted meanwhile.`;
  }

  /** The alert's text for `kind` (alertKind) at `f.now`: the countdowns change every second,
   * so the page asks again with the same kind until the facts change. More facts: waiting
   * (answers in the outbox), numbers (their case numbers), retryAt (the outbox's next try),
   * shown (the case on screen). */
  function alertText(kind, f) {
    if (kind === "offline") {
      // Offline: what waits and what happens when the connection is back, in one sentence.
      const next = f.stalled ? ` ${f.stalled.number ? `Case ${f.stalled.number}` : "The next case"} opens then, by itself; no reading time is counted meanwhile.` : "";
      return `This computer is offline. Your answers to ${casesAre(f.numbers)} kept in this browser and sent, in order, as soon as the connection is back.${next}`;
    }
    if (kind === "trouble") {
      const e = f.trouble.entry;
      const answer = e.label ? ` (your answer: ${e.label})` : "";
      const wait = secondsUntil(f.retryAt, f.now);
      const when = f.needSignIn ? "after you sign in" : wait > 0 ? `again in ${wait} s` : "again now";
      const more = f.waiting > 1 ? ` ${f.waiting} answers are waiting, and will be sent in order.` : "";
      return `Case ${e.number} is not saved yet${answer}: ${f.trouble.message}. It is kept in this browser and will be sent ${when}.${more}${opens(f)}`;
    }
    if (kind === "stalled") {
      const sent = f.waiting ? `Case ${f.shown} is submitted and kept in this browser until it is sent.` : `Case ${f.shown} is saved.`;
      return `${sent}${opens(f, unreachableWhy(f.online))}`;
    }
    if (kind === "refused") {
      const [number, info] = f.refused[0];
      const answer = info.label ? ` (${info.label})` : "";
      return `Case ${number} was not saved${answer}: ${info.message} Your choice is kept as a draft on that case.`;
    }
    return "";
  }

  /** The save alert: null (hidden), or {kind, text, retry (the Retry button's label, or null:
   * hidden), show ({number, url} of the case to show, or null), ticks (the text counts down:
   * ask alertText again every second)}. */
  function saveAlert(f) {
    const kind = alertKind(f);
    if (!kind) return null;
    const text = alertText(kind, f);
    const retry = f.needSignIn ? "Sign in" : "Retry now";
    if (kind === "offline") return { kind, text, retry: "Retry now", show: null, ticks: false };
    if (kind === "trouble") {
      const e = f.trouble.entry;
      const show = f.shown === e.number || !e.caseUrl ? null : { number: e.number, url: e.caseUrl };
      return { kind, text, retry, show, ticks: !f.needSignIn };
    }
    if (kind === "stalled") return { kind, text, retry, show: null, ticks: true };
    const [number, info] = f.refused[0];
    const show = f.shown === number || !info.url ? null : { number, url: info.url };
    return { kind, text, retry: null, show, ticks: false };
  }

  /** The refusals the alert speaks of: all but a conflict on the case shown, which the case
   * itself says ("Saved: C · your draft: B"). `refused`: a Map number -> {conflict, ...}. */
  function refusedElsewhere(refused, shown) {
    return Array.from(refused.entries()).filter(([n, info]) => !(info.conflict && n === shown));
  }

  /** The note on the case's form: null (none), or {kind, text} with kind "pending" (the answer
   * on screen is being sent), "refused", "conflict" (a saved answer and a different draft:
   * both said, the reader chooses; nothing is retried by itself) or "draft". Facts: sending
   * (the outbox holds the values on screen), trouble (and its send failed), refused ({message,
   * conflict} or undefined), draft (a draft differs from the saved answer), answered (the case
   * has a saved answer), saved and mine (the saved and the draft's main choice). */
  function formNote(f) {
    if (f.sending) {
      return { kind: "pending", text: f.trouble ? "Not saved yet: it will be sent again (see the red notice)." : "Sending this answer…" };
    }
    if (f.refused && !f.refused.conflict) return { kind: "refused", text: `Not saved: ${f.refused.message}` };
    if (f.draft && f.answered) {
      const same = f.saved === f.mine ? " (ratings or comment changed)" : "";
      return { kind: "conflict", text: `Saved: ${f.saved || "none"} · your draft: ${f.mine || "none"}${same}` };
    }
    if (f.draft) return { kind: "draft", text: "Draft, not submitted yet: kept in this browser. Press Enter to submit. " };
    return null;
  }

  /** The progress line's words, or null when a count is not a number. */
  function progress(answered, total) {
    if (Number.isNaN(answered) || Number.isNaN(total)) return null;
    return {
      label: `${answered} of ${total} answered`,
      answered: `${answered} / ${total} answered`,
      left: `${Math.max(total - answered, 0)} left`,
    };
  }

  /** The pace (the server's words, annotation.pacing) as a sentence on the pause screen. */
  function paceSentence(text) { return text ? `${text.charAt(0).toUpperCase()}${text.slice(1)}.` : ""; }

  /** The break reminder after `readingMs` of reading without a break. */
  function breakText(readingMs) {
    return `You have been reading for ${Math.round(readingMs / 60000)} min without a break. Time for a pause?`;
  }

  return { saveAlert, alertKind, alertText, refusedElsewhere, formNote, progress, paceSentence, breakText, unreachableWhy, secondsUntil };
});
