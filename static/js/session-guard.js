/* An ended session on an expert or PI page is signed in again in place, and the form the
 * user sent is then sent: not "403 This form has expired".
 *
 * Before a form posts (a plain form, or an htmx request other than GET), the page asks the
 * session URL who is signed in:
 * - the page's user: the page takes the fresh CSRF token (every form's hidden field and
 *   htmx's header) and the form goes as the user sent it (its submit button included);
 * - nobody (401): a sign-in dialog over the page; once signed in as the page's user, the
 *   form goes, with the new session's token;
 * - someone else (another tab signed in as another person): the dialog says so and sends
 *   nothing until the page's user signs in;
 * - the server cannot be reached: the form goes as it would have without this script.
 *
 * The reader's page has its own outbox with the same sign-in (reader-outbox.js) and is left
 * alone. `SessionGuard` has no DOM code: Node's tests give it a fake fetch (tests/js/).
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.SessionGuard = api;
  if (typeof document !== "undefined") {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => api.wire(document));
    else api.wire(document);
  }
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  /** The login form's CSRF token in a page's HTML (Django renders name before value). */
  function tokenIn(html) {
    const input = /<input[^>]*name="csrfmiddlewaretoken"[^>]*>/.exec(html || "");
    const value = input && /value="([^"]*)"/.exec(input[0]);
    return value ? value[1] : "";
  }

  function isJson(r) { return (r.headers.get("Content-Type") || "").includes("application/json"); }

  class SessionGuard {
    /** options: fetch, sessionUrl (JSON {user, username, csrf}; 401 signed out), loginUrl,
     *  user (this page's user id, as a string). */
    constructor(options) {
      this.fetch = options.fetch;
      this.sessionUrl = options.sessionUrl;
      this.loginUrl = options.loginUrl;
      this.user = String(options.user);
    }

    /** Who is signed in: {kind: "ok", csrf}, {kind: "signin"}, {kind: "other-user",
     *  username} or {kind: "unreachable"}. */
    async check() {
      try {
        const r = await this.fetch(this.sessionUrl, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
        if (r.status === 401) return { kind: "signin" };
        if (!r.ok || !isJson(r)) return { kind: "unreachable" };
        return this.judge(await r.json());
      } catch (_) {
        return { kind: "unreachable" };
      }
    }

    judge(data) {
      if (data.user === null || data.user === undefined) return { kind: "signin" };
      if (String(data.user) !== this.user) return { kind: "other-user", username: data.username };
      return { kind: "ok", csrf: data.csrf };
    }

    /** Signs in (`fields`: username and password) without leaving the page: {kind: "ok",
     *  csrf}, {kind: "other-user", username}, {kind: "failed", status, html} (the login
     *  page's answer, for its message) or {kind: "unreachable"}. */
    async signIn(fields) {
      try {
        const page = await this.fetch(this.loginUrl, { credentials: "same-origin", cache: "no-store" });
        const body = new URLSearchParams(fields);
        body.set("csrfmiddlewaretoken", tokenIn(await page.text()));
        body.set("next", this.sessionUrl);
        const r = await this.fetch(this.loginUrl, { method: "POST", body, credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
        if (r.ok && isJson(r)) return this.judge(await r.json());
        return { kind: "failed", status: r.status, html: await r.text() };
      } catch (_) {
        return { kind: "unreachable" };
      }
    }
  }

  /* ---------- the page ---------- */
  function wire(doc) {
    const body = doc.body;
    const template = doc.getElementById("session-signin-template");
    // Signed-out pages have nothing to guard; the reader's page has its own sign-in.
    if (!body || !body.dataset.user || !template || doc.getElementById("signin-form")) return;
    // The dialog lives in a <template> until it is needed: a page's own controls stay the
    // only ones a selector (or a screen reader) finds.
    const dialog = template.content.firstElementChild.cloneNode(true);
    const form = dialog.querySelector("form");
    let shown = false;
    const guard = new SessionGuard({
      fetch: (...args) => window.fetch(...args),
      sessionUrl: form.dataset.sessionUrl,
      loginUrl: form.getAttribute("action"),
      user: body.dataset.user,
    });
    let pending = null; // {form, submitter} or {htmx: issueRequest}
    const say = (msg) => { const p = dialog.querySelector(".signin-error"); p.textContent = msg; p.hidden = !msg; };

    function setCsrf(token) {
      doc.querySelectorAll('input[name="csrfmiddlewaretoken"]').forEach((input) => { input.value = token; });
      try {
        const headers = JSON.parse(body.getAttribute("hx-headers") || "{}");
        headers["X-CSRFToken"] = token;
        body.setAttribute("hx-headers", JSON.stringify(headers));
      } catch (_) { /* fine */ }
    }

    function send() {
      const p = pending;
      pending = null;
      if (!p) return;
      if (p.htmx) { p.htmx(true); return; }
      p.form.dataset.sessionChecked = "1";
      if (p.submitter && p.submitter.form === p.form) p.form.requestSubmit(p.submitter);
      else p.form.requestSubmit();
    }

    function ask(why) {
      if (!shown) { body.appendChild(dialog); shown = true; }
      say(why || "");
      dialog.hidden = false;
      const field = form.querySelector(why ? 'input[name="username"]' : 'input[name="password"]');
      if (field) field.focus();
    }

    async function before(p) {
      pending = p;
      const result = await guard.check();
      if (result.kind === "ok") { setCsrf(result.csrf); send(); }
      else if (result.kind === "signin") ask("");
      else if (result.kind === "other-user") ask(`This browser is now signed in as ${result.username}; this page belongs to ${body.dataset.username}. Sign in as ${body.dataset.username} to send it.`);
      else send(); // unreachable: as without this script (the browser shows what happens)
    }

    doc.addEventListener("submit", (e) => {
      const f = e.target;
      if (f === form) { e.preventDefault(); signIn(); return; }
      if (!f || f.tagName !== "FORM" || (f.getAttribute("method") || "").toLowerCase() !== "post") return;
      if (f.closest("[data-session-guard='off']") || f.matches("[hx-post],[hx-put],[hx-patch],[hx-delete]")) return;
      if (f.dataset.sessionChecked) { delete f.dataset.sessionChecked; return; }
      e.preventDefault();
      before({ form: f, submitter: e.submitter || null });
    }, true);

    doc.addEventListener("htmx:confirm", (e) => {
      const verb = (e.detail.verb || "get").toLowerCase();
      if (verb === "get" || e.detail.elt.closest("[data-session-guard='off']")) return;
      e.preventDefault();
      before({ htmx: e.detail.issueRequest });
    });

    async function signIn() {
      const button = form.querySelector('button[type="submit"]');
      say("");
      button.disabled = true;
      const fields = new URLSearchParams(new FormData(form));
      fields.delete("csrfmiddlewaretoken");
      const result = await guard.signIn(fields);
      button.disabled = false;
      if (result.kind === "ok") {
        dialog.hidden = true;
        form.querySelector('input[name="password"]').value = "";
        setCsrf(result.csrf);
        send();
      } else if (result.kind === "other-user") {
        say(`You signed in as ${result.username}, but this page belongs to ${body.dataset.username}. Sign in as ${body.dataset.username} to send it.`);
      } else if (result.kind === "failed") {
        const page = new DOMParser().parseFromString(result.html, "text/html");
        const alert = page.querySelector('[role="alert"], .errorlist');
        say(alert ? alert.textContent.trim() : `Sign-in failed (error ${result.status}).`);
      } else {
        say("The server cannot be reached. Your form is still here; try again in a moment.");
      }
    }

    dialog.querySelector("[data-dismiss]").addEventListener("click", () => { dialog.hidden = true; pending = null; });
  }

  return { SessionGuard, tokenIn, wire };
});
