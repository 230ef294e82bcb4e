// The reader's answer outbox (static/js/reader-outbox.js) against a fake server: order, retry
// with backoff, CSRF refresh, sign-in, refusals, and answers kept across a reload.
// Run: node --test tests/js/   (make test-js)
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { Store } = require("../../static/js/reader-store.js");
const { Outbox, RETRY_FIRST_MS, RETRY_MAX_MS } = require("../../static/js/reader-outbox.js");
const { MemoryStorage } = require("./memory-storage.js");

const READER = "7";
const SESSION_URL = "/s/demo/session/";
const LOGIN_URL = "/accounts/login/";

/** A fake server: `handle(request)` answers each request; every request is kept, in order. */
function fakeServer(handle) {
  const requests = [];
  const fetch = async (url, init = {}) => {
    const body = init.body ? Object.fromEntries(new URLSearchParams(init.body.toString())) : null;
    const request = { url, method: init.method || "GET", headers: init.headers || {}, body };
    requests.push(request);
    return handle(request, requests);
  };
  return { fetch, requests, posts: () => requests.filter((r) => r.method === "POST" && r.url !== LOGIN_URL) };
}

/** A response as fetch gives it (the parts the outbox reads; Node's Response takes ~0.2 s to load). */
function response(body, status, headers) {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: { get: (name) => lower[name.toLowerCase()] ?? null },
    json: async () => JSON.parse(body),
    text: async () => body,
  };
}
const json = (data, status = 200, headers = {}) =>
  response(JSON.stringify(data), status, { "Content-Type": "application/json", ...headers });
const html = (text, status = 200) => response(text, status, { "Content-Type": "text/html" });
const receipt = (request) => json({ saved: true, progress: { answered: 1, total: 4 }, next: null, echo: request.body });

/** Timers that run only when the test says so, and a clock that moves with them. */
function fakeClock() {
  const clock = { t: 1000, timers: [], delays: [] };
  clock.now = () => clock.t;
  clock.setTimeout = (fn, ms) => { const timer = { fn, ms }; clock.timers.push(timer); clock.delays.push(ms); return timer; };
  clock.clearTimeout = (timer) => { clock.timers = clock.timers.filter((t) => t !== timer); };
  /** Runs the next timer (the retry), moving the clock to it. */
  clock.fire = () => {
    const timer = clock.timers.shift();
    assert.ok(timer, "a retry is scheduled");
    clock.t += timer.ms;
    timer.fn();
  };
  return clock;
}

let n = 0;
function entry(number, values = { choice: "A" }, extra = {}) {
  n += 1;
  return { id: `e${n}`, number, url: `/s/demo/read/${number}/answer/`, caseUrl: `/s/demo/read/${number}/`, values, base: { choice: "" }, time_ms: 1200, label: `${values.choice}.`, ...extra };
}

/** An outbox on a fresh (or the given) storage, recording every event it reports. */
function makeOutbox(server, { storage = new MemoryStorage(), clock = fakeClock(), online = () => true } = {}) {
  const store = new Store("demo", READER, storage);
  const outbox = new Outbox({
    store, reader: READER, csrf: "old-token", sessionUrl: SESSION_URL, fetch: server.fetch,
    setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout, now: clock.now, online,
  });
  const events = [];
  for (const type of ["saved", "refused", "waiting", "signin", "csrf", "drained"]) {
    outbox.on(type, (detail) => events.push({ type, ...detail }));
  }
  const types = () => events.map((e) => e.type);
  return { store, outbox, events, types, clock, storage };
}

test("a saved answer is sent once with its values, time and base, and leaves outbox and draft", async () => {
  const server = fakeServer(receipt);
  const { store, outbox, events, types } = makeOutbox(server);
  await outbox.add(entry(1, { choice: "B", comment: "apex" }));
  const [post] = server.posts();
  assert.deepEqual(post.body, { choice: "B", comment: "apex", time_ms: "1200", base: '{"choice":""}' });
  assert.equal(post.headers["X-CSRFToken"], "old-token");
  assert.deepEqual(types(), ["saved", "drained"]);
  assert.equal(events[0].data.progress.answered, 1);
  assert.equal(outbox.size, 0);
  assert.equal(store.draft(1), null); // the server has it: no draft left
});

test("answers are sent one at a time, in the order given", async () => {
  const held = [];
  const server = fakeServer((request) => new Promise((resolve) => held.push(() => resolve(receipt(request)))));
  const { outbox, types } = makeOutbox(server);
  outbox.add(entry(1, { choice: "A" }));
  outbox.add(entry(2, { choice: "B" }));
  const done = outbox.add(entry(3, { choice: "C" }));
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    assert.equal(held.length, i + 1, "the next answer waits for the receipt of the one before");
    held[i]();
  }
  await done;
  await outbox.idle;
  assert.deepEqual(server.posts().map((p) => p.body.choice), ["A", "B", "C"]);
  assert.deepEqual(types(), ["saved", "saved", "saved", "drained"]);
});

test("a server error is retried by itself with backoff, 1 s then 2 s, then saved", async () => {
  let calls = 0;
  const server = fakeServer((request) => (++calls <= 2 ? html("boom", 500) : receipt(request)));
  const { outbox, events, types, clock } = makeOutbox(server);
  await outbox.add(entry(1));
  const waiting = events.find((e) => e.type === "waiting");
  assert.match(waiting.message, /error 500/);
  assert.equal(waiting.retryAt, clock.t + RETRY_FIRST_MS);
  assert.equal(outbox.trouble.entry.number, 1);
  clock.fire();
  await outbox.idle;
  clock.fire();
  await outbox.idle;
  assert.deepEqual(clock.delays, [1000, 2000]);
  assert.deepEqual(types(), ["waiting", "waiting", "saved", "drained"]);
  assert.equal(outbox.trouble, null);
  assert.equal(server.posts().length, 3);
});

test("the backoff doubles up to 30 s, and Retry (or the connection back) sends at once", async () => {
  let up = false;
  const server = fakeServer((request) => (up ? receipt(request) : html("down", 503)));
  const { outbox, types, clock } = makeOutbox(server);
  await outbox.add(entry(1));
  for (let i = 0; i < 6; i++) { clock.fire(); await outbox.idle; }
  assert.deepEqual(clock.delays, [1000, 2000, 4000, 8000, 16000, RETRY_MAX_MS, RETRY_MAX_MS]);
  up = true;
  await outbox.retryNow();
  assert.equal(clock.timers.length, 0, "the scheduled retry is cancelled");
  assert.equal(types().at(-2), "saved");
  // A new failure starts the backoff again from 1 s.
  up = false;
  await outbox.add(entry(2));
  assert.equal(clock.delays.at(-1), RETRY_FIRST_MS);
});

test("answers made offline wait in order and are all sent, in order, when the connection returns", async () => {
  let offline = true;
  const server = fakeServer((request) => {
    if (offline) throw new TypeError("Failed to fetch");
    return receipt(request);
  });
  const { outbox, events, types } = makeOutbox(server, { online: () => !offline });
  await outbox.add(entry(1, { choice: "B" }));
  await outbox.add(entry(2, { choice: "D" }));
  await outbox.add(entry(3, { choice: "A" }));
  assert.equal(outbox.size, 3);
  assert.ok(events.filter((e) => e.type === "waiting").every((e) => e.entry.number === 1 && e.message === "this computer is offline"));
  assert.equal(server.posts().filter((p) => p.body.choice !== "B").length, 0, "only the head was tried");
  offline = false;
  await outbox.retryNow();
  assert.deepEqual(server.posts().slice(-3).map((p) => p.body.choice), ["B", "D", "A"]);
  assert.deepEqual(types().filter((t) => t !== "waiting"), ["saved", "saved", "saved", "drained"]);
});

test("a rejected CSRF token is refreshed once from the session, and the answer sent again with it", async () => {
  const server = fakeServer((request) => {
    if (request.url === SESSION_URL) return json({ reader: READER, username: "resident", csrf: "fresh-token" });
    if (request.headers["X-CSRFToken"] !== "fresh-token") return json({ error: "CSRF", csrf: true }, 403, { "X-CSRF-Failed": "1" });
    return receipt(request);
  });
  const { outbox, events, types } = makeOutbox(server);
  await outbox.add(entry(1));
  assert.deepEqual(server.requests.map((r) => [r.method, r.url === SESSION_URL ? "session" : "answer"]),
    [["POST", "answer"], ["GET", "session"], ["POST", "answer"]]);
  assert.deepEqual(types(), ["csrf", "saved", "drained"]);
  assert.equal(events[0].token, "fresh-token"); // the page's own requests take it too
});

test("a CSRF failure that a fresh token does not cure asks to sign in instead of looping", async () => {
  const server = fakeServer((request) =>
    request.url === SESSION_URL ? json({ reader: READER, csrf: "fresh-token" }) : json({ error: "CSRF" }, 403, { "X-CSRF-Failed": "1" }));
  const { outbox, types, clock } = makeOutbox(server);
  await outbox.add(entry(1));
  assert.equal(server.posts().length, 2);
  assert.deepEqual(types(), ["csrf", "waiting", "signin"]);
  assert.equal(outbox.needSignIn, true);
  assert.equal(clock.timers.length, 0);
});

test("a session for another reader (signed in in another tab) is never used to send", async () => {
  const server = fakeServer((request) =>
    request.url === SESSION_URL ? json({ reader: "99", csrf: "theirs" }) : json({ error: "CSRF" }, 403, { "X-CSRF-Failed": "1" }));
  const { outbox, types } = makeOutbox(server);
  await outbox.add(entry(1));
  assert.deepEqual(types(), ["signin", "waiting"]);
  assert.equal(outbox.csrf, "old-token");
  assert.equal(server.posts().length, 1);
});

for (const [name, respond] of [
  ["401", () => json({ error: "Your session has ended." }, 401, { "X-Login-Required": "1" })],
  ["the sign-in page after a redirect", () => html("<form>login</form>")],
]) {
  test(`an ended session (${name}) waits for sign-in, then sends what waited`, async () => {
    let signedIn = false;
    const server = fakeServer((request) => {
      if (request.url === LOGIN_URL && request.method === "GET") {
        return html('<form><input type="hidden" name="csrfmiddlewaretoken" value="login-token"></form>');
      }
      if (request.url === LOGIN_URL) {
        signedIn = request.body.password === "right";
        return signedIn ? json({ reader: READER, username: "resident", csrf: "after-login" }) : html('<p role="alert">Wrong password.</p>', 200);
      }
      return signedIn ? receipt(request) : respond();
    });
    const { outbox, events, types, clock } = makeOutbox(server);
    await outbox.add(entry(1));
    await outbox.add(entry(2));
    assert.deepEqual(types(), ["waiting", "signin"]);
    assert.equal(events[0].signIn, true);
    assert.equal(clock.timers.length, 0, "no retry while signed out");
    assert.equal(server.posts().length, 1, "nothing more is sent while signed out");
    await outbox.retryNow(); // Retry asks to sign in again
    assert.equal(types().at(-1), "signin");

    const failed = await outbox.signIn(LOGIN_URL, { username: "resident", password: "wrong" });
    assert.equal(failed.kind, "failed");
    assert.match(failed.html, /Wrong password/);
    assert.equal(outbox.needSignIn, true);

    const ok = await outbox.signIn(LOGIN_URL, new URLSearchParams({ username: "resident", password: "right" }));
    assert.equal(ok.kind, "ok");
    const login = server.requests.filter((r) => r.url === LOGIN_URL && r.method === "POST").at(-1);
    assert.deepEqual(login.body, { username: "resident", password: "right", csrfmiddlewaretoken: "login-token", next: SESSION_URL });
    await outbox.idle;
    assert.deepEqual(server.posts().slice(-2).map((p) => [p.url, p.headers["X-CSRFToken"]]),
      [["/s/demo/read/1/answer/", "after-login"], ["/s/demo/read/2/answer/", "after-login"]]);
    assert.deepEqual(types().slice(-3), ["saved", "saved", "drained"]);
  });
}

test("signing in as someone else sends nothing and says whose answers these are", async () => {
  const server = fakeServer((request) => {
    if (request.url === LOGIN_URL) return request.method === "GET" ? html("") : json({ reader: "99", username: "other", csrf: "x" });
    return json({ error: "ended" }, 401);
  });
  const { outbox } = makeOutbox(server);
  await outbox.add(entry(1));
  const result = await outbox.signIn(LOGIN_URL, { username: "other", password: "p" });
  assert.deepEqual(result, { kind: "other-reader", username: "other" });
  assert.equal(outbox.needSignIn, true);
  assert.equal(outbox.csrf, "old-token");
  assert.equal(server.posts().length, 1);
});

test("a stale answer (409: answered elsewhere) is refused in words, kept as a draft and never sent again", async () => {
  const server = fakeServer((request) =>
    request.url.includes("/read/1/") ? json({ error: "This case was answered elsewhere: the saved answer is C.", saved: { choice: "C" } }, 409) : receipt(request));
  const { store, outbox, events, types, clock } = makeOutbox(server);
  outbox.add(entry(1, { choice: "B" }));
  await outbox.add(entry(2, { choice: "D" }));
  await outbox.idle;
  assert.deepEqual(types(), ["refused", "saved", "drained"]);
  assert.equal(events[0].message, "This case was answered elsewhere: the saved answer is C.");
  assert.deepEqual(events[0].saved, { choice: "C" }); // what the server holds, for the page to show
  assert.equal(clock.timers.length, 0, "no retry");
  assert.deepEqual(store.draft(1).values, { choice: "B" }); // the reader's choice is kept
  await outbox.retryNow();
  assert.equal(server.posts().filter((p) => p.url.includes("/read/1/")).length, 1);
});

test("a refused answer does not replace a newer draft of the same case", async () => {
  const server = fakeServer(() => json({ error: "answered elsewhere" }, 409));
  const { store, outbox } = makeOutbox(server);
  const sent = outbox.add(entry(1, { choice: "B" }));
  store.saveDraft(1, { choice: "D" }); // the reader changed the case while the save was out
  await sent;
  assert.deepEqual(store.draft(1).values, { choice: "D" });
});

test("validation and access refusals (400, 403, 404, 422) are refused with the server's or a plain reason", async () => {
  const answers = {
    1: json({ error: "Choose one of the options." }, 422),
    2: html("bad", 400),
    3: html("gone", 404),
    4: html("no", 403),
  };
  const server = fakeServer((request) => answers[request.url.split("/")[4]]);
  const { outbox, events, clock } = makeOutbox(server);
  for (const number of [1, 2, 3, 4]) outbox.add(entry(number));
  await outbox.idle;
  assert.deepEqual(events.filter((e) => e.type === "refused").map((e) => e.message), [
    "Choose one of the options.",
    "the server did not accept this answer.",
    "this case is no longer in your study.",
    "you no longer have access to this study.",
  ]);
  assert.equal(outbox.size, 0);
  assert.equal(clock.timers.length, 0);
  assert.equal(events.at(-1).type, "drained");
});

test("a newer answer for a case replaces its unsent older one, and a second send never starts", async () => {
  let offline = true;
  const server = fakeServer((request) => { if (offline) throw new TypeError("offline"); return receipt(request); });
  const { outbox } = makeOutbox(server);
  await outbox.add(entry(1, { choice: "A" }));
  await outbox.add(entry(2, { choice: "B" }));
  await outbox.add(entry(1, { choice: "C" })); // changed case 1 before it was saved
  assert.deepEqual(outbox.entries().map((e) => [e.number, e.values.choice]), [[2, "B"], [1, "C"]]);
  offline = false;
  const before = server.requests.length;
  // Many triggers at once (Retry, the connection back, a new answer): one round of sending.
  await Promise.all([outbox.retryNow(), outbox.pump(), outbox.pump()]);
  assert.deepEqual(server.requests.slice(before).map((r) => r.body.choice), ["B", "C"]);
});

test("answers waiting when the page is closed are sent, in order, by the next page (a reload)", async () => {
  const storage = new MemoryStorage();
  const down = fakeServer(() => { throw new TypeError("Failed to fetch"); });
  const first = makeOutbox(down, { storage });
  await first.outbox.add(entry(1, { choice: "B" }));
  await first.outbox.add(entry(2, { choice: "D" }));

  const server = fakeServer(receipt);
  const reloaded = makeOutbox(server, { storage }); // a new page: new store, new outbox, same browser
  assert.equal(reloaded.outbox.size, 2);
  assert.deepEqual(reloaded.store.draft(2).values, { choice: "D" });
  await reloaded.outbox.pump();
  assert.deepEqual(server.posts().map((p) => [p.url, p.body.choice]), [["/s/demo/read/1/answer/", "B"], ["/s/demo/read/2/answer/", "D"]]);
  assert.deepEqual(reloaded.types(), ["saved", "saved", "drained"]);
  assert.equal(new Store("demo", READER, storage).outbox().length, 0);
  assert.equal(new Store("demo", "8", storage).outbox().length, 0, "another reader's store never sees them");
});

test("a listener that throws (a rendering bug) never stops the answers after it being sent", async (t) => {
  t.mock.method(console, "error", () => {});
  const server = fakeServer(receipt);
  const { outbox, types } = makeOutbox(server);
  outbox.on("saved", () => { throw new Error("the page could not draw"); });
  outbox.add(entry(1));
  await outbox.add(entry(2));
  await outbox.idle;
  assert.equal(server.posts().length, 2);
  assert.deepEqual(types(), ["saved", "saved", "drained"]);
  assert.equal(console.error.mock.calls.length, 2);
});

test("an empty outbox sends nothing and reports no drain", async () => {
  const server = fakeServer(receipt);
  const { outbox, types } = makeOutbox(server);
  await outbox.pump();
  assert.equal(server.requests.length, 0);
  assert.deepEqual(types(), []);
});

test("an answer refused because the design changed is not kept as a draft on the new layout", async () => {
  // Sent offline from a page made under the old design (layout "old"), then sent by a page
  // under the new one: the server refuses it in words; case 1 may be another X-ray now, or
  // its B another option, so the old choice must not come back as case 1's draft.
  const storage = new MemoryStorage();
  const down = fakeServer(() => { throw new TypeError("Failed to fetch"); });
  const oldStore = new Store("demo", READER, storage, 14, "old");
  const oldOutbox = new Outbox({ store: oldStore, reader: READER, csrf: "t", sessionUrl: SESSION_URL, fetch: down.fetch, setTimeout: () => null, clearTimeout: () => {} });
  await oldOutbox.add(entry(1, { choice: "B" }, { url: "/s/demo/read/1/answer/?layout=old" }));

  const server = fakeServer(() => json({ error: "The study's design was changed since this page was shown." }, 409));
  const store = new Store("demo", READER, storage, 14, "new");
  const outbox = new Outbox({ store, reader: READER, csrf: "t", sessionUrl: SESSION_URL, fetch: server.fetch });
  const events = [];
  outbox.on("refused", (detail) => events.push(detail));
  await outbox.pump();
  assert.equal(events.length, 1, "refused in words");
  assert.match(events[0].message, /design was changed/);
  assert.equal(outbox.size, 0);
  assert.equal(store.draft(1), null, "the old answer is no draft of the new case 1");
  assert.equal(new Store("demo", READER, storage, 14, "new").draft(1), null);
});

test("a confidence rating travels with its answer, waits offline across a reload, and one off the scale is refused in the server's words and kept as a draft", async () => {
  let offline = true;
  const refusal = "Rate your confidence with a whole number from 1 to 5.";
  const server = fakeServer((request) => {
    if (offline) throw new TypeError("Failed to fetch");
    return request.body.confidence === "7" ? json({ error: refusal, field: "confidence" }, 422) : receipt(request);
  });
  const storage = new MemoryStorage();
  const first = makeOutbox(server, { storage, online: () => !offline });
  await first.outbox.add(entry(1, { choice: "B", confidence: "4" }));
  await first.outbox.add(entry(2, { choice: "A", confidence: "7" }));
  assert.equal(first.outbox.size, 2);
  const tried = server.posts().length; // the attempts while offline
  offline = false; // the page is reloaded with the connection back: the next page sends them
  const { outbox, events, store } = makeOutbox(server, { storage });
  await outbox.retryNow();
  await outbox.idle;
  const sent = server.posts().slice(tried).map((p) => [p.body.choice, p.body.confidence]);
  assert.deepEqual(sent, [["B", "4"], ["A", "7"]]);
  const refused = events.filter((e) => e.type === "refused");
  assert.deepEqual(refused.map((e) => e.message), [refusal]);
  assert.equal(refused[0].entry.number, 2);
  assert.deepEqual(store.draft(2).values, { choice: "A", confidence: "7" }); // kept to correct
  assert.equal(store.draft(1), null);
});
