// Reader drafts expire and never outlive another user in this browser (issue 25, finding 11).
// Run: node --test tests/js/   (make test-js)
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { Store } = require("../../static/js/reader-store.js");
const { MemoryStorage } = require("./memory-storage.js");

const DAY = 24 * 60 * 60 * 1000;

test("a draft older than the study's draft_days is gone", () => {
  const storage = new MemoryStorage();
  const store = new Store("s", "7", storage, 14);
  store.saveDraft(1, { choice: "A" });
  store.saveDraft(2, { choice: "B" });
  const key = "readerstudy.v1.s.7.draft.2";
  storage.setItem(key, JSON.stringify({ ...JSON.parse(storage.getItem(key)), at: Date.now() - 15 * DAY }));
  store.memory.clear(); // what a reload finds: the browser's storage only
  assert.equal(store.draft(1).values.choice, "A");
  assert.equal(store.draft(2), null);
  assert.equal(storage.getItem(key), null);
});

test("the PI's setting applies: 1 day, and expired drafts go when the page opens", () => {
  const storage = new MemoryStorage();
  storage.setItem("readerstudy.v1.s.7.draft.3", JSON.stringify({ values: { choice: "C" }, at: Date.now() - 2 * DAY }));
  storage.setItem("readerstudy.v1.s.7.draft.4", JSON.stringify({ values: { choice: "D" }, at: Date.now() - DAY / 2 }));
  const store = new Store("s", "7", storage, 1);
  assert.equal(storage.getItem("readerstudy.v1.s.7.draft.3"), null);
  assert.equal(store.draft(4).values.choice, "D");
});

test("another user's drafts and outbox in this browser are dropped; preferences stay", () => {
  const storage = new MemoryStorage();
  const first = new Store("s", "7", storage, 14);
  first.saveDraft(1, { choice: "A", comment: "private note" });
  first.enqueue({ id: "x", number: 1, values: { choice: "A" } });
  storage.setItem("readerstudy.shortcuts", "off");
  new Store("other-study", "8", storage, 14);
  assert.deepEqual(Array.from(storage.map.keys()), ["readerstudy.shortcuts"]);
});

test("without a draft period the default is 14 days", () => {
  const storage = new MemoryStorage();
  storage.setItem("readerstudy.v1.s.7.draft.1", JSON.stringify({ values: { choice: "A" }, at: Date.now() - 13 * DAY }));
  storage.setItem("readerstudy.v1.s.7.draft.2", JSON.stringify({ values: { choice: "B" }, at: Date.now() - 15 * DAY }));
  const store = new Store("s", "7", storage);
  assert.equal(store.draft(1).values.choice, "A");
  assert.equal(store.draft(2), null);
});

test("unsent answers are counted per reader over every study, for the sign-out question", () => {
  const { unsentCount } = require("../../static/js/reader-store.js");
  const storage = new MemoryStorage();
  const mine = new Store("s", "7", storage, 14);
  assert.equal(unsentCount(storage, "7"), 0);
  mine.enqueue({ id: "a", number: 1, values: { choice: "A" } });
  new Store("t", "7", storage, 14).enqueue({ id: "b", number: 4, values: { choice: "B" } });
  storage.setItem("readerstudy.v1.s.17.outbox", JSON.stringify([{ id: "x", number: 1 }]));
  storage.setItem("readerstudy.v1.s.7.outbox.broken", "not json");
  assert.equal(unsentCount(storage, "7"), 2); // another reader's "17" is not counted
  mine.dequeue("a");
  assert.equal(unsentCount(storage, "7"), 1);
  assert.equal(unsentCount(storage, ""), 0);
});

test("a draft made under another design is dropped; one from before layouts is kept", () => {
  const storage = new MemoryStorage();
  const before = new Store("s", "7", storage, 14, "aaaa");
  before.saveDraft(1, { choice: "B" }); // B under the old design: another option now
  storage.setItem("readerstudy.v1.s.7.draft.2", JSON.stringify({ values: { choice: "C" }, at: Date.now() }));
  const after = new Store("s", "7", storage, 14, "bbbb");
  assert.equal(after.draft(1), null);
  assert.equal(storage.getItem("readerstudy.v1.s.7.draft.1"), null);
  assert.equal(after.draft(2).values.choice, "C");
  after.saveDraft(3, { choice: "D" });
  assert.equal(new Store("s", "7", storage, 14, "bbbb").draft(3).values.choice, "D");
});
