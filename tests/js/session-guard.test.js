// Expert and PI pages: an ended session is signed in again in place before a form posts
// (issue 26, item 9). Run: node --test tests/js/   (make test-js)
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { SessionGuard, tokenIn } = require("../../static/js/session-guard.js");

function response(status, body, type = "application/json") {
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: { get: (name) => (name.toLowerCase() === "content-type" ? type : null) },
    json: async () => JSON.parse(body),
    text: async () => body,
  };
}

function guard(routes) {
  const calls = [];
  const fetch = async (url, options = {}) => {
    calls.push({ url, options });
    const route = routes[`${options.method || "GET"} ${url}`];
    if (route instanceof Error) throw route;
    return route();
  };
  return { guard: new SessionGuard({ fetch, sessionUrl: "/accounts/session/", loginUrl: "/accounts/login/", user: 7 }), calls };
}

test("the page's own user gets a fresh token and the form may go", async () => {
  const { guard: g } = guard({ "GET /accounts/session/": () => response(200, '{"user": 7, "username": "boss", "csrf": "fresh"}') });
  assert.deepEqual(await g.check(), { kind: "ok", csrf: "fresh" });
});

test("an ended session asks to sign in; another user in this browser is said by name", async () => {
  let { guard: g } = guard({ "GET /accounts/session/": () => response(401, '{"user": null}') });
  assert.deepEqual(await g.check(), { kind: "signin" });
  ({ guard: g } = guard({ "GET /accounts/session/": () => response(200, '{"user": 8, "username": "other", "csrf": "x"}') }));
  assert.deepEqual(await g.check(), { kind: "other-user", username: "other" });
});

test("an unreachable server lets the form go as it would without the script", async () => {
  const { guard: g } = guard({ "GET /accounts/session/": new TypeError("offline") });
  assert.deepEqual(await g.check(), { kind: "unreachable" });
});

test("signing in posts the login form's token with next = the session URL", async () => {
  const login = '<form><input type="hidden" name="csrfmiddlewaretoken" value="login-token"></form>';
  const { guard: g, calls } = guard({
    "GET /accounts/login/": () => response(200, login, "text/html"),
    "POST /accounts/login/": () => response(200, '{"user": 7, "username": "boss", "csrf": "after"}'),
  });
  const result = await g.signIn(new URLSearchParams({ username: "boss", password: "pw" }));
  assert.deepEqual(result, { kind: "ok", csrf: "after" });
  const body = calls[1].options.body;
  assert.equal(body.get("csrfmiddlewaretoken"), "login-token");
  assert.equal(body.get("next"), "/accounts/session/");
  assert.equal(body.get("password"), "pw");
});

test("a wrong password returns the login page for its message; nothing is sent", async () => {
  const { guard: g } = guard({
    "GET /accounts/login/": () => response(200, "<input name=\"csrfmiddlewaretoken\" value=\"t\">", "text/html"),
    "POST /accounts/login/": () => response(200, '<p role="alert">Wrong password.</p>', "text/html"),
  });
  const result = await g.signIn(new URLSearchParams({ username: "boss", password: "no" }));
  assert.equal(result.kind, "failed");
  assert.match(result.html, /Wrong password/);
  assert.equal(tokenIn('<input name="csrfmiddlewaretoken" value="abc">'), "abc");
});
