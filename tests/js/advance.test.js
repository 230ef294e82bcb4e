// Offline, then back (issue 34): the case after Enter opens by itself once it can
// (static/js/reader-advance.js), the answers given offline reach the server once each and in
// order as first answers (reader-outbox.js), and the wait is nobody's reading time
// (reader-clock.js `wait`).
// Run: node --test tests/js/   (make test-js)
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { Advance, SHOWN, MOVED, UNREACHABLE, RETRY_FIRST_MS, RETRY_MAX_MS } = require("../../static/js/reader-advance.js");
const { Clock } = require("../../static/js/reader-clock.js");
const { Store } = require("../../static/js/reader-store.js");
const { Outbox } = require("../../static/js/reader-outbox.js");
const { MemoryStorage } = require("./memory-storage.js");

/** Timers that run when the test says so, and a clock that moves with them. */
function fakeTimers() {
  const t = { now: 1000, timers: [] };
  t.setTimeout = (fn, ms) => { const timer = { fn, ms, at: t.now + ms }; t.timers.push(timer); return timer; };
  t.clearTimeout = (timer) => { t.timers = t.timers.filter((x) => x !== timer); };
  t.fire = () => {
    const timer = t.timers.shift();
    assert.ok(timer, "a retry is scheduled");
    t.now = timer.at;
    timer.fn();
  };
  return t;
}

/** A page that can open a case only while `online`: records every case it was asked for. */
function fakePage() {
  const page = { online: false, asked: [], shown: [] };
  page.open = async (url) => {
    page.asked.push(url);
    if (!page.online) return UNREACHABLE;
    page.shown.push(url);
    return SHOWN;
  };
  return page;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function advanceFor(page, timers) {
  const events = [];
  const advance = new Advance({ open: page.open, setTimeout: timers.setTimeout, clearTimeout: timers.clearTimeout, now: () => timers.now });
  for (const type of ["change", "shown", "finish"]) advance.on(type, (detail) => events.push({ type, ...detail }));
  return { advance, events };
}

test("a stalled next case is tried again after 1, 2, 4 … s, at most 30 s, and opens once online", async () => {
  const page = fakePage(), timers = fakeTimers();
  const { advance, events } = advanceFor(page, timers);
  advance.stall("e6", "/s/demo/read/7/", 7);
  assert.equal(advance.waiting.number, 7);
  const delays = [];
  for (let i = 0; i < 7; i += 1) {
    delays.push(timers.timers[0].ms);
    timers.fire();
    await settle();
  }
  assert.deepEqual(delays, [RETRY_FIRST_MS, 2000, 4000, 8000, 16000, RETRY_MAX_MS, RETRY_MAX_MS]);
  assert.ok(advance.waiting, "still waiting while offline");
  page.online = true;
  await advance.retryNow(); // the "online" event
  assert.deepEqual(page.shown, ["/s/demo/read/7/"]);
  assert.equal(advance.waiting, null);
  assert.equal(timers.timers.length, 0, "no retry left behind");
  assert.deepEqual(events.filter((e) => e.type === "shown"), [{ type: "shown", entryId: "e6" }]);
});

test("the connection coming back and the receipt arriving together open the next case once", async () => {
  const page = fakePage(), timers = fakeTimers();
  const { advance } = advanceFor(page, timers);
  advance.stall("e6", "/s/demo/read/7/", 7);
  page.online = true;
  const first = advance.retryNow();
  advance.saved("e6", { saved: 6, next: 7, next_url: "/s/demo/read/7/" });
  advance.retryNow();
  await first;
  await settle();
  assert.deepEqual(page.shown, ["/s/demo/read/7/"]);
});

test("the receipt's next case is the one opened (the server decides), and none left is the review page", async () => {
  const page = fakePage(), timers = fakeTimers();
  const { advance, events } = advanceFor(page, timers);
  advance.stall("e6", "/s/demo/read/7/", 7);
  advance.saved("e5", { next: 6, next_url: "/s/demo/read/6/" }); // another entry's receipt: ignored
  assert.equal(advance.waiting.url, "/s/demo/read/7/");
  page.online = true;
  advance.saved("e6", { next: 9, next_url: "/s/demo/read/9/" }); // 7 and 8 were answered in another tab
  await settle();
  assert.deepEqual(page.shown, ["/s/demo/read/9/"]);

  const second = advanceFor(fakePage(), fakeTimers());
  second.advance.stall("e9", "/s/demo/read/10/", 10);
  second.advance.saved("e9", { next: null, next_url: null, review_url: "/s/demo/read/review/" });
  assert.equal(second.advance.waiting, null);
  assert.deepEqual(second.events.filter((e) => e.type === "finish"), [{ type: "finish", url: "/s/demo/read/review/" }]);
  assert.ok(events.some((e) => e.type === "shown"));
});

test("a reader who went elsewhere meanwhile is not moved again", async () => {
  const timers = fakeTimers();
  const page = { asked: [], open: async (url) => { page.asked.push(url); return MOVED; } };
  const { advance } = advanceFor(page, timers);
  advance.stall("e6", "/s/demo/read/7/", 7);
  await advance.retryNow();
  assert.equal(advance.waiting, null);
  assert.equal(timers.timers.length, 0);
  advance.stall("e7", "/s/demo/read/8/", 8);
  advance.cancel(); // the reader pressed ← meanwhile
  assert.equal(advance.waiting, null);
  assert.equal(timers.timers.length, 0);
  await advance.retryNow();
  assert.deepEqual(page.asked, ["/s/demo/read/7/"]);
});

test("waiting for the next case is neither case's reading time", () => {
  let t = 0;
  const clock = new Clock({ now: () => t });
  clock.startCase(); // case 6 shown
  t += 8000;
  assert.equal(clock.elapsed(), 8000); // submitted with 8 s
  clock.wait(true); // Enter: case 7 cannot be opened (offline)
  t += 40000;
  assert.equal(clock.elapsed(), 8000, "the wait is not case 6's time");
  clock.wait(false); // case 7 on screen
  clock.startCase();
  t += 5000;
  assert.equal(clock.elapsed(), 5000, "nor case 7's");
  assert.equal(clock.reading(), 13000);
});

test("two answers given offline are sent in order once online, as first answers with their own times", async () => {
  const storage = new MemoryStorage();
  const store = new Store("demo", "7", storage);
  const posts = [];
  let online = false;
  const fetch = async (url, init) => {
    if (!online) throw new TypeError("Failed to fetch");
    const body = Object.fromEntries(new URLSearchParams(init.body.toString()));
    posts.push({ url, body });
    const number = Number(/read\/(\d+)\//.exec(url)[1]);
    return {
      status: 201, ok: true,
      headers: { get: (name) => (name.toLowerCase() === "content-type" ? "application/json" : null) },
      json: async () => ({ saved: number, changed: true, next: number + 1, next_url: `/s/demo/read/${number + 1}/` }),
    };
  };
  const timers = fakeTimers();
  const outbox = new Outbox({ store, reader: "7", csrf: "t", sessionUrl: "/s/demo/read/session/", fetch, setTimeout: timers.setTimeout, clearTimeout: timers.clearTimeout, now: () => timers.now, online: () => online });
  const saved = [];
  outbox.on("saved", ({ entry }) => saved.push(entry.number));
  const first = (number, choice, time) => ({ id: `e${number}`, number, url: `/s/demo/read/${number}/answer/`, values: { choice }, base: { choice: "" }, time_ms: time });
  await outbox.add(first(5, "A", 7900));
  await outbox.add(first(6, "C", 8300));
  assert.equal(outbox.size, 2);
  assert.equal(outbox.trouble.message, "this computer is offline");
  online = true;
  await outbox.retryNow();
  assert.deepEqual(saved, [5, 6]);
  assert.deepEqual(posts.map((p) => [p.url, p.body.choice, p.body.time_ms, p.body.base]), [
    ["/s/demo/read/5/answer/", "A", "7900", JSON.stringify({ choice: "" })],
    ["/s/demo/read/6/answer/", "C", "8300", JSON.stringify({ choice: "" })],
  ]);
  assert.equal(outbox.size, 0);
});
