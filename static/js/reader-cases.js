/* The reading page's cases before they are shown: fetched, parsed into this document's nodes
 * and their images prepared off screen (the next case while the reader looks at this one), so
 * Enter only swaps nodes in. Also the "drawn" signal tests and the benchmark wait for.
 *
 * reader.js decides what to show and when; this file only fetches and prepares. A fetch the
 * server answers with 401, or with another reader's case (someone else signed in in this
 * browser meanwhile), gives null and calls `signedOut`; a case made under another design than
 * the page's gives null (the page then loads it afresh); a server error (5xx) rejects, as a
 * network failure does.
 */
(function () {
  "use strict";

  const PREFETCH_MAX_AGE_MS = 120000;
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const viewer = () => window.ReaderViewer || null;

  /** A case page's HTML as nodes of this document (so its canvases can draw before it is shown). */
  function parse(html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    return document.importNode(tpl.content, true);
  }

  let warm = null;
  function warmCanvas() {
    if (!warm) { const c = document.createElement("canvas"); c.width = c.height = 1; warm = c.getContext("2d"); }
    return warm;
  }

  /** Releases what was prepared for a fetched case that was not shown. */
  function forget(entry) {
    const v = viewer();
    if (!entry.shown && entry.fragment && v && v.discard) v.discard($("#workspace", entry.fragment));
  }

  function preparedWell(fragment) {
    const v = viewer();
    const ws = $("#workspace", fragment);
    return !(v && v.preparedWell && ws && $(".viewer", ws)) || v.preparedWell(ws);
  }

  class Cases {
    /** `readerId()`: this page's reader; `signedOut()`: the session has ended; `layout()`:
     * the design this page (its drafts and unsent answers) was made under. */
    constructor({ readerId, signedOut, layout }) {
      this.readerId = readerId;
      this.signedOut = signedOut;
      this.layout = layout || (() => "");
      this.prefetched = null; // { url, html, fragment, decoded, at, shown }
      this.prefetching = null; // { url, promise }
    }

    /** The case at `url` fetched ahead and still fresh, if any. */
    ready(url) {
      const p = this.prefetched;
      return p && p.url === url && performance.now() - p.at < PREFETCH_MAX_AGE_MS ? p : null;
    }

    /** Fetches and prepares the case after the one in `ws` (its data-next-url). */
    prefetch(ws) {
      const url = ws.dataset.nextUrl;
      // An answered case prefetches nothing, except a practice case's feedback (Enter goes on).
      if (!url || !(ws.dataset.editable || ws.dataset.feedback) || this.ready(url)) return;
      this.fetch(url).then((entry) => {
        if (!entry) return;
        if (this.prefetched && this.prefetched !== entry) forget(this.prefetched);
        this.prefetched = entry;
        // Tests and the benchmark wait for this: the next case is ready to show at once.
        entry.decoded.then(() => { if (ws.isConnected && ws.dataset.nextUrl === url) ws.dataset.nextReady = "1"; });
      }).catch(() => {});
    }

    /** Drops what was fetched ahead (its images were refused, say, while signed out). */
    reset() {
      if (this.prefetched) forget(this.prefetched);
      this.prefetched = null;
    }

    /** The case fragment at `url` and its images, decoded; null when the server said no. */
    fetch(url) {
      if (this.prefetching && this.prefetching.url === url) return this.prefetching.promise;
      const asked = performance.now(); // the page shows the server's state as of about then
      const promise = fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin", cache: "no-store" })
        .then((r) => {
          if (r.status === 401) { this.signedOut(); return null; }
          // A server error (a restart, a proxy's 502) is a case not reached yet, like offline:
          // the caller tries again rather than leaving the page for an error page.
          if (r.status >= 500) throw new Error(`server error ${r.status}`);
          if (!r.ok || !(r.headers.get("Content-Type") || "").includes("text/html")) return null;
          return r.text();
        })
        .then((html) => {
          if (!html || !html.includes('id="workspace"')) return null;
          const fragment = parse(html);
          const next = $("#workspace", fragment);
          // Someone else signed in in this browser meanwhile (another tab): that reader's case
          // and answers are not shown on this reader's page, which asks to sign in again.
          if (next && String(next.dataset.reader) !== String(this.readerId())) { this.signedOut(); return null; }
          // Made under another design (the PI changed it on the Design page): this page's
          // drafts may name another X-ray or option there. Not shown here: the caller loads
          // the case as a new page, whose store drops those drafts (reader-store.js).
          const layout = this.layout();
          if (next && layout && next.dataset.layout !== layout) return null;
          // The viewer loads, decodes, uploads and draws the case's images now, off screen, at
          // the size they will have: Enter then only puts the drawn canvases on screen.
          const v = viewer();
          if (v && v.prepare && next && $(".viewer", next)) {
            const decoded = v.prepare(next).catch(() => null);
            return { url, html, fragment, decoded, at: asked };
          }
          // No viewer: decode the images (the full-depth file where the case has it), and draw
          // them once on a 1-pixel canvas, so they are not decoded after Enter.
          const images = $$(".view[data-src]", fragment).map((fig) => {
            const img = new Image();
            img.src = fig.dataset.depthSrc || fig.dataset.src;
            return img;
          });
          const decoded = Promise.all(images.map((img) => img.decode().catch(() => null))).then(() => {
            const ctx = warmCanvas();
            images.forEach((img) => { try { ctx.drawImage(img, 0, 0, 1, 1); } catch (_) { /* not drawable */ } });
          });
          return { url, html, fragment, images, decoded, at: asked };
        })
        .finally(() => { if (this.prefetching && this.prefetching.url === url) this.prefetching = null; });
      this.prefetching = { url, promise };
      return promise;
    }

    /** The nodes to put on screen for `entry`: the prepared ones the first time it is shown,
     * fresh ones after that (and when its images could not be loaded ahead: fresh nodes load
     * them again). */
    nodesToShow(entry) {
      let fragment = entry.fragment && !entry.shown ? entry.fragment : null;
      if (fragment && !preparedWell(fragment)) { forget(entry); fragment = null; }
      entry.shown = true;
      return fragment || parse(entry.html);
    }

    /** `entry` is on screen: what was fetched ahead for its URL is used up. */
    shown(entry) {
      if (this.prefetched && this.prefetched.url === entry.url) {
        if (this.prefetched !== entry) forget(this.prefetched);
        this.prefetched = null;
      }
    }
  }

  function afterNextFrame() {
    return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  }

  /** Sets data-drawn on the workspace when the frame showing its images begins: the signal
   * tests and the benchmark wait for. Where the viewer says whether its images are loaded
   * (and so drawn: it draws on load), that is watched for at once, on every change to the
   * case's DOM and every frame; otherwise the images' decode stands in for it. */
  function markDrawn(ws, entry) {
    const viewerViews = () => {
      const current = viewer() && viewer().current;
      return current && Array.isArray(current.views) ? current.views : null;
    };
    const ready = viewerViews() ? Promise.resolve() : (entry && entry.decoded) || Promise.all(
      $$(".view[data-src]", ws).map((fig) => { const img = new Image(); img.src = fig.dataset.depthSrc || fig.dataset.src; return img.decode().catch(() => null); }));
    return ready.then(() => whenViewerDrawn(ws, viewerViews, 600)).then(() => new Promise((resolve) => {
      requestAnimationFrame(() => {
        if (ws.isConnected) {
          performance.mark("reader:drawn");
          ws.dataset.drawn = String(performance.now());
          ws.dispatchEvent(new CustomEvent("reader:drawn", { bubbles: true }));
        }
        resolve();
      });
    }));
  }

  function whenViewerDrawn(ws, viewerViews, maxFrames) {
    return new Promise((resolve) => {
      let frames = 0;
      let done = false;
      const drawn = () => { const views = viewerViews(); return !views || views.every((v) => v.loaded !== false); };
      const observer = new MutationObserver(() => { if (drawn()) finish(); });
      function finish() {
        if (done) return;
        done = true;
        observer.disconnect();
        performance.mark("reader:viewer-loaded");
        resolve();
      }
      observer.observe(ws, { subtree: true, childList: true, characterData: true });
      const tick = () => { if (done) return; if (drawn() || ++frames > maxFrames) finish(); else requestAnimationFrame(tick); };
      tick();
    });
  }

  window.ReaderCases = { Cases, markDrawn, afterNextFrame };
})();
