// The image viewer's arithmetic and keys without a browser (static/js/viewer-window.js,
// viewer-keys.js): units of full-depth and 8-bit images, presets, the window drag and its
// limits, zoom about the pointer, the image's place on the canvas, the readout, the grey
// table, and which keys are the viewer's. The browser tests (tests/browser/
// test_viewer_browser.py) check the pixels drawn.
// Run: node --test tests/js/   (make test-js)
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const W = require("../../static/js/viewer-window.js");
const { KEYS, action, typing } = require("../../static/js/viewer-keys.js");

/** A 15-bit CR as the server describes it: stored = -1024 + 0.5 * code, presets in stored units. */
const deepFigure = {
  src: "/media/cr.png", depthSrc: "/media/cr16.png", valueOffset: "-1024", valueScale: "0.5",
  valueMin: "-1024", valueMax: "15359", monochrome1: "0",
  presets: JSON.stringify({ default: [2000, 4000], lung: [-600, 1500], narrow: [100, 0.1] }),
};

test("a full-depth view is in stored units with its presets; without depth, 0-255 grey", () => {
  const info = W.describe(deepFigure);
  assert.deepEqual([info.deep, info.src, info.offset, info.scale, info.min, info.max, info.range], [true, "/media/cr16.png", -1024, 0.5, -1024, 15359, 16383]);
  assert.deepEqual(info.presets.lung, [-600, 1500]);
  const flat = W.describe(deepFigure, false); // the full-depth file could not be loaded
  assert.deepEqual([flat.deep, flat.src, flat.min, flat.max, flat.range], [false, "/media/cr.png", 0, 255, 256]);
  assert.deepEqual(W.describe({ src: "/x.png" }).presets, {});
  // A broken preset list and missing numbers fall back rather than fail.
  const odd = W.describe({ depthSrc: "/y.png", presets: "{not json", valueMax: "n/a" });
  assert.deepEqual([odd.presets, odd.max, odd.scale, odd.range], [{}, 65535, 1, 65535]);
});

test("a case opens at the image's own window, else its whole range, else the identity", () => {
  assert.deepEqual(W.freshState(W.describe(deepFigure)), { center: 2000, width: 4000, zoom: 1, panX: 0, panY: 0, invert: false, preset: "default" });
  const noDefault = W.describe({ ...deepFigure, presets: "{}" });
  assert.deepEqual(W.defaultWindow(noDefault), { center: (-1024 + 15359) / 2, width: 16383 });
  assert.deepEqual(W.defaultWindow(W.describe({ src: "/x.png" })), { center: 127.5, width: 255 });
});

test("a preset sets its window; one the image lacks, or any on an 8-bit image, changes nothing", () => {
  const info = W.describe(deepFigure);
  const state = W.freshState(info);
  assert.equal(W.setPreset(state, info, "lung"), true);
  assert.deepEqual([state.center, state.width, state.preset], [-600, 1500, "lung"]);
  assert.equal(W.setPreset(state, info, "bone"), false);
  assert.deepEqual([state.center, state.width, state.preset], [-600, 1500, "lung"]);
  // Never narrower than one step of the data.
  W.setPreset(state, info, "narrow");
  assert.equal(state.width, 0.5);
  assert.equal(W.setPreset(state, info, "default"), true);
  assert.deepEqual([state.center, state.width, state.preset], [2000, 4000, "default"]);
  const flat = W.describe({ src: "/x.png", presets: JSON.stringify({ lung: [1, 2] }) });
  assert.equal(W.setPreset(W.freshState(flat), flat, "lung"), false);
});

test("the window drag: 1/512 of the range per pixel at full depth, one grey value on 8 bit, within limits", () => {
  const info = W.describe(deepFigure);
  const state = W.freshState(info);
  W.windowBy(state, info, 10, -4);
  assert.equal(state.width, 4000 + (10 * 16383) / 512);
  assert.equal(state.center, 2000 - (4 * 16383) / 512);
  assert.equal(state.preset, ""); // no preset any more: the readout names none
  W.windowBy(state, info, -1e6, -1e6);
  assert.deepEqual([state.width, state.center], [0.5, -1024 - 16383 / 2]);
  W.windowBy(state, info, 1e6, 1e6);
  assert.deepEqual([state.width, state.center], [2 * 16383, 15359 + 16383 / 2]);
  const flat = W.describe({ src: "/x.png" });
  const grey = W.freshState(flat);
  W.windowBy(grey, flat, 3, 2);
  assert.deepEqual([grey.width, grey.center], [258, 129.5]);
  W.windowBy(grey, flat, -1000, 0);
  assert.equal(grey.width, 1);
});

test("zoom keeps the point under the pointer fixed, between 0.2 and 20", () => {
  const state = { zoom: 1, panX: 0, panY: 0 };
  W.zoomAt(state, 2, 100, -50); // 100 px right of and 50 above the centre
  assert.deepEqual(state, { zoom: 2, panX: -100, panY: 50 });
  // The image point under (100, -50) before is there after: (p - pan) / zoom is unchanged.
  assert.equal((100 - state.panX) / state.zoom, 100);
  W.zoomAt(state, 1000, 0, 0);
  assert.equal(state.zoom, W.ZOOM_MAX);
  W.zoomAt(state, 1e-6, 0, 0);
  assert.equal(state.zoom, W.ZOOM_MIN);
});

test("the image is fitted and centred on the canvas, then zoomed and panned in device pixels", () => {
  const state = { zoom: 1, panX: 0, panY: 0 };
  assert.deepEqual(W.box(1000, 500, 2000, 2000, state, 1), { x: 250, y: 0, w: 500, h: 500, scale: 0.25 });
  const zoomed = { zoom: 2, panX: 10, panY: -5 };
  assert.deepEqual(W.box(1000, 500, 2000, 2000, zoomed, 2), { x: 20, y: -260, w: 1000, h: 1000, scale: 0.5 });
});

test("linked views share zoom, pan and invert, never the window", () => {
  assert.deepEqual(W.linkedPart({ center: 1, width: 2, preset: "lung", zoom: 3, panX: 4, panY: 5, invert: true }),
    { zoom: 3, panX: 4, panY: 5, invert: true });
});

test("the readout names the view, the window, the preset as its button says, invert and zoom", () => {
  const info = W.describe(deepFigure);
  const state = { ...W.freshState(info), preset: "lung", center: -600, width: 1500, invert: true, zoom: 1.5 };
  assert.equal(W.readout(state, info, { which: "PA: ", presetLabel: "Lung" }), "PA: W 1500 · L -600 · Lung · inv · 150%");
  assert.equal(W.readout({ ...state, preset: "", invert: false }, info), "W 1500 · L -600 · 150%");
  // A small range keeps four significant digits; 8-bit and wide ranges whole numbers.
  const small = W.describe({ depthSrc: "/s.png", valueMin: "0", valueMax: "4", valueScale: "0.001" });
  assert.equal(W.format(small, 1.23456), "1.235");
  assert.equal(W.format(info, 1.6), "2");
  const flat = W.describe({ src: "/x.png" });
  assert.equal(W.readout({ ...W.freshState(flat), preset: "lung" }, flat, { presetLabel: "Lung" }), "W 255 · L 128 · 100%");
});

test("the grey table maps the window to 0-255, inverted for invert xor MONOCHROME1", () => {
  const info = W.describe({ depthSrc: "/d.png", valueOffset: "0", valueScale: "1", valueMin: "0", valueMax: "1000" });
  const table = W.greyTable({ center: 500, width: 1000, invert: false }, info);
  assert.equal(table.length, 65536);
  assert.deepEqual([table[0], table[250], table[500], table[1000], table[5000]], [0, 63, 127, 255, 255]);
  const inverted = W.greyTable({ center: 500, width: 1000, invert: true }, info);
  assert.deepEqual([inverted[0], inverted[1000]], [255, 0]);
  const mono1 = { ...info, monochrome1: true };
  assert.deepEqual([W.greyTable({ center: 500, width: 1000, invert: false }, mono1)[0], W.greyTable({ center: 500, width: 1000, invert: true }, mono1)[0]], [255, 0]);
  const flat = W.describe({ src: "/x.png" });
  const identity = W.greyTable(W.freshState(flat), flat);
  assert.equal(identity.length, 256);
  assert.ok(identity.every((g, code) => g === code));
  assert.equal(W.identity8bit(W.freshState(flat)), true);
  assert.equal(W.identity8bit({ ...W.freshState(flat), invert: true }), false);
});

test("the viewer's keys: one list, a toolbar action each; Shift+digit a preset by key code", () => {
  assert.deepEqual(action({ key: "i" }), { action: "invert" });
  assert.deepEqual(action({ key: "I" }), { action: "invert" });
  assert.deepEqual(action({ key: "0" }), { action: "fit" });
  assert.deepEqual(action({ key: " " }), { action: "fit" });
  assert.deepEqual(action({ key: "+" }), { action: "zoom-in" });
  assert.deepEqual(action({ key: "=" }), { action: "zoom-in" });
  assert.deepEqual(action({ key: "w" }), { action: "window" });
  // Shift+1 types "!" on a US layout and "1" on some others: the code decides.
  assert.deepEqual(action({ key: "!", code: "Digit1", shiftKey: true }), { preset: "1" });
  assert.deepEqual(action({ key: "1", code: "Digit1", shiftKey: true }), { preset: "1" });
  assert.equal(action({ key: "1", code: "Digit1" }), null); // an answer key on the reading page
  assert.equal(action({ key: ")", code: "Digit0", shiftKey: true }), null);
  assert.equal(action({ key: "a" }), null);
  assert.equal(action({ key: "ArrowRight" }), null);
  assert.ok(Object.values(KEYS).every((name) => ["invert", "fit", "window", "zoom-in", "zoom-out", "link", "fullscreen"].includes(name)));
});

test("no viewer key while typing, with a modifier, or Space on a control Space presses", () => {
  const input = { tagName: "INPUT", type: "text" };
  assert.equal(action({ key: "i", target: input }), null);
  assert.equal(action({ key: "i", target: { tagName: "TEXTAREA" } }), null);
  assert.equal(action({ key: "i", target: { tagName: "DIV", isContentEditable: true } }), null);
  assert.equal(action({ key: "!", code: "Digit1", shiftKey: true, target: input }), null);
  for (const mod of ["ctrlKey", "metaKey", "altKey"]) assert.equal(action({ key: "i", [mod]: true }), null);
  for (const target of [{ tagName: "BUTTON" }, { tagName: "A" }, { tagName: "SUMMARY" }, { tagName: "INPUT", type: "checkbox" }]) {
    assert.equal(action({ key: " ", target }), null);
    assert.deepEqual(action({ key: "0", target }), { action: "fit" });
  }
  // Options and checkboxes are not fields: their keys are still shortcuts.
  assert.equal(typing({ tagName: "INPUT", type: "radio" }), false);
  assert.equal(typing(null), false);
});
