/* ReaderStudy image viewer: window/level, presets, zoom, pan, invert, linked views.
 *
 * A view shows its full-depth image when the server derived one (sources deeper than 8 bits:
 * an 8-bit RGB PNG whose red and green bytes hold a 16-bit code; stored value = offset +
 * scale * code, all given as data attributes), else its 8-bit display PNG. Window and level
 * are in stored units for full-depth images (the units of the DICOM window) and in display grey
 * values (0-255) for 8-bit images, as before. MONOCHROME1 data is inverted so bone is bright.
 *
 * Renderers: WebGL2 (the fragment shader applies window, level and invert on the GPU; zoom and
 * pan only move the textured quad) and a canvas-2D fallback. `?viewer=canvas` forces the
 * fallback.
 *
 * Keys: viewer-keys.js holds the one list of the viewer's keys (KEYS) and what a key asks;
 * handleKey(e) here is the one handler, for every page with a viewer (the reader's and the
 * expert's); a page calls it after its own keys. Shift+digit presets are handled here too,
 * before the page's keys (see below). The window, zoom and pan arithmetic is viewer-window.js's
 * (no DOM, tested in Node); this file reads the figures, draws and listens.
 *
 * The window a case opens at: the preset the reader last chose for this modality (the page
 * hands a memory to remember(); the reading page keeps it per reader and study in this
 * browser), else the study's default (data-default-preset on the viewer), else "default".
 */
(function () {
  "use strict";

  const MODE = new URLSearchParams(window.location.search).get("viewer") || "auto";
  const { KEYS, typing, presetKey } = window.ViewerKeys;

  /* What a view shows and in which units: read once from the figure's data attributes. */
  function describe(figure, deep = true) { return ViewerWindow.describe(figure.dataset, deep); }

  /* ---------------- WebGL2 renderer ---------------- */

  const VERT = `#version 300 es
    in vec2 a_pos;
    uniform vec4 u_box;     // image box in canvas pixels: x, y (top-left), w, h
    uniform vec2 u_canvas;  // canvas size in pixels
    out vec2 v_uv;
    void main() {
      vec2 px = u_box.xy + a_pos * u_box.zw;
      vec2 clip = px / u_canvas * 2.0 - 1.0;
      gl_Position = vec4(clip.x, -clip.y, 0.0, 1.0);
      v_uv = a_pos;
    }`;
  const FRAG = `#version 300 es
    precision highp float;
    uniform sampler2D u_tex;
    uniform vec2 u_weights;  // code = dot(rg, weights): (65280, 255) full depth, (255, 0) 8-bit
    uniform float u_offset, u_scale, u_low, u_width;
    uniform bool u_invert;
    uniform vec2 u_tap;      // a quarter screen pixel in uv when minifying (4-tap average), else 0
    in vec2 v_uv;
    out vec4 outColor;
    float valueAt(vec2 uv) { return u_offset + u_scale * dot(texture(u_tex, uv).rg, u_weights); }
    void main() {
      float v = u_tap.x > 0.0
        ? 0.25 * (valueAt(v_uv - u_tap) + valueAt(v_uv + u_tap)
                  + valueAt(v_uv + vec2(u_tap.x, -u_tap.y)) + valueAt(v_uv + vec2(-u_tap.x, u_tap.y)))
        : valueAt(v_uv);
      float g = clamp((v - u_low) / u_width, 0.0, 1.0);
      if (u_invert) g = 1.0 - g;
      outColor = vec4(g, g, g, 1.0);
    }`;

  function compile(gl, type, source) {
    const shader = gl.createShader(type);
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(shader));
    return shader;
  }

  class GLRenderer {
    static create(canvas) {
      if (MODE === "canvas" || !window.WebGL2RenderingContext) return null;
      const gl = canvas.getContext("webgl2", { alpha: false, antialias: false, depth: false, stencil: false, premultipliedAlpha: false });
      if (!gl) return null;
      try { return new GLRenderer(gl); } catch (_) { return null; }
    }

    constructor(gl) {
      this.name = "webgl";
      this.gl = gl;
      const program = gl.createProgram();
      gl.attachShader(program, compile(gl, gl.VERTEX_SHADER, VERT));
      gl.attachShader(program, compile(gl, gl.FRAGMENT_SHADER, FRAG));
      gl.bindAttribLocation(program, 0, "a_pos");
      gl.linkProgram(program);
      if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(program));
      this.program = program;
      this.u = {};
      ["u_box", "u_canvas", "u_tex", "u_weights", "u_offset", "u_scale", "u_low", "u_width", "u_invert", "u_tap"]
        .forEach((n) => { this.u[n] = gl.getUniformLocation(program, n); });
      const buffer = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([0, 0, 1, 0, 0, 1, 1, 1]), gl.STATIC_DRAW);
      gl.enableVertexAttribArray(0);
      gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
      this.texture = null;
    }

    /* Upload the PNG's bytes exactly: no colour conversion, no premultiplication, no mipmaps
     * (averaging high and low bytes separately would corrupt codes); LINEAR filtering is exact
     * because the code is a linear function of the two channels. */
    upload(image) {
      const gl = this.gl;
      if (Math.max(image.naturalWidth, image.naturalHeight) > gl.getParameter(gl.MAX_TEXTURE_SIZE)) return false;
      this.texture = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, this.texture);
      gl.pixelStorei(gl.UNPACK_COLORSPACE_CONVERSION_WEBGL, gl.NONE);
      gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
      gl.pixelStorei(gl.UNPACK_FLIP_Y_WEBGL, false);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, gl.RGBA, gl.UNSIGNED_BYTE, image);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
      return gl.getError() === gl.NO_ERROR;
    }

    draw(canvas, box, state, info) {
      const gl = this.gl;
      gl.viewport(0, 0, canvas.width, canvas.height);
      gl.clearColor(0, 0, 0, 1);
      gl.clear(gl.COLOR_BUFFER_BIT);
      if (!this.texture || !box) return;
      gl.useProgram(this.program);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.texture);
      const u = this.u;
      gl.uniform4f(u.u_box, box.x, box.y, box.w, box.h);
      gl.uniform2f(u.u_canvas, canvas.width, canvas.height);
      gl.uniform1i(u.u_tex, 0);
      if (info.deep) gl.uniform2f(u.u_weights, 65280, 255); else gl.uniform2f(u.u_weights, 255, 0);
      gl.uniform1f(u.u_offset, info.offset);
      gl.uniform1f(u.u_scale, info.scale);
      gl.uniform1f(u.u_low, state.center - state.width / 2);
      gl.uniform1f(u.u_width, state.width);
      gl.uniform1i(u.u_invert, (state.invert !== info.monochrome1) ? 1 : 0);
      if (box.scale < 1) gl.uniform2f(u.u_tap, 0.25 / box.w, 0.25 / box.h); else gl.uniform2f(u.u_tap, 0, 0);
      gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    }

    /* Waits until the GL has really drawn (a software GL may otherwise rasterise only when
     * the frame is composited): a one-pixel read-back, which waits for all earlier work. */
    finish() {
      this.gl.readPixels(0, 0, 1, 1, this.gl.RGBA, this.gl.UNSIGNED_BYTE, new Uint8Array(4));
    }

    /* Grey values of a w x h block at canvas pixel (x, y), rows top-down. */
    readPixels(canvas, x, y, w, h) {
      const rgba = new Uint8Array(4 * w * h);
      this.gl.readPixels(x, canvas.height - y - h, w, h, this.gl.RGBA, this.gl.UNSIGNED_BYTE, rgba);
      const out = new Array(w * h);
      for (let row = 0; row < h; row++) {
        for (let col = 0; col < w; col++) out[row * w + col] = rgba[4 * ((h - 1 - row) * w + col)];
      }
      return out;
    }

    destroy() {
      const lose = this.gl.getExtension("WEBGL_lose_context");
      if (lose) lose.loseContext();
    }
  }

  /* ---------------- Canvas-2D fallback ---------------- */

  class CanvasRenderer {
    constructor(canvas) {
      this.name = "canvas";
      this.ctx = canvas.getContext("2d", { willReadFrequently: true });
      this.image = null;
      this.codes = null;  // Uint16Array of full-depth codes, once decoded
      this.lutKey = "";
      this.frame = null;
    }

    upload(image, info) {
      this.image = image;
      if (info.deep) {
        const c = document.createElement("canvas");
        c.width = image.naturalWidth; c.height = image.naturalHeight;
        const ctx = c.getContext("2d", { willReadFrequently: true });
        ctx.drawImage(image, 0, 0);
        const rgba = ctx.getImageData(0, 0, c.width, c.height).data;
        const codes = new Uint16Array(c.width * c.height);
        for (let i = 0, j = 0; i < codes.length; i++, j += 4) codes[i] = (rgba[j] << 8) | rgba[j + 1];
        this.codes = codes;
      }
      return true;
    }

    lut(state, info) {
      const key = `${state.center}|${state.width}|${state.invert}`;
      if (key === this.lutKey) return this.lutTable;
      this.lutKey = key; this.lutTable = ViewerWindow.greyTable(state, info);
      return this.lutTable;
    }

    draw(canvas, box, state, info) {
      const ctx = this.ctx, W = canvas.width, H = canvas.height;
      if (!this.image || !box) { ctx.fillStyle = "#000"; ctx.fillRect(0, 0, W, H); return; }
      const x0 = Math.max(0, Math.floor(box.x)), y0 = Math.max(0, Math.floor(box.y));
      const x1 = Math.min(W, Math.ceil(box.x + box.w)), y1 = Math.min(H, Math.ceil(box.y + box.h));
      const lut = this.lut(state, info);
      if (!info.deep) {
        // The 8-bit path: draw the display PNG, then map the drawn pixels through the LUT.
        ctx.fillStyle = "#000";
        ctx.fillRect(0, 0, W, H);
        ctx.imageSmoothingEnabled = true;
        ctx.imageSmoothingQuality = "high";
        ctx.drawImage(this.image, box.x, box.y, box.w, box.h);
        if (ViewerWindow.identity8bit(state) || x1 <= x0 || y1 <= y0) return;
        const data = ctx.getImageData(x0, y0, x1 - x0, y1 - y0);
        const px = data.data;
        for (let i = 0; i < px.length; i += 4) { const v = lut[px[i]]; px[i] = v; px[i + 1] = v; px[i + 2] = v; }
        ctx.putImageData(data, x0, y0);
        return;
      }
      // Full depth: nearest source code for every screen pixel, through a 65,536-entry LUT.
      if (!this.frame || this.frame.width !== W || this.frame.height !== H) this.frame = ctx.createImageData(W, H);
      const out = new Uint32Array(this.frame.data.buffer);
      out.fill(0xff000000);
      const iw = this.image.naturalWidth, ih = this.image.naturalHeight, codes = this.codes;
      if (x1 > x0 && y1 > y0) {
        const cols = new Int32Array(x1 - x0);
        for (let x = x0; x < x1; x++) cols[x - x0] = Math.min(iw - 1, Math.max(0, Math.floor((x + 0.5 - box.x) / box.scale)));
        for (let y = y0; y < y1; y++) {
          const sy = Math.min(ih - 1, Math.max(0, Math.floor((y + 0.5 - box.y) / box.scale)));
          const row = sy * iw;
          let o = y * W + x0;
          for (let i = 0; i < cols.length; i++, o++) {
            const g = lut[codes[row + cols[i]]];
            out[o] = 0xff000000 | (g << 16) | (g << 8) | g;
          }
        }
      }
      ctx.putImageData(this.frame, 0, 0);
    }

    readPixels(canvas, x, y, w, h) {
      const rgba = this.ctx.getImageData(x, y, w, h).data;
      const out = new Array(w * h);
      for (let i = 0; i < out.length; i++) out[i] = rgba[4 * i];
      return out;
    }

    destroy() {}
  }

  /* ---------------- Views ---------------- */

  class View {
    /* `size`: the canvas size (device px) to draw at while the figure is not in the document
     * (a case prepared ahead, see ReaderViewer.prepare); null: the figure's own size. */
    constructor(figure, viewer, size = null) {
      this.figure = figure;
      this.viewer = viewer;
      this.size = size;
      this.canvas = figure.querySelector("canvas");
      this.info = describe(figure);
      this.modality = figure.dataset.modality || "image";
      this.state = ViewerWindow.freshState(this.info);
      this.startWindow();
      this.renderer = GLRenderer.create(this.canvas) || new CanvasRenderer(this.canvas);
      this.loaded = false;
      this.failed = false; // an image did not load (the network, most likely): not as intended
      this.drawnKey = "";
      this.settled = new Promise((resolve) => { this.settle = resolve; });
      this.load(this.info.src);
      this.bindPointer();
    }

    load(src) {
      const image = new Image();
      image.decoding = "async";
      this.loading = image;
      image.onload = () => {
        if (this.loading !== image) return;
        if (!this.renderer.upload(image, this.info)) this.useCanvas(image);
        this.image = image;
        this.loaded = true;
        this.viewer.schedule(this);
      };
      image.onerror = () => {
        if (this.loading !== image) return;
        this.failed = true;
        // No full-depth file: show the 8-bit display image as before.
        if (this.info.deep) {
          this.info = describe(this.figure, false);
          this.state = ViewerWindow.freshState(this.info);
          this.startWindow();
          this.load(this.info.src);
        } else this.settle();
      };
      image.src = src;
    }

    /* WebGL unavailable for this image (or its context was lost): a fresh 2-D canvas. */
    useCanvas(image) {
      const fresh = document.createElement("canvas");
      fresh.setAttribute("aria-label", this.canvas.getAttribute("aria-label") || "");
      this.canvas.replaceWith(fresh);
      this.canvas = fresh;
      this.renderer.destroy();
      this.renderer = new CanvasRenderer(fresh);
      if (image) this.renderer.upload(image, this.info);
    }

    get label() { return this.figure.querySelector("figcaption")?.textContent || ""; }

    box() {
      if (!this.loaded) return null;
      return ViewerWindow.box(this.canvas.width, this.canvas.height, this.image.naturalWidth, this.image.naturalHeight, this.state, window.devicePixelRatio || 1);
    }

    resize() {
      const dpr = window.devicePixelRatio || 1;
      const size = this.figure.isConnected ? null : this.size;
      const w = size ? size.width : Math.max(1, Math.round(this.figure.clientWidth * dpr));
      const h = size ? size.height : Math.max(1, Math.round(this.figure.clientHeight * dpr));
      if (this.canvas.width !== w || this.canvas.height !== h) { this.canvas.width = w; this.canvas.height = h; }
    }

    /* Draws the view unless the canvas already shows it at this size, window, zoom and pan
     * (`force`: draw anyway, e.g. before reading pixels back from a composited WebGL canvas). */
    render(force = false) {
      this.resize();
      const s = this.state;
      const key = this.loaded ? [this.canvas.width, this.canvas.height, s.center, s.width, s.zoom, s.panX, s.panY, s.invert, this.info.deep, this.renderer.name].join("|") : "";
      if (!force && key && key === this.drawnKey) return;
      this.renderer.draw(this.canvas, this.box(), this.state, this.info);
      // Prepared ahead (not on screen yet): the drawing is done now, not when first shown.
      if (!this.figure.isConnected && this.renderer.finish) this.renderer.finish();
      this.drawnKey = key;
      if (this.loaded) this.settle();
    }

    readout() {
      const s = this.state;
      // One readout for the viewer: with several views it names the one it describes.
      const which = this.viewer.views.length > 1 ? `${this.label}: ` : "";
      const presetLabel = s.preset && this.info.deep ? this.viewer.presetLabel(s.preset) : "";
      return ViewerWindow.readout(s, this.info, { which, presetLabel });
    }

    windowBy(dx, dy) { ViewerWindow.windowBy(this.state, this.info, dx, dy); }

    /* The window this case opens at (and `w` returns to): the reader's last choice for this
     * modality, else the study's default, else the image's own default. */
    startWindow() {
      const name = this.viewer.startPreset(this);
      if (!this.setPreset(name)) this.setPreset("default");
      this.start = this.state.preset;
    }

    setPreset(name) { return ViewerWindow.setPreset(this.state, this.info, name); }

    /* Zoom keeping the point under (cx, cy) (CSS px in the view) fixed. */
    zoomAt(factor, cx, cy) {
      ViewerWindow.zoomAt(this.state, factor, cx - this.figure.clientWidth / 2, cy - this.figure.clientHeight / 2);
    }

    /* Grey values (0-255) as shown, read back after a fresh render: for tests. */
    readPixels(x, y, w = 1, h = 1) {
      this.render(true);
      return this.renderer.readPixels(this.canvas, Math.floor(x), Math.floor(y), w, h);
    }

    readPixel(x, y) { return this.readPixels(x, y)[0]; }

    bindPointer() {
      const el = this.figure;
      let drag = null;
      el.addEventListener("contextmenu", (e) => e.preventDefault());
      el.addEventListener("pointerdown", (e) => {
        drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.button === 1 || e.shiftKey };
        try { el.setPointerCapture(e.pointerId); } catch (_) { /* synthetic events */ }
        e.preventDefault();
      });
      el.addEventListener("pointermove", (e) => {
        if (!drag) return;
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        drag.x = e.clientX; drag.y = e.clientY;
        this.viewer.apply(this, (v) => {
          if (drag.pan) { v.state.panX += dx; v.state.panY += dy; } else v.windowBy(dx, dy);
        });
      });
      const end = (e) => { if (drag) { drag = null; try { el.releasePointerCapture(e.pointerId); } catch (_) { /* synthetic events */ } } };
      el.addEventListener("pointerup", end);
      el.addEventListener("pointercancel", end);
      el.addEventListener("wheel", (e) => {
        e.preventDefault();
        const rect = el.getBoundingClientRect();
        const factor = Math.exp(-e.deltaY * 0.0015), cx = e.clientX - rect.left, cy = e.clientY - rect.top;
        this.viewer.apply(this, (v) => v.zoomAt(factor, cx, cy));
      }, { passive: false });
    }

    destroy() {
      this.loading = null;
      this.settle();
      this.renderer.destroy();
      // Still on screen (the viewer is made again on the same case): a fresh canvas, as a
      // canvas keeps its (now lost) context.
      if (this.figure.isConnected) {
        const fresh = this.canvas.cloneNode(false);
        this.canvas.replaceWith(fresh);
        this.canvas = fresh;
      }
    }
  }

  class Viewer {
    /* `sizes`: per view, the canvas size to draw at before the viewer is in the document. */
    constructor(root, sizes = null) {
      this.root = root;
      this.linked = true;
      this.frames = 0;
      this.readoutEl = root.querySelector(".wl-readout");
      this.presetButtons = Array.from(root.querySelectorAll("[data-preset]"));
      this.views = Array.from(root.querySelectorAll(".view")).map((f, i) => new View(f, this, sizes && sizes[i]));
      // Every view drawn (or given up on: no image could be loaded).
      this.ready = Promise.all(this.views.map((v) => v.settled));
      this.active = this.views[0] || null;
      this.pending = new Set();
      const presets = root.querySelector(".wl-presets");
      if (presets && this.views.some((v) => v.info.deep)) presets.hidden = false;
      this.presetButtons.forEach((b) => b.addEventListener("click", () => this.preset(b.dataset.preset)));
      const link = root.querySelector('[data-action="link"]');
      if (link) link.addEventListener("change", () => this.setLinked(link.checked));
      root.querySelectorAll(".viewer-toolbar button[data-action]").forEach((b) =>
        b.addEventListener("click", () => this.action(b.dataset.action)));
      // Redrawn in the same frame as the layout that resized them (after layout, before
      // paint): a view never shows a stretched image, and one the viewer prepared ahead at
      // the size it has on screen is not drawn again (render() skips an unchanged view).
      this.observer = new ResizeObserver((entries) => {
        entries.forEach((entry) => {
          const view = this.views.find((v) => v.figure === entry.target);
          if (view && view.loaded) { this.pending.delete(view); view.render(); }
        });
      });
      if (root.isConnected) this.attach();
    }

    /* On screen: follow the views' sizes (the observer reports each view's size once at the
     * start, in the first frame that shows it). */
    attach() {
      if (this.attached) return;
      this.attached = true;
      this.views.forEach((v) => this.observer.observe(v.figure));
    }

    /** The preset a view of this viewer starts at (see the file's comment). */
    startPreset(view) {
      const chosen = memory && view.info.deep ? memory.get(view.modality) : null;
      return chosen || this.root.dataset.defaultPreset || "default";
    }

    /* Shown now: a case prepared ahead started at the preset remembered then; the reader may
     * have chosen another since. Views still at their start window move to the current one. */
    restart() {
      this.views.forEach((v) => {
        if (v.state.preset !== v.start || v.viewer.startPreset(v) === v.start) return;
        v.startWindow();
        this.schedule(v);
      });
    }

    presetLabel(name) {
      const button = this.presetButtons.find((b) => b.dataset.preset === name);
      return button ? button.firstChild.textContent.trim() : name;
    }

    /* Apply a pointer operation to the view under the pointer, and to all views when linked. */
    apply(view, fn) {
      this.active = view;
      (this.linked ? this.views : [view]).forEach((v) => { fn(v); this.schedule(v); });
    }

    setLinked(on) {
      if (on && !this.linked && this.views.length) {
        const shared = ViewerWindow.linkedPart(this.views[0].state);
        this.views.forEach((v) => Object.assign(v.state, shared));
      }
      this.linked = on;
      const box = this.root.querySelector('[data-action="link"]');
      if (box) box.checked = on;
      this.renderAll();
    }

    schedule(view) {
      this.pending.add(view);
      if (this.frame) return;
      this.frame = requestAnimationFrame(() => {
        this.frame = null;
        const views = Array.from(this.pending);
        this.pending.clear();
        views.forEach((v) => v.render());
        this.frames += 1;
        const shown = this.active && this.active.loaded ? this.active : views[0];
        if (this.readoutEl && shown) this.readoutEl.textContent = shown.readout();
      });
    }

    renderAll() { this.views.forEach((v) => this.schedule(v)); }

    /** The reader chose a preset (key or button): every view, and remembered per modality. */
    preset(name) {
      let any = false;
      this.views.forEach((v) => {
        const applied = v.setPreset(name);
        if (applied && memory) memory.set(v.modality, name);
        any = applied || any;
      });
      this.renderAll();
      return any;
    }

    presetByKey(key) {
      const button = this.presetButtons.find((b) => b.dataset.key === key);
      return button && this.views.some((v) => v.info.deep) ? this.preset(button.dataset.preset) : false;
    }

    action(name) {
      const each = (fn) => { this.views.forEach((v) => fn(v)); this.renderAll(); };
      const centre = (v, f) => v.zoomAt(f, v.figure.clientWidth / 2, v.figure.clientHeight / 2);
      switch (name) {
        case "invert": each((v) => { v.state.invert = !v.state.invert; }); break;
        case "fit": each((v) => Object.assign(v.state, { zoom: 1, panX: 0, panY: 0 })); break;
        case "window": each((v) => { v.startWindow(); }); break;
        case "zoom-in": each((v) => centre(v, 1.25)); break;
        case "zoom-out": each((v) => centre(v, 0.8)); break;
        case "link": this.setLinked(!this.linked); break;
        case "fullscreen": {
          // The page's full-screen area where it marks one (the reader's: the question stays
          // beside the image), else the viewer alone.
          const el = this.root.closest("[data-fullscreen-area]") || this.root;
          if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
          else if (el.requestFullscreen) el.requestFullscreen().catch(() => {});
          break;
        }
        default: break;
      }
    }

    destroy() {
      if (this.frame) cancelAnimationFrame(this.frame);
      this.frame = null;
      this.observer.disconnect();
      this.views.forEach((v) => v.destroy());
    }
  }

  /* ---------------- Keys ---------------- */

  /** Handles a keydown meant for the viewer (viewer-keys.js): true when it did (and the page
   * should not). */
  function handleKey(e) {
    const asked = current ? window.ViewerKeys.action(e) : null;
    if (!asked) return false;
    e.preventDefault();
    if (asked.preset) current.presetByKey(asked.preset);
    else current.action(asked.action);
    return true;
  }

  /* Presets before the page's own keys: they never reach them (1-4 choose options, and some
   * layouts give a digit for Shift+digit). Not while the keys are off or the help is open. */
  document.addEventListener("keydown", (e) => {
    if (!presetKey(e)) return;
    const keys = document.getElementById("shortcuts-enabled");
    const help = document.getElementById("help");
    if ((keys && !keys.checked) || (help && !help.hidden)) return;
    if (handleKey(e)) e.stopPropagation();
  }, true);

  let current = null;
  let memory = null; // { get(modality), set(modality, name) }: the page's memory of preset choices
  const prepared = new WeakMap(); // viewer root (not yet shown) -> its Viewer

  /* Releases a viewer no longer shown. Off screen, after the next frame: losing a WebGL
   * context takes tens of milliseconds with software GL, and the next case shows first. */
  function retire(viewer) {
    if (viewer.root.isConnected) { viewer.destroy(); return; }
    requestAnimationFrame(() => setTimeout(() => viewer.destroy(), 0));
  }

  /* Canvas sizes for a case's views before it is shown: those of the views on screen when the
   * layout is the same (same number of views), else an even split of the views' area. */
  function expectedSizes(root) {
    const count = root.querySelectorAll(".view").length;
    if (current && current.views.length === count) {
      return current.views.map((v) => ({ width: v.canvas.width, height: v.canvas.height }));
    }
    const area = document.querySelector(".viewer .views");
    if (!area || !count) return null;
    const dpr = window.devicePixelRatio || 1;
    const gap = parseFloat(getComputedStyle(area).columnGap) || 0;
    const width = Math.max(1, Math.round(((area.clientWidth - gap * (count - 1)) / count) * dpr));
    const height = Math.max(1, Math.round(area.clientHeight * dpr));
    return Array.from({ length: count }, () => ({ width, height }));
  }

  window.ReaderViewer = {
    /* Shows the viewer in `container` (now in the document): the one prepared for it if any,
     * else a new one. The previous viewer is released. */
    init(container) {
      const root = container.querySelector(".viewer");
      const ready = root && prepared.get(root);
      if (root) prepared.delete(root);
      if (current && current !== ready) retire(current);
      current = ready || (root ? new Viewer(root) : null);
      if (current) { current.attach(); if (ready) current.restart(); }
      return current;
    },
    /* Loads, decodes, uploads and draws the images of `container` (a case not yet in the
     * document) at the size they will have, so init() after it is shown only shows them.
     * Returns a promise settled when its views are drawn. */
    prepare(container) {
      const root = container.querySelector(".viewer");
      if (!root || root.isConnected) return Promise.resolve();
      let viewer = prepared.get(root);
      if (!viewer) { viewer = new Viewer(root, expectedSizes(root)); prepared.set(root, viewer); }
      return viewer.ready;
    },
    /* Whether prepare() made `container` (not shown yet) ready as intended: every view drawn
     * from the image the server meant. A case prepared while the connection failed is not:
     * it is shown from fresh nodes instead, which load its images again. */
    preparedWell(container) {
      const root = container && container.querySelector(".viewer");
      const viewer = root && prepared.get(root);
      return !!viewer && viewer.views.every((v) => !v.failed);
    },
    /* Releases what prepare() made for a case that will not be shown. */
    discard(container) {
      const root = container && container.querySelector(".viewer");
      const viewer = root && prepared.get(root);
      if (viewer) { prepared.delete(root); viewer.destroy(); }
    },
    action(name) { if (current) current.action(name); },
    /* The page's memory of the reader's preset choices (per modality); null: none. */
    remember(m) { memory = m; },
    KEYS,
    handleKey,
    typing,
    get current() { return current; },
  };
})();
