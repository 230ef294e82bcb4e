// Reader drafts expire and never outlive another user's sign-in (issue 25, finding 11).
// Run by tests/annotation_tests/test_drafts.py with `node --test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

function load() {
  const data = new Map();
  const localStorage = {
    get length() { return data.size; },
    key: (i) => Array.from(data.keys())[i] ?? null,
    getItem: (k) => (data.has(k) ? data.get(k) : null),
    setItem: (k, v) => data.set(k, String(v)),
    removeItem: (k) => data.delete(k),
  };
  const context = { localStorage, Date, JSON, Number, String, Array, Map, Set, Object };
  context.window = context;
  vm.createContext(context);
  const source = readFileSync(new URL("../../static/js/reader-store.js", import.meta.url), "utf8");
  vm.runInContext(source, context);
  return { ReaderStore: context.ReaderStore, data };
}

const DAY = 24 * 60 * 60 * 1000;

test("a draft older than the study's draft_days is gone", () => {
  const { ReaderStore, data } = load();
  const store = new ReaderStore.Store("s", "7", 14);
  store.saveDraft(1, { choice: "A" });
  store.saveDraft(2, { choice: "B" });
  const old = JSON.parse(data.get("readerstudy.v1.s.7.draft.2"));
  old.at = Date.now() - 15 * DAY;
  data.set("readerstudy.v1.s.7.draft.2", JSON.stringify(old));
  assert.equal(store.draft(1).values.choice, "A");
  assert.equal(store.draft(2), null);
  assert.equal(data.has("readerstudy.v1.s.7.draft.2"), false);
});

test("the PI's setting applies: 1 day", () => {
  const { ReaderStore, data } = load();
  data.set("readerstudy.v1.s.7.draft.3", JSON.stringify({ values: { choice: "C" }, at: Date.now() - 2 * DAY }));
  data.set("readerstudy.v1.s.7.draft.4", JSON.stringify({ values: { choice: "D" }, at: Date.now() - DAY / 2 }));
  const store = new ReaderStore.Store("s", "7", 1);
  assert.equal(data.has("readerstudy.v1.s.7.draft.3"), false); // dropped when the page opens
  assert.equal(store.draft(4).values.choice, "D");
});

test("another user's drafts and outbox in this browser are dropped", () => {
  const { ReaderStore, data } = load();
  const first = new ReaderStore.Store("s", "7", 14);
  first.saveDraft(1, { choice: "A", comment: "private note" });
  first.enqueue({ id: "x", number: 1, values: { choice: "A" } });
  data.set("readerstudy.shortcuts", "off"); // a preference, not a draft: kept
  new ReaderStore.Store("other-study", "8", 14);
  assert.deepEqual(Array.from(data.keys()), ["readerstudy.shortcuts"]);
});
