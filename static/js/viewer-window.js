/* The image viewer's arithmetic: what a view shows and in which units, its window (centre and
 * width) and presets, the window drag, zoom about a point, where the image sits on the canvas,
 * the readout and the grey-value table of the canvas-2D renderer.
 *
 * Units: full-depth images (an 8-bit RGB PNG whose red and green bytes hold a 16-bit code;
 * stored value = offset + scale * code) are windowed in stored units (the units of the DICOM
 * window); 8-bit images in display grey values (0-255). MONOCHROME1 data is inverted so bone
 * is bright.
 *
 * A view's state: {center, width, preset, zoom, panX, panY, invert}; pan in CSS pixels from
 * the centred, fitted image; zoom 1 fits the image to the view.
 *
 * No DOM: viewer.js reads the figures and draws; a plain script in the page
 * (window.ViewerWindow) and a CommonJS module in Node (tests/js/).
 */
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ViewerWindow = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const IDENTITY_8BIT = Object.freeze({ center: 127.5, width: 255 });
  const ZOOM_MIN = 0.2;
  const ZOOM_MAX = 20;

  function num(value, fallback) {
    const n = parseFloat(value);
    return Number.isFinite(n) ? n : fallback;
  }

  /** What a view shows and in which units, from its figure's data attributes (`d`: the
   * dataset); `deep` false: the 8-bit display image even where a full-depth one exists (it
   * could not be loaded). */
  function describe(d, deep = true) {
    if (d.depthSrc && deep) {
      let presets = {};
      try { presets = JSON.parse(d.presets || "{}") || {}; } catch (_) { /* unreadable: none */ }
      const min = num(d.valueMin, 0), max = num(d.valueMax, 65535), scale = num(d.valueScale, 1);
      return {
        deep: true, src: d.depthSrc, offset: num(d.valueOffset, 0), scale,
        min, max, range: Math.max(max - min, scale), monochrome1: d.monochrome1 === "1", presets,
      };
    }
    return { deep: false, src: d.src, offset: 0, scale: 1, min: 0, max: 255, range: 256, monochrome1: false, presets: {} };
  }

  /** The image's own window: its "default" preset (the DICOM window), else its whole range. */
  function defaultWindow(info) {
    const w = info.presets["default"];
    if (info.deep && Array.isArray(w) && w.length === 2) return { center: +w[0], width: +w[1] };
    if (info.deep) return { center: (info.min + info.max) / 2, width: info.range };
    return { ...IDENTITY_8BIT };
  }

  function freshState(info) {
    return { ...defaultWindow(info), zoom: 1, panX: 0, panY: 0, invert: false, preset: "default" };
  }

  /** Sets the window of preset `name` on `state`: false (state unchanged) when the image has
   * no such preset (only full-depth images have presets besides "default"). */
  function setPreset(state, info, name) {
    if (name === "default") { Object.assign(state, defaultWindow(info), { preset: "default" }); return true; }
    const w = info.presets[name];
    if (!info.deep || !Array.isArray(w) || w.length !== 2) return false;
    Object.assign(state, { center: +w[0], width: Math.max(+w[1], info.scale), preset: name });
    return true;
  }

  /** The window drag by (dx, dy) CSS pixels: x widens, y raises the level. 8-bit images move
   * one grey value per pixel; full-depth images 1/512 of their range, so a drag across the
   * screen spans it. The width stays between one step of the data and twice its range, the
   * level within half a range of it. */
  function windowBy(state, info, dx, dy) {
    const step = info.deep ? info.range / 512 : 1;
    const minWidth = info.deep ? info.scale : 1;
    state.width = Math.max(minWidth, Math.min(2 * info.range, state.width + dx * step));
    state.center = Math.max(info.min - info.range / 2, Math.min(info.max + info.range / 2, state.center + dy * step));
    state.preset = "";
  }

  /** Zoom by `factor` keeping the point (ox, oy) fixed (CSS px from the view's centre). */
  function zoomAt(state, factor, ox, oy) {
    const zoom = Math.max(ZOOM_MIN, Math.min(ZOOM_MAX, state.zoom * factor));
    const f = zoom / state.zoom;
    state.panX = ox - (ox - state.panX) * f;
    state.panY = oy - (oy - state.panY) * f;
    state.zoom = zoom;
  }

  /** Where an iw x ih image sits on a w x h canvas (device px): fitted, zoomed about the
   * centre, panned (CSS px times `dpr`). */
  function box(w, h, iw, ih, state, dpr) {
    const scale = Math.min(w / iw, h / ih) * state.zoom;
    const dw = iw * scale, dh = ih * scale;
    return { x: (w - dw) / 2 + state.panX * dpr, y: (h - dh) / 2 + state.panY * dpr, w: dw, h: dh, scale };
  }

  /** The zoom, pan and invert that linked views share (the window is each image's own). */
  function linkedPart(state) {
    const { zoom, panX, panY, invert } = state;
    return { zoom, panX, panY, invert };
  }

  /** A window value as the readout shows it: whole numbers, or 4 significant digits for a
   * full-depth image of a small range. */
  function format(info, value) {
    if (!info.deep || info.range >= 100) return String(Math.round(value));
    return String(Number(value.toPrecision(4)));
  }

  /** The readout: "W 400 · L 40 · Lung · inv · 150%"; `which` names the view when the viewer
   * has several ("PA: "), `presetLabel` the preset as its button says it. */
  function readout(state, info, { which = "", presetLabel = "" } = {}) {
    const preset = state.preset && info.deep ? presetLabel : "";
    return `${which}W ${format(info, state.width)} · L ${format(info, state.center)}${preset ? " · " + preset : ""}${state.invert ? " · inv" : ""} · ${Math.round(state.zoom * 100)}%`;
  }

  /** Whether an 8-bit image shows as stored (the canvas renderer then skips its table). */
  function identity8bit(state) {
    return !state.invert && state.center === IDENTITY_8BIT.center && state.width === IDENTITY_8BIT.width;
  }

  /** The grey value (0-255) of every code (65,536 full depth, 256 for 8 bit) under the window,
   * inverted when the view is inverted xor the data is MONOCHROME1. */
  function greyTable(state, info) {
    const size = info.deep ? 65536 : 256;
    const table = new Uint8Array(size);
    const low = state.center - state.width / 2, flip = state.invert !== info.monochrome1;
    for (let code = 0; code < size; code++) {
      let g = ((info.offset + info.scale * code - low) / state.width) * 255;
      g = g < 0 ? 0 : g > 255 ? 255 : g;
      table[code] = flip ? 255 - g : g;
    }
    return table;
  }

  return {
    IDENTITY_8BIT, ZOOM_MIN, ZOOM_MAX, describe, defaultWindow, freshState, setPreset, windowBy, zoomAt, box,
    linkedPart, format, readout, identity8bit, greyTable,
  };
});
