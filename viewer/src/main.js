// The page of `nestsim view`: the trajectory's description, then frames on demand.
import { fetchMeta, FrameSource } from './data.js';
import { Scene } from './scene.js';
import { Legend, kindColors } from './legend.js';
import { Timeline } from './timeline.js';

const MAX_BODIES = 2000000;  // the server samples proteins past this (level of detail)
const POLL_MS = 2000;        // how often the file is checked for new frames

const $ = (id) => document.getElementById(id);

function showError(message) {
  const box = $('error');
  box.textContent = `nestsim view: ${message}`;
  box.hidden = false;
  viewer.error = message;
}

function clearError() {
  $('error').hidden = true;
  viewer.error = null;
}

// What the tests (tests/viewer) and the benchmark read and drive.
const viewer = { ready: false, error: null, frameIndex: -1, meta: null };
window.nestsimViewer = viewer;

class App {
  constructor(meta) {
    this.meta = meta;
    this.source = new FrameSource(MAX_BODIES);
    this.colors = kindColors(meta.kinds);
    this.scene = new Scene($('view'), meta.kinds, this.colors, meta.box);
    // ?detail=0 (finest spheres) to 3 (points) fixes the level of detail (scene.js).
    const detail = new URLSearchParams(window.location.search).get('detail');
    if (detail !== null && /^[0-3]$/.test(detail)) this.scene.fixedLevel = Number(detail);
    this.legend = new Legend($('legend'), meta.kinds, this.colors,
      (k, hidden) => this.scene.setHidden(k, hidden));
    this.timeline = new Timeline(meta, (index) => this.show(index));
    this.scene.onDetail = () => this.updateDetail();
    this.wanted = 0;
    this.loading = false;
    $('file').textContent = meta.file;
    this.wireTools();
  }

  wireTools() {
    $('reset').onclick = () => this.scene.resetView();
    $('screenshot').onclick = () => this.screenshot();
    const clip = () => {
      const axis = Number($('clip-axis').value);
      const position = (Number($('clip-position').value) / 1000) * this.meta.box[axis];
      this.scene.setClip($('clip').checked, axis, position);
    };
    $('clip').onchange = clip;
    $('clip-axis').onchange = clip;
    $('clip-position').oninput = () => { $('clip').checked = true; clip(); };
    window.addEventListener('keydown', (e) => {
      if (e.target.tagName === 'INPUT' && e.target.type !== 'checkbox') return;
      if (e.key === 'r' || e.key === 'R') this.scene.resetView();
    });
  }

  // The level of detail, when it is not the finest: sampled proteins, coarse spheres.
  updateDetail() {
    const frame = this.scene.frame;
    if (!frame) return;
    const sampled = frame.stride > 1
      ? `${frame.live.toLocaleString('en-US')} bodies: 1 in ${frame.stride} proteins sent. ` : '';
    $('lod').textContent = sampled + this.scene.detailText();
    $('lod').hidden = $('lod').textContent === '';
  }

  screenshot() {
    this.scene.render();
    const link = document.createElement('a');
    const name = this.meta.file.split('/').pop().replace(/\.h5$/, '');
    link.download = `${name}-frame${this.timeline.index}.png`;
    link.href = this.scene.renderer.domElement.toDataURL('image/png');
    link.click();
  }

  // Shows frame `index` once it arrives; while one is loading, only the latest wish is
  // kept, so scrubbing never queues a backlog.
  async show(index) {
    this.wanted = index;
    if (this.loading) return;
    this.loading = true;
    try {
      while (true) {
        const target = this.wanted;
        const frame = await this.source.get(target);
        if (target !== this.wanted) continue;
        this.scene.setFrame(frame);
        this.legend.setCounts(frame.kindCounts);
        this.timeline.shown(frame);
        this.updateDetail();
        viewer.frameIndex = target;
        clearError();
        break;
      }
    } catch (e) {
      showError(e.message);
    } finally {
      this.loading = false;
    }
  }

  // New frames written by a running simulation; a file that went bad is reported.
  async poll() {
    try {
      const meta = await fetchMeta();
      if (meta.frames !== this.meta.frames) {
        const atEnd = this.timeline.index >= this.meta.frames - 1;
        this.meta = meta;
        viewer.meta = meta;
        this.timeline.update(meta);
        if (this.meta.frames > 0 && (viewer.frameIndex < 0 || (atEnd && !this.timeline.playing)))
          this.timeline.go(meta.frames - 1);
      }
      if (viewer.error && viewer.frameIndex >= 0) {
        this.source.clear();
        await this.show(this.timeline.index);
      }
    } catch (e) {
      showError(e.message);
    }
  }
}

async function boot() {
  let meta;
  try {
    meta = await fetchMeta();
  } catch (e) {
    showError(e.message);
    setTimeout(boot, POLL_MS);
    return;
  }
  clearError();
  viewer.meta = meta;
  const app = new App(meta);
  viewer.app = app;
  viewer.kindColor = (name) => {
    const k = meta.kinds.findIndex((kind) => kind.name === name);
    return k < 0 ? null : app.colors[k];
  };
  viewer.show = (index) => app.timeline.go(index);
  viewer.setHidden = (name, hidden) => app.legend.setHidden(meta.kinds.findIndex((k) => k.name === name), hidden);
  viewer.setClip = (on, axis, fraction) => {
    $('clip').checked = on;
    $('clip-axis').value = String(axis);
    $('clip-position').value = String(Math.round(fraction * 1000));
    $('clip').onchange();
  };
  viewer.measureFps = (ms) => app.scene.measureFps(ms);
  if (meta.frames > 0) await app.show(0);
  else showError(`${meta.file} holds no frame yet; waiting for the run to write one`);
  viewer.ready = true;
  setInterval(() => app.poll(), POLL_MS);
}

boot();
