// The timeline: play / pause / step / scrub, the frame's step and model time, and marks
// at the frames whose output interval holds budding or fusion events (/observables).

const PLAY_MS = 150;  // the least time a frame stays on screen while playing

const $ = (id) => document.getElementById(id);

function formatTime(t, unit) {
  const text = Math.abs(t) >= 1e5 || (t !== 0 && Math.abs(t) < 1e-3) ? t.toExponential(3)
    : Number(t.toPrecision(6)).toString();
  return `${text} ${unit}`;
}

export class Timeline {
  constructor(meta, onShow) {
    this.onShow = onShow;
    this.index = 0;
    this.playing = false;
    this.timer = null;
    this.scrub = $('scrub');
    this.scrub.oninput = () => this.go(Number(this.scrub.value));
    $('play').onclick = () => this.toggle();
    $('step-back').onclick = () => { this.pause(); this.go(this.index - 1); };
    $('step-forward').onclick = () => { this.pause(); this.go(this.index + 1); };
    window.addEventListener('keydown', (e) => {
      if (e.target.tagName === 'INPUT' && e.target.type === 'range') return;
      if (e.key === ' ') { e.preventDefault(); this.toggle(); }
      if (e.key === 'ArrowLeft') { this.pause(); this.go(this.index - 1); }
      if (e.key === 'ArrowRight') { this.pause(); this.go(this.index + 1); }
    });
    this.update(meta);
  }

  update(meta) {
    this.meta = meta;
    this.scrub.max = String(Math.max(0, meta.frames - 1));
    this.drawMarkers();
    this.drawClock();
  }

  drawMarkers() {
    const box = $('markers');
    box.replaceChildren();
    const frames = this.meta.frames;
    const roles = new Set(this.meta.reactions.filter((r) => r.role).map((r) => r.role));
    $('key').replaceChildren(...[...roles].sort().map((role) => {
      const item = document.createElement('span');
      item.innerHTML = `<span class="swatch-mark ${role}"></span>${role}`;
      return item;
    }));
    if (frames < 2) return;
    for (const rule of this.meta.reactions) {
      if (!rule.role) continue;
      rule.events.forEach((count, f) => {
        if (count <= 0 || f >= frames) return;
        const mark = document.createElement('div');
        mark.className = `marker ${rule.role}`;
        mark.style.left = `${(100 * f) / (frames - 1)}%`;
        mark.title = `frame ${f}: ${count} ${rule.name} event${count > 1 ? 's' : ''} (${rule.rule})`;
        mark.onclick = () => { this.pause(); this.go(f); };
        box.appendChild(mark);
      });
    }
  }

  drawClock(frame) {
    const m = this.meta;
    const i = this.index;
    const step = frame ? frame.step : m.steps[i];
    const time = frame ? frame.time : m.times[i];
    if (m.frames === 0 || step === undefined) {
      $('clock').textContent = 'no frame yet';
      return;
    }
    $('clock').textContent = `frame ${i} / ${m.frames - 1} · step ${step.toLocaleString('en-US')}` +
      ` · t = ${formatTime(time, m.time_unit)}`;
  }

  go(index) {
    const last = this.meta.frames - 1;
    if (last < 0) return;
    this.index = Math.min(Math.max(0, index), last);
    this.scrub.value = String(this.index);
    this.drawClock();
    this.onShow(this.index);
  }

  shown(frame) { if (frame.index === this.index) this.drawClock(frame); }

  toggle() { if (this.playing) this.pause(); else this.play(); }

  play() {
    if (this.index >= this.meta.frames - 1) this.go(0);
    this.playing = true;
    $('play').innerHTML = '&#10074;&#10074;';
    const tick = () => {
      if (!this.playing) return;
      if (this.index >= this.meta.frames - 1) { this.pause(); return; }
      this.go(this.index + 1);
      this.timer = setTimeout(tick, PLAY_MS);
    };
    this.timer = setTimeout(tick, PLAY_MS);
  }

  pause() {
    this.playing = false;
    clearTimeout(this.timer);
    $('play').innerHTML = '&#9654;';
  }
}
