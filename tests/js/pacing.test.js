// The reading clock (issue 26, item 5): paused and hidden time never counts, a long enough
// interruption is a break, the reminder comes after the PI's minutes; and the reader's window
// preset is remembered per study, reader and modality (item 4).
// Run: node --test tests/js/   (make test-js)
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { Clock, BREAK_MS } = require("../../static/js/reader-clock.js");
const { Store } = require("../../static/js/reader-store.js");
const { MemoryStorage } = require("./memory-storage.js");

const MIN = 60 * 1000;

function fakeTime() {
  let t = 1000;
  return { now: () => t, advance: (ms) => { t += ms; } };
}

test("paused time is not the case's time", () => {
  const time = fakeTime();
  const clock = new Clock({ now: time.now });
  clock.startCase();
  time.advance(4000);
  clock.pause();
  time.advance(10 * MIN); // coffee
  clock.resume();
  time.advance(3000);
  assert.equal(clock.elapsed(), 7000);
});

test("a hidden page does not count, and a pause while hidden stays a pause", () => {
  const time = fakeTime();
  const clock = new Clock({ now: time.now });
  time.advance(1000);
  clock.setVisible(false);
  time.advance(5000);
  clock.pause();
  clock.setVisible(true); // back to the tab, still paused
  time.advance(5000);
  assert.equal(clock.elapsed(), 1000);
  clock.resume();
  time.advance(500);
  assert.equal(clock.elapsed(), 1500);
});

test("each case starts at zero while the reading time goes on", () => {
  const time = fakeTime();
  const clock = new Clock({ now: time.now });
  time.advance(20 * MIN);
  clock.startCase();
  time.advance(30 * 1000);
  assert.equal(clock.elapsed(), 30 * 1000);
  assert.equal(clock.reading(), 20 * MIN + 30 * 1000);
});

test("the break reminder is due after the PI's minutes of reading, never with 0", () => {
  const time = fakeTime();
  const clock = new Clock({ now: time.now });
  time.advance(59 * MIN);
  assert.equal(clock.breakDue(60), false);
  time.advance(MIN);
  assert.equal(clock.breakDue(60), true);
  assert.equal(clock.breakDue(0), false);
  clock.snooze(60); // "Later": another hour
  time.advance(30 * MIN);
  assert.equal(clock.breakDue(60), false);
});

test("a pause of BREAK_MS or more is a break; a short one is not", () => {
  const time = fakeTime();
  const clock = new Clock({ now: time.now });
  time.advance(50 * MIN);
  clock.pause();
  time.advance(BREAK_MS - 1000);
  clock.resume();
  assert.equal(clock.reading(), 50 * MIN);
  clock.pause();
  time.advance(BREAK_MS);
  clock.resume();
  assert.equal(clock.reading(), 0);
});

test("a preset choice is kept per study, reader and modality, and goes with another user", () => {
  const storage = new MemoryStorage();
  const mine = new Store("chest", "7", storage, 14);
  mine.savePreset("CR", "lung");
  assert.equal(mine.preset("CR"), "lung");
  assert.equal(mine.preset("DX"), null);
  assert.equal(new Store("other-study", "7", storage, 14).preset("CR"), null);
  new Store("chest", "8", storage, 14); // someone else opens the study in this browser
  assert.equal(new Store("chest", "7", storage, 14).preset("CR"), null);
});

test("a preset chosen in session 1 holds in session 2 of the same study; its drafts do not", () => {
  const storage = new MemoryStorage();
  const first = new Store("trial", "7", storage, 14, "L1", "trial");
  first.savePreset("CR", "lung");
  first.saveDraft(3, { choice: "B" });
  const second = new Store("trial:s2", "7", storage, 14, "L2", "trial"); // session 2, other arm
  assert.equal(second.preset("CR"), "lung");
  assert.equal(second.draft(3), null);
  assert.equal(new Store("trial-2", "7", storage, 14, "", "trial-2").preset("CR"), null);
});
