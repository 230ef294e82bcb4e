// The reading page's keys (static/js/reader-keys.js): what each key does in each state of the
// page (paused, a dialog open, typing, shortcuts off, the case not seen yet, submitted and
// waiting for the next case, the question hidden). The keys come from the markup, as the page
// gives them; the browser tests (tests/browser/) press them on the real page.
// Run: node --test tests/js/   (make test-js)
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { decide, NOT_SEEN } = require("../../static/js/reader-keys.js");

const radio = { tagName: "INPUT", type: "radio" };
const textarea = { tagName: "TEXTAREA", type: "textarea" };
const button = { tagName: "BUTTON" };

/** A reading page as the markup makes it: options a-d, comment key k, Pause p, Review r. */
function page(overrides = {}) {
  const options = { a: { value: "A" }, b: { value: "B" }, c: { value: "C" }, d: { value: "D" } };
  const comment = { el: textarea, disabled: false };
  return {
    paused: () => false,
    pauseKey: () => "p",
    dialog: () => null,
    inForm: (t) => t === textarea || t === radio,
    typing: (t) => !!t && t.tagName === "TEXTAREA",
    shortcutsOn: () => true,
    reviewLink: () => ({ key: "r", href: "/review/" }),
    comment: (key) => (key === "k" ? comment : null),
    questionHidden: () => false,
    practiceNext: () => null,
    seen: () => true,
    keyed: (key) => options[key] || null,
    leaving: () => null,
    shownNumber: () => 3,
    navLink: (dir) => ({ href: `/case/${dir === "prev" ? 2 : 4}/` }),
    ...overrides,
  };
}

function press(k, extra = {}) { return { key: k, target: null, ...extra }; }

test("an answer key chooses its option, Enter submits, arrows go between cases", () => {
  assert.deepEqual(decide(press("b"), page()), { act: "choose", input: { value: "B" }, prevent: true });
  assert.deepEqual(decide(press("B"), page()), { act: "choose", input: { value: "B" }, prevent: true });
  assert.deepEqual(decide(press("Enter"), page()), { act: "submit", prevent: true });
  assert.deepEqual(decide(press("ArrowLeft"), page()), { act: "go", url: "/case/2/", prevent: true });
  assert.deepEqual(decide(press("ArrowRight"), page()), { act: "go", url: "/case/4/", prevent: true });
  assert.deepEqual(decide(press("ArrowRight"), page({ navLink: () => null })), { act: "none", prevent: false });
});

test("the page's own keys: help, the question panel, pause, the review page", () => {
  assert.equal(decide(press("?"), page()).act, "help");
  assert.equal(decide(press("q"), page()).act, "panel");
  assert.equal(decide(press("p"), page()).act, "pause");
  assert.deepEqual(decide(press("r"), page()), { act: "follow", url: "/review/", prevent: true });
  assert.equal(decide(press("r"), page({ reviewLink: () => null })).act, "viewer");
});

test("other keys are the viewer's", () => {
  assert.deepEqual(decide(press("i"), page()), { act: "viewer", prevent: false });
  assert.equal(decide(press(" "), page()).act, "viewer");
  assert.equal(decide(press("!", { shiftKey: true, code: "Digit1" }), page()).act, "viewer");
});

test("an answer key before the case has been seen for the dwell does nothing but say why", () => {
  const notSeen = page({ seen: () => false });
  assert.deepEqual(decide(press("a"), notSeen), { act: "note", text: NOT_SEEN, prevent: true });
  assert.deepEqual(decide(press("Enter"), notSeen), { act: "note", text: NOT_SEEN, prevent: true });
  // The viewer's keys and the arrows never wait.
  assert.equal(decide(press("i"), notSeen).act, "viewer");
  assert.equal(decide(press("ArrowRight"), notSeen).act, "go");
});

test("after Enter, answer keys wait for the next case, and say which and why", () => {
  const opening = page({ leaving: () => ({ nextNumber: "4", waiting: false }) });
  assert.equal(decide(press("a"), opening).text, "Case 3 is submitted; case 4 is opening. Answer keys wait until it is on screen.");
  const offline = page({ leaving: () => ({ nextNumber: "", waiting: true }) });
  assert.equal(decide(press("Enter"), offline).text,
    "Case 3 is submitted; the next case opens by itself once it can be fetched. Answer keys wait until then.");
  assert.equal(decide(press("Enter"), offline).act, "note");
});

test("with the question hidden, answer keys and the comment key only say so", () => {
  const hidden = page({ questionHidden: () => true });
  assert.deepEqual(decide(press("a"), hidden), { act: "note", text: null, prevent: true });
  assert.deepEqual(decide(press("Enter"), hidden), { act: "note", text: null, prevent: true });
  assert.deepEqual(decide(press("k"), hidden), { act: "note", text: null, prevent: true });
  assert.equal(decide(press("q"), hidden).act, "panel");
});

test("the comment key focuses the comment, unless it is disabled; the key is never typed", () => {
  assert.deepEqual(decide(press("k"), page()), { act: "focus", el: textarea, prevent: true });
  const locked = page({ comment: () => ({ el: textarea, disabled: true }) });
  assert.deepEqual(decide(press("k"), locked), { act: "none", prevent: true });
});

test("in the comment keys are typed; Esc leaves it, Ctrl+Enter submits unless already submitted", () => {
  assert.deepEqual(decide(press("a", { target: textarea }), page()), { act: "none", prevent: false });
  assert.deepEqual(decide(press("Enter", { target: textarea }), page()), { act: "none", prevent: false });
  assert.deepEqual(decide(press("Escape", { target: textarea }), page()), { act: "blur", target: textarea, prevent: false });
  assert.deepEqual(decide(press("Enter", { target: textarea, ctrlKey: true }), page()), { act: "submit", prevent: true });
  assert.deepEqual(decide(press("Enter", { target: textarea, metaKey: true }), page()), { act: "submit", prevent: true });
  const leaving = page({ leaving: () => ({ nextNumber: "4", waiting: false }) });
  assert.deepEqual(decide(press("Enter", { target: textarea, ctrlKey: true }), leaving), { act: "none", prevent: true });
});

test("with a modifier no shortcut acts (the browser's own keys stay)", () => {
  for (const mod of ["ctrlKey", "metaKey", "altKey"]) {
    assert.deepEqual(decide(press("a", { [mod]: true }), page()), { act: "none", prevent: false });
  }
  assert.deepEqual(decide(press("Enter", { ctrlKey: true }), page()), { act: "none", prevent: false });
});

test("paused: only the pause key or Esc resumes; every other key but Tab is swallowed", () => {
  const paused = page({ paused: () => true });
  assert.deepEqual(decide(press("p"), paused), { act: "resume", prevent: true });
  assert.deepEqual(decide(press("P"), paused), { act: "resume", prevent: true });
  assert.deepEqual(decide(press("Escape"), paused), { act: "resume", prevent: true });
  assert.deepEqual(decide(press("p", { ctrlKey: true }), paused), { act: "none", prevent: true });
  assert.deepEqual(decide(press("a"), paused), { act: "none", prevent: true });
  assert.deepEqual(decide(press("Enter"), paused), { act: "none", prevent: true });
  assert.deepEqual(decide(press("Tab"), paused), { act: "none", prevent: false });
});

test("an open dialog takes every key; Esc closes it", () => {
  const help = { id: "help" };
  const open = page({ dialog: () => help });
  assert.deepEqual(decide(press("Escape"), open), { act: "close-dialog", dialog: help, prevent: true });
  assert.deepEqual(decide(press("a"), open), { act: "none", prevent: false });
  assert.deepEqual(decide(press("Enter"), open), { act: "none", prevent: false });
});

test("shortcuts off: an ordinary form (no key acts, arrows stay the browser's)", () => {
  const off = page({ shortcutsOn: () => false });
  for (const k of ["a", "Enter", "q", "ArrowRight", "i"]) assert.deepEqual(decide(press(k), off), { act: "none", prevent: false });
});

test("arrows on a focused option never change it: they move between cases or do nothing", () => {
  assert.deepEqual(decide(press("ArrowDown", { target: radio }), page()), { act: "viewer", prevent: true });
  assert.deepEqual(decide(press("ArrowRight", { target: radio }), page()), { act: "go", url: "/case/4/", prevent: true });
  assert.deepEqual(decide(press("ArrowRight", { target: radio }), page({ navLink: () => null })), { act: "none", prevent: true });
});

test("Enter on a button or a link is the button's or the link's", () => {
  assert.deepEqual(decide(press("Enter", { target: button }), page()), { act: "none", prevent: false });
  assert.deepEqual(decide(press("Enter", { target: { tagName: "A" } }), page()), { act: "none", prevent: false });
  assert.equal(decide(press("a", { target: button }), page()).act, "choose");
});

test("a practice case's feedback: Enter goes on to the next case once seen", () => {
  const next = { tagName: "A", href: "/case/4/?practice" };
  const feedback = page({ practiceNext: () => next });
  assert.deepEqual(decide(press("Enter"), feedback), { act: "go", url: "/case/4/?practice", prevent: true });
  assert.deepEqual(decide(press("Enter", { target: next }), feedback), { act: "go", url: "/case/4/?practice", prevent: true });
  assert.deepEqual(decide(press("Enter"), page({ practiceNext: () => next, seen: () => false })), { act: "note", text: NOT_SEEN, prevent: true });
  assert.deepEqual(decide(press("Enter", { target: button }), feedback), { act: "none", prevent: false });
  assert.deepEqual(decide(press("Enter", { target: { tagName: "A" } }), feedback), { act: "none", prevent: false });
});

test("a fine confidence scale: its key moves into the box, where digits are typed and Enter submits", () => {
  const box = { tagName: "INPUT", type: "number" };
  const confidence = { el: box, disabled: false };
  const rated = page({
    comment: (key) => (key === "s" ? confidence : null),
    inForm: (t) => t === box || t === radio,
    typing: (t) => !!t && t.tagName === "INPUT" && t.type === "number",
  });
  assert.deepEqual(decide(press("s"), rated), { act: "focus", el: box, prevent: true });
  assert.deepEqual(decide(press("7", { target: box }), rated), { act: "none", prevent: false });
  assert.deepEqual(decide(press("Enter", { target: box }), rated), { act: "submit", prevent: true });
  assert.deepEqual(decide(press("Escape", { target: box }), rated), { act: "blur", target: box, prevent: false });
  const leaving = page({ ...rated, leaving: () => ({ nextNumber: "4", waiting: false }) });
  assert.deepEqual(decide(press("Enter", { target: box }), leaving), { act: "none", prevent: true });
});
