/* Drafts and the outbox of a reader's answers, kept in this browser (localStorage).
 *
 * Keyed by study, reader and case number (the number is the reader's own order, which the
 * server fixes), so a draft comes back on reload, Back, in a new tab and after signing in
 * again, and never shows on another reader's page. A draft is never an answer: only what the
 * server acknowledged counts. The outbox holds answers the reader submitted but the server has
 * not acknowledged yet, in order; it is sent again until it is. Values are the form's own
 * field names and values: this file knows nothing of the vocabulary.
 *
 * Drafts expire: older than the study's `draft_days` (the PI sets it; 14 by default) they are
 * dropped when read, and every draft of the study older than that is dropped when the page
 * opens. Sign-out clears this browser's storage for the site (the server's Clear-Site-Data),
 * and so does a sign-in by a different user, so the next person at a shared workstation finds
 * nothing here; `forgetOthers` also drops what other users of this browser left behind.
 */
(function () {
  "use strict";

  const PREFIX = "readerstudy.v1";
  const memory = new Map(); // where localStorage is refused (private mode, full quota)

  function read(key) {
    try {
      const raw = localStorage.getItem(key);
      if (raw !== null) return JSON.parse(raw);
    } catch (_) { /* fall back to memory */ }
    return memory.has(key) ? memory.get(key) : null;
  }
  function write(key, value) {
    memory.set(key, value);
    try { localStorage.setItem(key, JSON.stringify(value)); } catch (_) { /* memory keeps it */ }
  }
  function remove(key) {
    memory.delete(key);
    try { localStorage.removeItem(key); } catch (_) { /* nothing to do */ }
  }
  function keys() {
    const out = new Set(memory.keys());
    try { for (let i = 0; i < localStorage.length; i++) out.add(localStorage.key(i)); } catch (_) { /* memory only */ }
    return Array.from(out);
  }

  /** Two sets of form values are the same answer (a missing field counts as empty). */
  function same(a, b) {
    if (!a || !b) return false;
    const names = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const name of names) if ((a[name] || "") !== (b[name] || "")) return false;
    return true;
  }

  const DAY_MS = 24 * 60 * 60 * 1000;

  class Store {
    constructor(study, reader, draftDays) {
      this.base = `${PREFIX}.${study}.${reader}`;
      this.reader = String(reader);
      this.maxAgeMs = (Number(draftDays) > 0 ? Number(draftDays) : 14) * DAY_MS;
      this.forgetOthers();
      this.draftNumbers().forEach((n) => this.draft(n)); // drops the expired ones
    }

    /** Drop every draft and outbox this browser holds for another user. */
    forgetOthers() {
      const prefix = `${PREFIX}.`;
      keys().forEach((k) => {
        if (!k || !k.startsWith(prefix)) return;
        const reader = k.slice(prefix.length).split(".")[1];
        if (reader !== undefined && reader !== this.reader) remove(k);
      });
    }

    draftKey(number) { return `${this.base}.draft.${number}`; }
    draft(number) {
      const key = this.draftKey(number);
      const d = read(key);
      if (!d || !d.values) return null;
      if (!(Date.now() - Number(d.at) < this.maxAgeMs)) { remove(key); return null; }
      return d;
    }
    saveDraft(number, values) { write(this.draftKey(number), { values, at: Date.now() }); }
    /** Forget a draft; with `values`, only if the draft still holds exactly those. */
    clearDraft(number, values) {
      const d = this.draft(number);
      if (d && (!values || same(d.values, values))) remove(this.draftKey(number));
    }
    draftNumbers() {
      const prefix = `${this.base}.draft.`;
      return keys().filter((k) => k && k.startsWith(prefix)).map((k) => Number(k.slice(prefix.length)));
    }

    get outboxKey() { return `${this.base}.outbox`; }
    outbox() { const list = read(this.outboxKey); return Array.isArray(list) ? list : []; }
    /** Queue an answer; a newer answer for the same case replaces an unsent older one. */
    enqueue(entry) {
      const list = this.outbox().filter((e) => e.number !== entry.number);
      list.push(entry);
      write(this.outboxKey, list);
    }
    dequeue(id) { write(this.outboxKey, this.outbox().filter((e) => e.id !== id)); }
    pending(number) { return this.outbox().find((e) => e.number === number) || null; }
  }

  window.ReaderStore = { Store, same };
})();
