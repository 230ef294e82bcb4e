/* The reading page's keys: what a keydown does, in the order the page asks (paused, a dialog
 * open, typing in a field, shortcuts off, the page's own keys, the answer keys, the viewer's,
 * then the arrows between cases).
 *
 * The keys themselves stay in the markup (answer keys in each radio's data-keys, the comment
 * key in the textarea's, the confidence box's in its own, Pause and Review in data-key) and in viewer.js (its KEYS); `q` and `?`
 * are the page's own. No DOM: `decide(e, page)` asks the page what it needs to know through
 * `page` (reader.js gives it the document; tests/js/ a plain object) and returns an action,
 * which reader.js carries out:
 *
 *   {act: "none"}                      nothing (the browser's own behaviour, unless `prevent`)
 *   {act: "resume" | "pause" | "help" | "panel" | "submit" | "viewer"}
 *   {act: "close-dialog", dialog}      {act: "blur", target}
 *   {act: "follow", url}               a link's page (the review page)
 *   {act: "go", url}                   a case, shown in place (pushed to the history)
 *   {act: "focus", el}                 {act: "choose", input}
 *   {act: "note", text}                a short note on why a key did nothing (text null: the
 *                                      question is hidden, in the page's words)
 * `prevent`: the key's default is cancelled.
 *
 * A plain script in the page (window.ReaderKeys) and a CommonJS module in Node (tests/js/).
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ReaderKeys = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const NOT_SEEN = "Keys wait until the case is shown.";
  const NAV = Object.freeze({ ArrowLeft: "prev", ArrowRight: "next" });

  /** A key as the markup names it: letters in lower case, named keys ("Enter") as they are. */
  function keyOf(e) { return e.key.length === 1 ? e.key.toLowerCase() : e.key; }

  /** Why an answer key or Enter waits after a submit, until the next case is on screen. */
  function leavingNote(number, leaving) {
    const next = leaving.nextNumber ? `case ${leaving.nextNumber}` : "the next case";
    return leaving.waiting
      ? `Case ${number} is submitted; ${next} opens by itself once it can be fetched. Answer keys wait until then.`
      : `Case ${number} is submitted; ${next} is opening. Answer keys wait until it is on screen.`;
  }

  const none = (prevent = false) => ({ act: "none", prevent });
  const act = (name, extra = {}) => ({ act: name, prevent: true, ...extra });

  /** What keydown `e` does on the reading page. `page` answers: paused(), pauseKey(),
   * dialog() (the open dialog or null), inForm(target), typing(target), shortcutsOn(),
   * reviewLink() ({key, href} or null), comment(key) ({el, disabled} or null), questionHidden(),
   * practiceNext() (the link or null), seen(), keyed(key) (the option or null),
   * leaving() ({nextNumber, waiting} or null), shownNumber(), navLink("prev"|"next"). */
  function decide(e, page) {
    const modified = e.ctrlKey || e.metaKey || e.altKey;
    if (page.paused()) {
      // Paused: the case is hidden and no key acts on it; the pause key or Esc resumes.
      const k = keyOf(e);
      if (!modified && (k === page.pauseKey() || k === "Escape")) return act("resume");
      return none(e.key !== "Tab");
    }
    const dialog = page.dialog();
    if (dialog) return e.key === "Escape" ? act("close-dialog", { dialog }) : none();
    const t = e.target;
    // Ctrl/Cmd+Enter in the comment submits, as in most text boxes, and Enter in the
    // confidence box (the page's checks, in the server's words, not the browser's bubble; the
    // seen-rule holds).
    const box = !!t && t.type === "number";
    if ((e.ctrlKey || e.metaKey || box) && e.key === "Enter" && t && page.inForm(t) && page.typing(t)) {
      return page.leaving() ? none(true) : act("submit");
    }
    if (modified) return none();
    if (page.typing(t)) return e.key === "Escape" ? { act: "blur", target: t, prevent: false } : none();
    if (!page.shortcutsOn()) return none(); // an ordinary form: Tab, arrows and Space as the browser does
    const key = keyOf(e);
    const onRadio = !!t && t.tagName === "INPUT" && t.type === "radio";
    const arrowOnRadio = onRadio && key.startsWith("Arrow"); // never change an option silently
    if (key === "?") return act("help");
    if (key === "q") return act("panel");
    if (key === page.pauseKey()) return act("pause");
    const review = page.reviewLink();
    if (review && key === review.key) return act("follow", { url: review.href });
    const comment = key.length === 1 ? page.comment(key) : null;
    if (comment) {
      // The comment key focuses the comment, the confidence key the confidence box (the key
      // itself is not typed into it).
      if (page.questionHidden()) return act("note", { text: null });
      return comment.disabled ? none(true) : act("focus", { el: comment.el });
    }
    const practiceNext = key === "Enter" ? page.practiceNext() : null;
    if (practiceNext && !(t && (t.tagName === "BUTTON" || (t.tagName === "A" && t !== practiceNext)))) {
      // A practice case's feedback: Enter goes on, once it has been on screen for the dwell.
      return page.seen() ? act("go", { url: practiceNext.href }) : act("note", { text: NOT_SEEN });
    }
    const keyed = key.length === 1 ? page.keyed(key) : null;
    if (keyed || key === "Enter") {
      if (key === "Enter" && t && (t.tagName === "BUTTON" || t.tagName === "A")) return none(arrowOnRadio);
      if (page.questionHidden()) return act("note", { text: null });
      const leaving = page.leaving();
      if (leaving) return act("note", { text: leavingNote(page.shownNumber(), leaving) });
      if (!page.seen()) return act("note", { text: NOT_SEEN });
      return keyed ? act("choose", { input: keyed }) : act("submit");
    }
    if (key in NAV) {
      // The viewer has no arrow key: the arrows go between cases.
      const link = page.navLink(NAV[key]);
      return link ? act("go", { url: link.href }) : none(arrowOnRadio);
    }
    return { act: "viewer", prevent: arrowOnRadio };
  }

  return { decide, keyOf, leavingNote, NOT_SEEN };
});
