/* ReaderStudy image viewer: window/level, zoom, pan, invert, linked views.
 *
 * Each view draws its 8-bit display PNG onto a canvas sized to its box (at device pixel
 * ratio), then maps the drawn pixels through a 256-entry lookup table. Windowing therefore
 * costs one pass over the screen-sized pixels, not over the 2048-px source, and stays fluid.
 * Window and level are in display grey values (0-255): centre 128, width 256 is identity.
 */
(function () {
  "use strict";

  const IDENTITY = { center: 127.5, width: 256 };

  function freshState() {
    return { center: IDENTITY.center, width: IDENTITY.width, zoom: 1, panX: 0, panY: 0, invert: false };
  }

  function buildLut(state) {
    const lut = new Uint8ClampedArray(256);
    const low = state.center - state.width / 2;
    for (let v = 0; v < 256; v++) {
      let out = ((v - low) / state.width) * 255;
      out = Math.max(0, Math.min(255, out));
      lut[v] = state.invert ? 255 - out : out;
    }
    return lut;
  }

  function isIdentity(state) {
    return !state.invert && state.center === IDENTITY.center && state.width === IDENTITY.width;
  }

  class View {
    constructor(figure, viewer) {
      this.figure = figure;
      this.viewer = viewer;
      this.canvas = figure.querySelector("canvas");
      this.ctx = this.canvas.getContext("2d", { willReadFrequently: true });
      this.own = freshState();
      this.image = new Image();
      this.loaded = false;
      this.image.onload = () => { this.loaded = true; this.render(); };
      this.image.src = figure.dataset.src;
      this.bindPointer();
    }

    get state() { return this.viewer.linked ? this.viewer.shared : this.own; }

    fit() {
      const w = this.canvas.width, h = this.canvas.height;
      const iw = this.image.naturalWidth, ih = this.image.naturalHeight;
      const scale = Math.min(w / iw, h / ih) * this.state.zoom;
      const dpr = window.devicePixelRatio || 1;
      const dw = iw * scale, dh = ih * scale;
      return { x: (w - dw) / 2 + this.state.panX * dpr, y: (h - dh) / 2 + this.state.panY * dpr, w: dw, h: dh, scale };
    }

    resize() {
      const dpr = window.devicePixelRatio || 1;
      const w = Math.max(1, Math.round(this.figure.clientWidth * dpr));
      const h = Math.max(1, Math.round(this.figure.clientHeight * dpr));
      if (this.canvas.width !== w || this.canvas.height !== h) {
        this.canvas.width = w;
        this.canvas.height = h;
      }
    }

    render() {
      this.resize();
      const ctx = this.ctx;
      ctx.fillStyle = "#000";
      ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
      if (!this.loaded) return;
      const box = this.fit();
      ctx.imageSmoothingEnabled = true;
      ctx.imageSmoothingQuality = "high";
      ctx.drawImage(this.image, box.x, box.y, box.w, box.h);
      const state = this.state;
      if (!isIdentity(state)) {
        const x0 = Math.max(0, Math.floor(box.x)), y0 = Math.max(0, Math.floor(box.y));
        const x1 = Math.min(this.canvas.width, Math.ceil(box.x + box.w));
        const y1 = Math.min(this.canvas.height, Math.ceil(box.y + box.h));
        if (x1 > x0 && y1 > y0) {
          const data = ctx.getImageData(x0, y0, x1 - x0, y1 - y0);
          const px = data.data, lut = buildLut(state);
          for (let i = 0; i < px.length; i += 4) {
            const v = lut[px[i]];
            px[i] = v; px[i + 1] = v; px[i + 2] = v;
          }
          ctx.putImageData(data, x0, y0);
        }
      }
      const readout = `W ${Math.round(state.width)} · L ${Math.round(state.center)}${state.invert ? " · inv" : ""} · ${Math.round(state.zoom * 100)}%`;
      const label = this.figure.querySelector(".view-wl");
      if (label) label.textContent = readout;
      this.viewer.showReadout(readout);
    }

    bindPointer() {
      const c = this.canvas;
      let drag = null;
      c.addEventListener("contextmenu", (e) => e.preventDefault());
      c.addEventListener("pointerdown", (e) => {
        const pan = e.button === 2 || e.button === 1 || e.shiftKey;
        drag = { x: e.clientX, y: e.clientY, pan };
        c.setPointerCapture(e.pointerId);
        e.preventDefault();
      });
      c.addEventListener("pointermove", (e) => {
        if (!drag) return;
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        drag.x = e.clientX; drag.y = e.clientY;
        const s = this.state;
        if (drag.pan) {
          s.panX += dx; s.panY += dy;
        } else {
          s.width = Math.max(1, Math.min(512, s.width + dx));
          s.center = Math.max(-128, Math.min(384, s.center + dy));
        }
        this.viewer.schedule(this);
      });
      const end = (e) => { if (drag) { drag = null; try { c.releasePointerCapture(e.pointerId); } catch (_) {} } };
      c.addEventListener("pointerup", end);
      c.addEventListener("pointercancel", end);
      c.addEventListener("wheel", (e) => {
        e.preventDefault();
        const rect = c.getBoundingClientRect();
        this.zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - rect.left, e.clientY - rect.top);
      }, { passive: false });
    }

    /* Zoom keeping the point under (cx, cy) (CSS px in the canvas) fixed. */
    zoomAt(factor, cx, cy) {
      const s = this.state;
      const newZoom = Math.max(0.2, Math.min(20, s.zoom * factor));
      const f = newZoom / s.zoom;
      const w = this.figure.clientWidth, h = this.figure.clientHeight;
      const ox = cx - w / 2, oy = cy - h / 2;
      s.panX = ox - (ox - s.panX) * f;
      s.panY = oy - (oy - s.panY) * f;
      s.zoom = newZoom;
      this.viewer.schedule(this);
    }
  }

  class Viewer {
    constructor(root) {
      this.root = root;
      this.linked = true;
      this.shared = freshState();
      this.readout = root.querySelector(".wl-readout");
      this.views = Array.from(root.querySelectorAll(".view")).map((f) => new View(f, this));
      this.pending = new Set();
      const link = root.querySelector('[data-action="link"]');
      if (link) link.addEventListener("change", () => this.setLinked(link.checked));
      root.querySelectorAll(".viewer-toolbar button[data-action]").forEach((b) =>
        b.addEventListener("click", () => this.action(b.dataset.action)));
      this.observer = new ResizeObserver(() => this.renderAll());
      this.views.forEach((v) => this.observer.observe(v.figure));
    }

    setLinked(on) {
      if (on && !this.linked && this.views.length) this.shared = { ...this.views[0].own };
      if (!on && this.linked) this.views.forEach((v) => { v.own = { ...this.shared }; });
      this.linked = on;
      const box = this.root.querySelector('[data-action="link"]');
      if (box) box.checked = on;
      this.renderAll();
    }

    showReadout(text) { if (this.readout) this.readout.textContent = text; }

    schedule(view) {
      if (this.linked) this.views.forEach((v) => this.pending.add(v)); else this.pending.add(view);
      if (this.frame) return;
      this.frame = requestAnimationFrame(() => {
        this.frame = null;
        const views = Array.from(this.pending);
        this.pending.clear();
        views.forEach((v) => v.render());
      });
    }

    renderAll() { this.views.forEach((v) => this.schedule(v)); }

    targets() { return this.linked ? [this.views[0]].filter(Boolean) : this.views; }

    action(name) {
      const apply = (fn) => { this.targets().forEach((v) => fn(v.state, v)); this.renderAll(); };
      switch (name) {
        case "invert": apply((s) => { s.invert = !s.invert; }); break;
        case "reset": apply((s) => Object.assign(s, freshState(), { invert: false })); break;
        case "zoom-in": this.targets().forEach((v) => v.zoomAt(1.25, v.figure.clientWidth / 2, v.figure.clientHeight / 2)); break;
        case "zoom-out": this.targets().forEach((v) => v.zoomAt(0.8, v.figure.clientWidth / 2, v.figure.clientHeight / 2)); break;
        case "link": this.setLinked(!this.linked); break;
        case "fullscreen": {
          const el = this.root;
          if (document.fullscreenElement) document.exitFullscreen(); else if (el.requestFullscreen) el.requestFullscreen();
          break;
        }
        default: break;
      }
    }

    destroy() { this.observer.disconnect(); }
  }

  let current = null;
  window.ReaderViewer = {
    init(container) {
      if (current) current.destroy();
      const root = container.querySelector(".viewer");
      current = root ? new Viewer(root) : null;
      return current;
    },
    action(name) { if (current) current.action(name); },
    get current() { return current; },
  };
})();
