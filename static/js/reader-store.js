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
 *
 * No DOM: a plain script in the page (window.ReaderStore) and a CommonJS module in Node, where
 * the unit tests (tests/js/) give it a fake storage with localStorage's methods.
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ReaderStore = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const PREFIX = "readerstudy.v1";

  /** localStorage where the page may use it; null where it is refused (some private modes). */
  function pageStorage() {
    try { return typeof localStorage !== "undefined" ? localStorage : null; } catch (_) { return null; }
  }

  /** The storage given, or the page's localStorage when none is. */
  function storageOr(storage) { return storage === undefined || storage === null ? pageStorage() : storage; }

  /** Two sets of form values are the same answer (a missing field counts as empty). */
  function same(a, b) {
    if (!a || !b) return false;
    const names = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const name of names) if ((a[name] || "") !== (b[name] || "")) return false;
    return true;
  }

  const DAY_MS = 24 * 60 * 60 * 1000;

  class Store {
    /** `storage`: localStorage's methods (getItem, setItem, removeItem, key, length); the
     * page's localStorage by default. What it refuses (a full quota) is kept in memory.
     * `draftDays`: the study's draft period (14 when absent). `layout`: the page's design
     * stamp (annotation.sessions.layout_stamp); a draft saved under another is dropped.
     * `presetStudy`: the study itself, when `study` names one session of it: window presets
     * hold across its sessions and arms, drafts do not. */
    constructor(study, reader, storage, draftDays, layout, presetStudy) {
      this.base = `${PREFIX}.${study}.${reader}`;
      this.presetBase = `${PREFIX}.${presetStudy || study}.${reader}`;
      this.reader = String(reader);
      this.storage = storageOr(storage);
      this.memory = new Map();
      this.maxAgeMs = (Number(draftDays) > 0 ? Number(draftDays) : 14) * DAY_MS;
      this.layout = layout ? String(layout) : "";
      this.forgetOthers();
      this.draftNumbers().forEach((n) => this.draft(n)); // drops the expired ones
    }

    /** Drop every draft and outbox this browser holds for another user. */
    forgetOthers() {
      const prefix = `${PREFIX}.`;
      this.keys().forEach((k) => {
        if (!k || !k.startsWith(prefix)) return;
        const reader = k.slice(prefix.length).split(".")[1];
        if (reader !== undefined && reader !== this.reader) this.remove(k);
      });
    }

    read(key) {
      try {
        const raw = this.storage.getItem(key);
        if (raw !== null) return JSON.parse(raw);
      } catch (_) { /* fall back to memory */ }
      return this.memory.has(key) ? this.memory.get(key) : null;
    }
    write(key, value) {
      this.memory.set(key, value);
      try { this.storage.setItem(key, JSON.stringify(value)); } catch (_) { /* memory keeps it */ }
    }
    remove(key) {
      this.memory.delete(key);
      try { this.storage.removeItem(key); } catch (_) { /* nothing to do */ }
    }
    keys() {
      const out = new Set(this.memory.keys());
      try { for (let i = 0; i < this.storage.length; i++) out.add(this.storage.key(i)); } catch (_) { /* memory only */ }
      return Array.from(out);
    }

    draftKey(number) { return `${this.base}.draft.${number}`; }
    draft(number) {
      const key = this.draftKey(number);
      const d = this.read(key);
      if (!d || !d.values) return null;
      if (!(Date.now() - Number(d.at) < this.maxAgeMs)) { this.remove(key); return null; }
      // Made under another design (the PI changed it before anyone answered): its number or
      // letters may stand for another case or option now. Drafts from before layouts: kept.
      if (d.layout && this.layout && d.layout !== this.layout) { this.remove(key); return null; }
      return d;
    }
    /** `layout`: the design the values were chosen under (this page's by default); a draft
     * of another layout is never shown here (see draft). */
    saveDraft(number, values, layout = this.layout) { this.write(this.draftKey(number), { values, at: Date.now(), layout }); }
    /** Forget a draft; with `values`, only if the draft still holds exactly those. */
    clearDraft(number, values) {
      const d = this.draft(number);
      if (d && (!values || same(d.values, values))) this.remove(this.draftKey(number));
    }
    draftNumbers() {
      const prefix = `${this.base}.draft.`;
      return this.keys().filter((k) => k && k.startsWith(prefix)).map((k) => Number(k.slice(prefix.length)));
    }

    get outboxKey() { return `${this.base}.outbox`; }
    outbox() { const list = this.read(this.outboxKey); return Array.isArray(list) ? list : []; }
    /** Queue an answer; a newer answer for the same case replaces an unsent older one. */
    enqueue(entry) {
      const list = this.outbox().filter((e) => e.number !== entry.number);
      list.push(entry);
      this.write(this.outboxKey, list);
    }
    dequeue(id) { this.write(this.outboxKey, this.outbox().filter((e) => e.id !== id)); }
    pending(number) { return this.outbox().find((e) => e.number === number) || null; }

    /** The window preset this reader last chose for images of `modality` in this study, in
     * any of its sessions (viewer.js starts each case at it), or null. Not a draft: it does
     * not expire. The server keeps it too (annotation.preferences): this is the fallback. */
    preset(modality) { const p = this.read(`${this.presetBase}.preset.${modality || "image"}`); return typeof p === "string" ? p : null; }
    savePreset(modality, name) { this.write(`${this.presetBase}.preset.${modality || "image"}`, String(name)); }
  }

  /** How many answers `reader` submitted in this browser that no server has acknowledged,
   * over every study (each study's outbox). Sign-out deletes them with the rest of the site's
   * storage, so the sign-out button asks first (signout-guard.js). */
  function unsentCount(storage, reader) {
    const store = storageOr(storage);
    if (!store || reader === undefined || reader === null || reader === "") return 0;
    const suffix = `.${reader}.outbox`;
    let count = 0;
    try {
      for (let i = 0; i < store.length; i += 1) {
        const key = store.key(i);
        if (!key || !key.startsWith(`${PREFIX}.`) || !key.endsWith(suffix)) continue;
        try {
          const list = JSON.parse(store.getItem(key));
          if (Array.isArray(list)) count += list.length;
        } catch (_) { /* not a list we wrote: skip it */ }
      }
    } catch (_) { /* storage refused: nothing to count */ }
    return count;
  }

  return { Store, same, unsentCount };
});
