// Where the server's receipts send the reader (static/js/reader-receipts.js): the case shown at
// once after Enter is checked against the receipt whichever comes first, the server's choice
// of the next case wins, an acknowledged save beats an older copy of its case, and a refusal is
// kept until the case is saved.
// Run: node --test tests/js/   (make test-js)
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { Receipts, reconcile, afterWaitedSave, staleStage, KEPT } = require("../../static/js/reader-receipts.js");

const receipt = (next, extra = {}) => ({
  next, next_url: next === null ? null : `/case/${next}/`, review_url: "/review/", following: null, following_url: null, ...extra,
});

test("the receipt after the next case is shown: checked then, unless the reader moved on", () => {
  const r = new Receipts();
  assert.equal(r.shown("e1", 7), null); // case 4 shown at once, token 7
  assert.equal(r.saved("e1", receipt(4), 7), true); // still on it: check it
  assert.equal(r.shown("e2", 8), null);
  assert.equal(r.saved("e2", receipt(5), 9), false); // the reader moved (token 9): nothing to check
  assert.equal(r.saved("e2", receipt(5), 9), false); // and only once
});

test("the receipt before the next case is shown: the case is checked as it comes", () => {
  const r = new Receipts();
  const data = receipt(4);
  assert.equal(r.saved("e1", data, 7), false);
  assert.equal(r.shown("e1", 8), data);
});

test("a refused save leaves no case to check; other entries keep theirs", () => {
  const r = new Receipts();
  r.shown("e1", 1);
  r.dropped("e2");
  assert.equal(r.saved("e1", receipt(4), 1), true);
  r.shown("e3", 2);
  r.dropped("e3");
  assert.equal(r.saved("e3", receipt(5), 2), false);
});

test("the last receipts are kept, the oldest forgotten", () => {
  const r = new Receipts();
  for (let i = 0; i <= KEPT; i++) r.saved(`e${i}`, receipt(i + 1), 0);
  assert.equal(r.shown("e0", 0), null);
  assert.deepEqual(r.shown(`e${KEPT}`, 0), receipt(KEPT + 1));
});

test("an acknowledged save beats a copy of its case fetched before it, and clears its refusal", () => {
  const r = new Receipts();
  r.refused.set(3, { message: "The server could not be reached.", conflict: false });
  r.acknowledge(3, { choice: "B" }, 500);
  assert.equal(r.refused.has(3), false);
  assert.deepEqual(r.newerThan(3, 400), { choice: "B" });
  assert.deepEqual(r.newerThan(3, undefined), { choice: "B" });
  assert.equal(r.newerThan(3, 600), null); // fetched after the save: it shows it already
  assert.equal(r.newerThan(4, 0), null);
});

test("the server agrees, names another case, changes the case after, or has none left", () => {
  assert.equal(reconcile(receipt(4), { number: 4, nextUrl: undefined }), null);
  assert.equal(reconcile(receipt(4, { following: 5, following_url: "/case/5/" }), { number: 4, nextUrl: "/case/5/" }), null);
  assert.deepEqual(reconcile(receipt(6), { number: 4, nextUrl: "/case/5/" }), { go: "/case/6/" });
  assert.deepEqual(reconcile(receipt(null), { number: 4 }), { review: "/review/" });
  assert.deepEqual(reconcile(receipt(4, { following: 7, following_url: "/case/7/" }), { number: 4, nextUrl: "/case/5/" }),
    { following: { url: "/case/7/", number: 7 } });
  assert.deepEqual(reconcile(receipt(4), { number: 4, nextUrl: "/case/5/" }), { following: null });
});

test("after the save the reader waited on: the practice case again, the next case, or the review", () => {
  assert.deepEqual(afterWaitedSave({ practice: true, caseUrl: "/case/2/" }, receipt(3)), { again: "/case/2/" });
  assert.deepEqual(afterWaitedSave({ practice: false }, receipt(3)), { next: "/case/3/", number: 3 });
  assert.deepEqual(afterWaitedSave({ practice: false }, receipt(null)), { review: "/review/" });
});

test("a first answer refused because the second read began in another tab", () => {
  assert.equal(staleStage({ url: "/s/x/case/3/answer/?stage=first" }, { choice: "A" }), true);
  assert.equal(staleStage({ url: "/s/x/case/3/answer/?a=1&stage=first" }, { choice: "A" }), true);
  assert.equal(staleStage({ url: "/s/x/case/3/answer/?stage=first" }, null), false);
  assert.equal(staleStage({ url: "/s/x/case/3/answer/" }, { choice: "A" }), false);
});
