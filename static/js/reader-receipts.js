/* What the server said about this page's answers, and where the reader goes because of it.
 *
 * The server decides which case comes next: the case shown at once after Enter is the page's
 * earlier guess (the prefetched next case), checked against the save's receipt when it comes,
 * whichever comes first. A save the server acknowledged is what the case holds, even on a
 * copy of the case fetched before it; a save it refused is kept, with its reason, until the
 * case is saved or its draft discarded.
 *
 * No DOM: reader.js asks and carries out what these decisions say. A plain script in the page
 * (window.ReaderReceipts) and a CommonJS module in Node (tests/js/).
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ReaderReceipts = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const KEPT = 20; // receipts kept for cases shown after them: more than a burst of Enters

  class Receipts {
    constructor() {
      this.byEntry = new Map(); // entry id -> the server's receipt
      this.optimistic = null; // { entryId, token }: the case shown ahead of this save's receipt
      this.acked = new Map(); // case number -> { values, at }: saves the server acknowledged
      this.refused = new Map(); // case number -> { message, label, url, conflict }
    }

    /** The case after entry `entryId` is on screen (the page's show count `token`): the
     * receipt to check it against now, or null (it is checked when the receipt comes). */
    shown(entryId, token) {
      const receipt = this.byEntry.get(entryId);
      if (receipt) return receipt;
      this.optimistic = { entryId, token };
      return null;
    }

    /** The receipt for entry `entryId` came (`token`: the page's show count now): true when
     * the case shown ahead of it is still on screen and must be checked against it. */
    saved(entryId, receipt, token) {
      this.byEntry.set(entryId, receipt);
      if (this.byEntry.size > KEPT) this.byEntry.delete(this.byEntry.keys().next().value);
      if (!this.optimistic || this.optimistic.entryId !== entryId) return false;
      const moved = this.optimistic.token !== token;
      this.optimistic = null;
      return !moved;
    }

    /** The save of entry `entryId` was refused: no case shown ahead of it to check. */
    dropped(entryId) {
      if (this.optimistic && this.optimistic.entryId === entryId) this.optimistic = null;
    }

    /** The server acknowledged `values` for case `number` at `at` (performance.now()). */
    acknowledge(number, values, at) {
      this.acked.set(number, { values, at });
      this.refused.delete(number);
    }

    /** The values this page saved for case `number` after a copy of it fetched at `fetchedAt`:
     * that copy shows an older answer. Null when the copy is as new. */
    newerThan(number, fetchedAt) {
      const own = this.acked.get(number);
      return own && own.at > (fetchedAt || 0) ? own.values : null;
    }
  }

  /** The receipt against the case on screen (`shown`: {number, nextUrl}). One of
   * {review: url} (no case left), {go: url} (the server names another case: shown in its
   * place), {following: {url, number}} (the same case; the one after it changed), {following:
   * null} (the same case, and none after it now) or null (all as shown). */
  function reconcile(receipt, shown) {
    if (receipt.next === null) return { review: receipt.review_url };
    if (receipt.next !== shown.number) return { go: receipt.next_url };
    if (receipt.following_url && shown.nextUrl !== receipt.following_url) {
      return { following: { url: receipt.following_url, number: receipt.following } };
    }
    if (!receipt.following_url && shown.nextUrl) return { following: null };
    return null;
  }

  /** Where the reader goes once the save they were waiting on (the last open case, or a
   * practice case) is acknowledged: {again: url} (the practice case, now with its feedback),
   * {next: url, number} or {review: url}. */
  function afterWaitedSave(entry, receipt) {
    if (entry.practice) return { again: entry.caseUrl };
    if (receipt.next_url) return { next: receipt.next_url, number: receipt.next };
    return { review: receipt.review_url };
  }

  /** A refused save's case, to be shown again as the server has it: a second read's first
   * answer (`stage=first`) refused because that stage is over (`held`: the server's saved
   * answer came with the refusal; another tab gave it and the AI is shown now). */
  function staleStage(entry, held) { return !!held && /[?&]stage=first/.test(entry.url || ""); }

  return { Receipts, reconcile, afterWaitedSave, staleStage, KEPT };
});
