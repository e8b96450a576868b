// The trajectory as the server of `nestsim view` gives it: /api/meta (JSON) and
// /api/frame/N (binary; layout in app/view/view_trajectory.h, encode_frame).

const MAGIC = 0x4656534e; // "NSVF"

// Throws Error with the server's message (which names the file) when it has one.
async function fetchOrThrow(url) {
  let response;
  try {
    response = await fetch(url, { cache: 'no-store' });
  } catch (e) {
    throw new Error(`the nestsim view server does not answer (${url}): was it stopped?`);
  }
  if (!response.ok) {
    let message = `${url}: HTTP ${response.status}`;
    try {
      const body = await response.json();
      if (body.error) message = body.error;
    } catch (e) { /* not JSON: keep the status */ }
    throw new Error(message);
  }
  return response;
}

export async function fetchMeta() {
  return (await fetchOrThrow('api/meta')).json();
}

export function parseFrame(buffer) {
  const view = new DataView(buffer);
  if (buffer.byteLength < 44 || view.getUint32(0, true) !== MAGIC)
    throw new Error('the server sent a frame this page cannot read');
  const frame = {
    index: view.getUint32(8, true),
    live: view.getUint32(12, true),
    count: view.getUint32(16, true),
    stride: view.getUint32(20, true),
    step: view.getFloat64(24, true),
    time: view.getFloat64(32, true),
  };
  const kinds = view.getUint32(40, true);
  let at = 44;
  frame.kindCounts = Array.from(new Uint32Array(buffer, at, kinds));
  at += 4 * kinds;
  const n = frame.count;
  frame.position = new Float32Array(buffer, at, 3 * n); at += 12 * n;
  frame.radius = new Float32Array(buffer, at, n); at += 4 * n;
  frame.thickness = new Float32Array(buffer, at, n); at += 4 * n;
  frame.id = new Uint32Array(buffer, at, n); at += 4 * n;
  frame.kind = new Uint16Array(buffer, at, n);
  return frame;
}

// Frames on demand, the last few kept (scrubbing back and forth reads each once).
export class FrameSource {
  constructor(maxBodies, keep = 6) {
    this.maxBodies = maxBodies;
    this.keep = keep;
    this.cache = new Map();
  }

  clear() { this.cache.clear(); }

  async get(index) {
    const key = index;
    if (this.cache.has(key)) {
      const hit = this.cache.get(key);
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const response = await fetchOrThrow(`api/frame/${index}?max=${this.maxBodies}`);
    const frame = parseFrame(await response.arrayBuffer());
    this.cache.set(key, frame);
    while (this.cache.size > this.keep) this.cache.delete(this.cache.keys().next().value);
    return frame;
  }
}
