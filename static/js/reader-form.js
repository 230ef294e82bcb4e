/* The answer form of a reading page as values: what reader.js keeps as drafts, sends and
 * compares. Values are {field name: value} for every radio group and text field, the form's
 * own names: nothing of the vocabulary is restated here.
 */
(function () {
  "use strict";

  /** The form's answer fields as {name: value}: every radio group and text field. */
  function valuesOf(f, initial) {
    const values = {};
    for (const el of f.elements) {
      if (!el.name || el.type === "hidden" || el.type === "submit" || el.type === "button") continue;
      if (el.type === "radio") {
        if (!(el.name in values)) values[el.name] = "";
        if (initial ? el.defaultChecked : el.checked) values[el.name] = el.value;
      } else if (el.tagName === "TEXTAREA" || el.type === "text") {
        values[el.name] = initial ? el.defaultValue : el.value;
      }
    }
    return values;
  }
  function apply(f, values) {
    for (const el of f.elements) {
      if (!el.name || !(el.name in values)) continue;
      if (el.type === "radio") el.checked = values[el.name] === el.value;
      else if (el.tagName === "TEXTAREA" || el.type === "text") el.value = values[el.name];
    }
  }
  function setDefaults(f, values) {
    for (const el of f.elements) {
      if (!el.name || !(el.name in values)) continue;
      if (el.type === "radio") el.defaultChecked = values[el.name] === el.value;
      else if (el.tagName === "TEXTAREA" || el.type === "text") el.defaultValue = values[el.name];
    }
  }
  /** The chosen option as the reader sees it ("B. Pneumothorax"), for messages. */
  function chosenLabel(f) {
    const input = f.querySelector('input[type="radio"][required]:checked');
    const text = input && input.closest("label") && input.closest("label").querySelector("span");
    return text ? text.textContent.trim() : input ? input.value : "";
  }

  /** The case's form now shows `values` as the server's saved answer. */
  function markSaved(ws, f, values) {
    setDefaults(f, values);
    ws.dataset.answered = "1";
    const button = f.querySelector('button[type="submit"]');
    if (button && button.firstChild) button.firstChild.textContent = "Save change ";
  }

  window.ReaderForm = { valuesOf, apply, setDefaults, chosenLabel, markSaved };
})();
