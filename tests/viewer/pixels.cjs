// The picture on the viewer's canvas, read back in the page and measured there.
'use strict';

// Runs in the page: the WebGL canvas (preserveDrawingBuffer) copied into a 2D canvas.
// Returns, for each colour asked for (hex, as the legend draws it):
//   lit:  pixels of that colour under the scene's white light, srgb(s * linear(c)) for a
//         brightness s >= 0.3 (within 8 of 255 per channel): a body of the kind seen
//         directly, not through a translucent shell;
//   flat: pixels within 6 per channel of srgb(factor * linear(c)) (unlit parts).
// and: background (pixels equal to the clear colour) and total pixels, plus a hash of
// the picture.
function measureInPage(args) {
  const source = document.querySelector('#view canvas');
  const w = source.width, h = source.height;
  const copy = document.createElement('canvas');
  copy.width = w; copy.height = h;
  const g = copy.getContext('2d');
  g.drawImage(source, 0, 0);
  const data = g.getImageData(0, 0, w, h).data;
  // three.js lights in linear space and writes sRGB: a lit body's pixel is
  // srgb(s * linear(c)) for a brightness s.
  const toLinear = (x) => { x /= 255; return x <= 0.04045 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); };
  const toSrgb = (x) => 255 * (x <= 0.0031308 ? 12.92 * x : 1.055 * Math.pow(x, 1 / 2.4) - 0.055);
  const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const lit = args.lit.map((hex) => rgb(hex).map(toLinear));
  const flat = args.flat.map(([hex, f]) => rgb(hex).map((x) => toSrgb(f * toLinear(x))));
  const litCounts = lit.map(() => 0), flatCounts = flat.map(() => 0);
  let background = 0, hash = 0;
  const bg = [0x10, 0x14, 0x18];
  for (let i = 0; i < data.length; i += 4) {
    const p = [data[i], data[i + 1], data[i + 2]];
    hash = (Math.imul(hash, 31) + p[0] * 65536 + p[1] * 256 + p[2]) | 0;
    if (Math.abs(p[0] - bg[0]) + Math.abs(p[1] - bg[1]) + Math.abs(p[2] - bg[2]) <= 3) { background++; continue; }
    const q = p.map(toLinear);
    lit.forEach((c, k) => {
      const s = (q[0] * c[0] + q[1] * c[1] + q[2] * c[2]) / (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
      if (s < 0.3) return;
      let worst = 0;
      for (let j = 0; j < 3; j++) worst = Math.max(worst, Math.abs(p[j] - toSrgb(Math.min(1, s * c[j]))));
      if (worst < 8) litCounts[k]++;
    });
    flat.forEach((c, k) => {
      if (Math.abs(p[0] - c[0]) <= 6 && Math.abs(p[1] - c[1]) <= 6 && Math.abs(p[2] - c[2]) <= 6) flatCounts[k]++;
    });
  }
  return { total: w * h, background, lit: litCounts, flat: flatCounts, hash, data: args.keep ? Array.from(data) : null };
}

async function measure(page, { lit = [], flat = [], keep = false } = {}) {
  return page.evaluate(measureInPage, { lit, flat, keep });
}

// Fraction of pixels that differ by more than 24 (sum over channels) between two
// pictures measured with keep: true.
function differingFraction(a, b) {
  let differ = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    const d = Math.abs(a.data[i] - b.data[i]) + Math.abs(a.data[i + 1] - b.data[i + 1]) +
      Math.abs(a.data[i + 2] - b.data[i + 2]);
    if (d > 24) differ++;
  }
  return differ / (a.data.length / 4);
}

module.exports = { measure, differingFraction };
