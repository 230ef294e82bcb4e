// What the reading page tells the reader (static/js/reader-notices.js): the save alert while
// answers wait (offline, a server error, a sign-in, the next case not opened yet, a refusal),
// the note on the case's form, the progress line and the break reminder.
// Run: node --test tests/js/   (make test-js)
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const N = require("../../static/js/reader-notices.js");

const NOW = 1_000_000;
const trouble = (number = 3, extra = {}) => ({
  entry: { number, label: "B. Pneumothorax", caseUrl: `/case/${number}/`, ...extra },
  message: "the server answered 502",
});
const facts = (extra = {}) => ({
  waiting: 0, trouble: null, needSignIn: false, online: true, stalled: null, numbers: [], refused: [],
  shown: 4, retryAt: 0, now: NOW, ...extra,
});

test("nothing waits and nothing was refused: no alert", () => {
  assert.equal(N.saveAlert(facts()), null);
});

test("offline: every waiting case in one sentence, and the next case opens when back", () => {
  const alert = N.saveAlert(facts({ trouble: trouble(3), online: false, waiting: 3, numbers: [3, 4, 5] }));
  assert.equal(alert.kind, "offline");
  assert.equal(alert.text, "This computer is offline. Your answers to cases 3, 4 and 5 are kept in this browser and sent, in order, as soon as the connection is back.");
  assert.deepEqual([alert.retry, alert.show, alert.ticks], ["Retry now", null, false]);
  const one = N.saveAlert(facts({ trouble: trouble(3), online: false, numbers: [3], stalled: { number: 4, retryAt: NOW } }));
  assert.equal(one.text, "This computer is offline. Your answers to case 3 is kept in this browser and sent, in order, as soon as the connection is back. Case 4 opens then, by itself; no reading time is counted meanwhile.");
});

test("a failed send counts down to the next try, names the answer and offers its case", () => {
  const f = facts({ trouble: trouble(3), waiting: 2, retryAt: NOW + 4200 });
  const alert = N.saveAlert(f);
  assert.equal(alert.kind, "trouble");
  assert.equal(alert.text, "Case 3 is not saved yet (your answer: B. Pneumothorax): the server answered 502. It is kept in this browser and will be sent again in 5 s. 2 answers are waiting, and will be sent in order.");
  assert.deepEqual([alert.retry, alert.show, alert.ticks], ["Retry now", { number: 3, url: "/case/3/" }, true]);
  // A second later the same alert says 4 s; at the time of the retry, "now".
  assert.match(N.alertText(alert.kind, { ...f, now: NOW + 1000 }), /again in 4 s\./);
  assert.match(N.alertText(alert.kind, { ...f, now: NOW + 5000 }), /will be sent again now\./);
  // On the failed case itself there is nothing to show.
  assert.equal(N.saveAlert({ ...f, shown: 3 }).show, null);
});

test("a sign-in needed: the answer waits for it, the button signs in, nothing counts down", () => {
  const alert = N.saveAlert(facts({ trouble: trouble(3), needSignIn: true, waiting: 1, stalled: { number: 4, retryAt: NOW + 2000 } }));
  assert.equal(alert.text, "Case 3 is not saved yet (your answer: B. Pneumothorax): the server answered 502. It is kept in this browser and will be sent after you sign in. Case 4 opens once you have signed in.");
  assert.deepEqual([alert.retry, alert.ticks], ["Sign in", false]);
});

test("the next case not opened yet: the case shown is submitted, the next one opens by itself", () => {
  const stalled = { number: 5, retryAt: NOW + 2000 };
  const alert = N.saveAlert(facts({ stalled, waiting: 1, shown: 4 }));
  assert.equal(alert.kind, "stalled");
  assert.equal(alert.text, "Case 4 is submitted and kept in this browser until it is sent. Case 5 could not be opened (the server could not be reached): it opens by itself trying again in 2 s; no reading time is counted meanwhile.");
  assert.deepEqual([alert.retry, alert.show, alert.ticks], ["Retry now", null, true]);
  const saved = N.saveAlert(facts({ stalled: { number: null, retryAt: NOW }, online: false }));
  assert.equal(saved.text, "Case 4 is saved. The next case could not be opened (this computer is offline): it opens by itself when the connection is back; no reading time is counted meanwhile.");
});

test("a refused save elsewhere is said with its reason and its case; one on the case shown is the case's", () => {
  const refused = new Map([
    [4, { message: "This case was answered in another tab.", label: "C", url: "/case/4/", conflict: true }],
    [2, { message: "The study is closed.", label: "", url: "/case/2/", conflict: false }],
  ]);
  const elsewhere = N.refusedElsewhere(refused, 4);
  assert.deepEqual(elsewhere.map(([n]) => n), [2]);
  const alert = N.saveAlert(facts({ refused: elsewhere, shown: 4 }));
  assert.equal(alert.text, "Case 2 was not saved: The study is closed. Your choice is kept as a draft on that case.");
  assert.deepEqual([alert.retry, alert.show, alert.ticks], [null, { number: 2, url: "/case/2/" }, false]);
  assert.deepEqual(N.refusedElsewhere(refused, 3).map(([n]) => n), [4, 2]);
});

test("the form's note: sending, not saved, a draft beside a saved answer, a draft", () => {
  const note = (extra) => N.formNote({ sending: false, trouble: false, refused: undefined, draft: false, answered: false, saved: "", mine: "", ...extra });
  assert.equal(note({}), null);
  assert.deepEqual(note({ sending: true }), { kind: "pending", text: "Sending this answer…" });
  assert.deepEqual(note({ sending: true, trouble: true }), { kind: "pending", text: "Not saved yet: it will be sent again (see the red notice)." });
  assert.deepEqual(note({ refused: { message: "closed.", conflict: false }, draft: true }), { kind: "refused", text: "Not saved: closed." });
  assert.deepEqual(note({ refused: { message: "other tab", conflict: true }, draft: true, answered: true, saved: "C", mine: "B" }),
    { kind: "conflict", text: "Saved: C · your draft: B" });
  assert.deepEqual(note({ draft: true, answered: true, saved: "C", mine: "C" }),
    { kind: "conflict", text: "Saved: C · your draft: C (ratings or comment changed)" });
  assert.deepEqual(note({ draft: true, answered: true, saved: "", mine: "" }), { kind: "conflict", text: "Saved: none · your draft: none (ratings or comment changed)" });
  assert.equal(note({ draft: true }).kind, "draft");
});

test("progress, pace and the break reminder in words", () => {
  assert.deepEqual(N.progress(3, 10), { label: "3 of 10 answered", answered: "3 / 10 answered", left: "7 left" });
  assert.equal(N.progress(12, 10).left, "0 left");
  assert.equal(N.progress(NaN, 10), null);
  assert.equal(N.paceSentence("about 20 min left at your pace"), "About 20 min left at your pace.");
  assert.equal(N.paceSentence(""), "");
  assert.equal(N.breakText(61.6 * 60000), "You have been reading for 62 min without a break. Time for a pause?");
});
