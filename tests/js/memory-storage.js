// localStorage's methods over a Map: what a reload of the page finds again. Shared by the
// tests of the scripts that keep drafts, the outbox and preferences in this browser.
"use strict";

class MemoryStorage {
  constructor() { this.map = new Map(); }
  getItem(k) { return this.map.has(k) ? this.map.get(k) : null; }
  setItem(k, v) { this.map.set(k, String(v)); }
  removeItem(k) { this.map.delete(k); }
  key(i) { return Array.from(this.map.keys())[i] ?? null; }
  get length() { return this.map.size; }
}

module.exports = { MemoryStorage };
