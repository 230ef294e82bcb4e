/* The image viewer's keys on every page with a viewer (the reader's, the expert's, the
 * results'): KEYS is the one list, and `action(e)` says what a keydown asks of the viewer.
 * viewer.js carries it out (ReaderViewer.handleKey); the pages call it after their own keys.
 *
 * `0`/Space fit (zoom and pan) and never touch the window; `w` resets the window to the one the
 * case opened at; Shift+digit chooses a window preset by the key's code, so the keyboard
 * layout does not matter.
 *
 * No DOM: a plain script in the page (window.ViewerKeys) and a CommonJS module in Node
 * (tests/js/); readerstudy's tests read KEYS from this file to check no key does two things.
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ViewerKeys = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  /** The viewer's keys on every page: key (lower case) -> action. */
  const KEYS = Object.freeze({
    i: "invert", 0: "fit", " ": "fit", w: "window", "+": "zoom-in", "=": "zoom-in", "-": "zoom-out", l: "link", f: "fullscreen",
  });

  /** A field where keys are typed, not shortcuts. */
  function typing(target) {
    return !!target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" || target.isContentEditable ||
      (target.tagName === "INPUT" && !["radio", "checkbox"].includes(target.type)));
  }

  /** A control Space activates: Space is left to it (and so never resets the view instead). */
  function pressable(target) {
    return !!target && (["BUTTON", "A", "SUMMARY"].includes(target.tagName) ||
      (target.tagName === "INPUT" && ["radio", "checkbox"].includes(target.type)));
  }

  /** The Shift+digit of a window preset ("1"-"9"), by key code so the layout does not matter. */
  function presetKey(e) {
    const match = e.shiftKey ? /^Digit([1-9])$/.exec(e.code || "") : null;
    return match ? match[1] : null;
  }

  /** What keydown `e` asks of the viewer: {preset: "1"-"9"} (the preset button with that
   * data-key), {action: name} (a toolbar action, KEYS) or null (not the viewer's key: a
   * modifier, typing in a field, Space on a control that Space presses). */
  function action(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return null;
    const preset = presetKey(e);
    if (preset) return { preset };
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (!(key in KEYS) || (key === " " && pressable(e.target))) return null;
    return { action: KEYS[key] };
  }

  return { KEYS, typing, pressable, presetKey, action };
});
