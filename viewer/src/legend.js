// The legend: each kind with its colour and its count in the frame shown; a click hides
// or shows the kind.

// Compartments get muted colours (their shells are large and translucent), species
// vivid ones of well separated hues.
const SHELL_COLORS = ['#8fa8c8', '#c8a070', '#9cc88f', '#c88fb8', '#8fc8c0', '#c8c08f', '#a09cc8'];
const SPECIES_COLORS = ['#e6194b', '#3cb44b', '#ffe119', '#4363d8', '#f58231', '#911eb4',
  '#46f0f0', '#f032e6', '#bcf60c', '#008080', '#fabebe', '#aaffc3'];

export function kindColors(kinds) {
  let shells = 0, species = 0;
  return kinds.map((k) => (k.compartment
    ? SHELL_COLORS[shells++ % SHELL_COLORS.length]
    : SPECIES_COLORS[species++ % SPECIES_COLORS.length]));
}

export class Legend {
  constructor(table, kinds, colors, onToggle) {
    this.kinds = kinds;
    this.rows = [];
    this.hidden = kinds.map(() => false);
    this.onToggle = onToggle;
    const group = (text) => {
      const tr = table.insertRow();
      const td = tr.insertCell();
      td.colSpan = 2;
      td.className = 'group';
      td.textContent = text;
    };
    let lastWasShell = null;
    kinds.forEach((kind, k) => {
      if (kind.compartment !== lastWasShell) {
        group(kind.compartment ? 'compartments' : 'proteins');
        lastWasShell = kind.compartment;
      }
      const tr = table.insertRow();
      tr.dataset.kind = kind.name;
      tr.title = 'click to hide or show';
      const name = tr.insertCell();
      const swatch = document.createElement('span');
      swatch.className = kind.compartment ? 'swatch shell' : 'swatch';
      swatch.style.background = colors[k];
      swatch.style.borderColor = colors[k];
      name.append(swatch, ` ${kind.name}${kind.membrane ? ' (membrane)' : ''}`);
      const count = tr.insertCell();
      count.className = 'count';
      tr.onclick = () => this.setHidden(k, !this.hidden[k]);
      this.rows.push({ tr, count });
    });
  }

  setHidden(k, hidden) {
    if (k < 0 || k >= this.kinds.length) return;
    this.hidden[k] = hidden;
    this.rows[k].tr.classList.toggle('hidden', hidden);
    this.onToggle(k, hidden);
  }

  setCounts(counts) {
    this.rows.forEach((row, k) => { row.count.textContent = (counts[k] ?? 0).toLocaleString('en-US'); });
  }
}
