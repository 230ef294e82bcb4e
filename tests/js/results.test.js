// The results pages' keys (static/js/results.js): each key acts on the element whose data-key
// it is, in the way that element asks for; nothing else is a key.
const test = require("node:test");
const assert = require("node:assert/strict");
const ResultsKeys = require("../../static/js/results.js");

function element(tagName, key, attributes = []) {
  return { tagName, dataset: { key }, hasAttribute: (name) => attributes.includes(name) };
}

test("a key follows its link, presses its button, focuses its control", () => {
  const next = element("A", "ArrowRight");
  const misses = element("A", "m", ["data-focus"]);
  const practise = element("SELECT", "p", ["data-focus"]);
  const press = element("BUTTON", "x");
  const page = [next, misses, practise, press];
  assert.deepEqual(ResultsKeys.resolve("ArrowRight", page), { el: next, how: "follow" });
  assert.deepEqual(ResultsKeys.resolve("m", page), { el: misses, how: "focus" });
  assert.deepEqual(ResultsKeys.resolve("p", page), { el: practise, how: "focus" });
  assert.deepEqual(ResultsKeys.resolve("x", page), { el: press, how: "press" });
  assert.equal(ResultsKeys.resolve("q", page), null);
});

test("letters are matched in either case, named keys as they are", () => {
  assert.equal(ResultsKeys.keyOf({ key: "M" }), "m");
  assert.equal(ResultsKeys.keyOf({ key: "ArrowLeft" }), "ArrowLeft");
  assert.equal(ResultsKeys.resolve("ArrowLeft", [element("A", "ArrowRight")]), null);
});
