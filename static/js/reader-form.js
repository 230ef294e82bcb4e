/* The answer form of a reading page as values: what reader.js keeps as drafts, sends and
 * compares. Values are {field name: value} for every radio group, text and number field, the
 * form's own names: nothing of the vocabulary is restated here. A control with
 * data-mirror-of="name" (a fine confidence scale's slider) shows that field's value and sets
 * it when moved; in a number box Page Up / Page Down step 10.
 */
(function () {
  "use strict";

  /** A field whose value is typed: a text box, a comment, a number. */
  function typed(el) { return el.tagName === "TEXTAREA" || el.type === "text" || el.type === "number"; }

  /** The controls mirroring `box` (data-mirror-of its name) show its value. */
  function mirror(f, box) {
    for (const el of f.querySelectorAll(`[data-mirror-of="${CSS.escape(box.name)}"]`)) {
      el.value = box.value;
      el.toggleAttribute("data-unset", box.value === "");
    }
  }

  const PAGE_STEP = 10;
  if (typeof document !== "undefined") {
    document.addEventListener("input", (e) => {
      const el = e.target, f = el && el.form;
      if (!f) return;
      if (el.dataset && el.dataset.mirrorOf) {
        const box = f.elements[el.dataset.mirrorOf];
        if (!box) return;
        box.value = el.value;
        el.removeAttribute("data-unset");
        box.dispatchEvent(new Event("input", { bubbles: true }));
      } else if (el.type === "number") mirror(f, el);
    });
    document.addEventListener("keydown", (e) => {
      const el = e.target;
      if (!el || el.type !== "number" || !el.form || (e.key !== "PageUp" && e.key !== "PageDown")) return;
      e.preventDefault();
      const low = Number(el.min), high = Number(el.max), now = el.value === "" ? (low + high) / 2 : Number(el.value);
      el.value = String(Math.min(high, Math.max(low, Math.round(now + (e.key === "PageUp" ? PAGE_STEP : -PAGE_STEP)))));
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }

  /** The form's answer fields as {name: value}: every radio group, text and number field. */
  function valuesOf(f, initial) {
    const values = {};
    for (const el of f.elements) {
      if (!el.name || el.type === "hidden" || el.type === "submit" || el.type === "button") continue;
      if (el.type === "radio") {
        if (!(el.name in values)) values[el.name] = "";
        if (initial ? el.defaultChecked : el.checked) values[el.name] = el.value;
      } else if (typed(el)) {
        values[el.name] = initial ? el.defaultValue : el.value;
      }
    }
    return values;
  }
  function apply(f, values) {
    for (const el of f.elements) {
      if (!el.name || !(el.name in values)) continue;
      if (el.type === "radio") el.checked = values[el.name] === el.value;
      else if (typed(el)) { el.value = values[el.name]; mirror(f, el); }
    }
  }
  function setDefaults(f, values) {
    for (const el of f.elements) {
      if (!el.name || !(el.name in values)) continue;
      if (el.type === "radio") el.defaultChecked = values[el.name] === el.value;
      else if (typed(el)) el.defaultValue = values[el.name];
    }
  }
  /** The chosen option as the reader sees it ("B. Pneumothorax"), for messages. */
  function chosenLabel(f) {
    const input = f.querySelector('input[type="radio"][required]:checked');
    const text = input && input.closest("label") && input.closest("label").querySelector("span");
    return text ? text.textContent.trim() : input ? input.value : "";
  }

  /** The value of the required option group (the answer itself): checked, or as saved. */
  function mainChoice(f, initial) {
    const input = Array.from(f.querySelectorAll('input[type="radio"][required]')).find((r) => (initial ? r.defaultChecked : r.checked));
    return input ? input.value : "";
  }

  /** The case's form now shows `values` as the server's saved answer. */
  function markSaved(ws, f, values) {
    setDefaults(f, values);
    ws.dataset.answered = "1";
    const button = f.querySelector('button[type="submit"]');
    if (button && button.firstChild) button.firstChild.textContent = "Save change ";
  }

  window.ReaderForm = { valuesOf, apply, setDefaults, chosenLabel, mainChoice, markSaved };
})();
