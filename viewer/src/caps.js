// Where the clipping plane cuts a compartment, its membrane shows as an annulus: the
// circle of the outer surface (radius r) minus that of the inner one (r - thickness), so
// the membrane's thickness is drawn to scale.
import * as THREE from 'three';

const SEGMENTS = 64;

export function buildCaps(frame, kinds, colors, hidden, clip) {
  const { axis, position: c } = clip;
  const u = (axis + 1) % 3, v = (axis + 2) % 3;  // the plane's own axes
  const rings = [];
  for (let i = 0; i < frame.count; i++) {
    const k = frame.kind[i];
    if (k >= kinds.length || !kinds[k].compartment || hidden.has(k)) continue;
    const d = frame.position[3 * i + axis] - c;
    const r = frame.radius[i];
    if (Math.abs(d) >= r) continue;
    const inner = r - frame.thickness[i];
    rings.push({
      i, k,
      outer: Math.sqrt(r * r - d * d),
      inner: Math.abs(d) < inner ? Math.sqrt(inner * inner - d * d) : 0,
    });
  }
  if (rings.length === 0) return null;
  const vertices = new Float32Array(rings.length * SEGMENTS * 6 * 3);
  const vertexColors = new Float32Array(vertices.length);
  let at = 0;
  const point = (ring, radius, angle) => {
    const p = [0, 0, 0];
    p[axis] = c;
    p[u] = frame.position[3 * ring.i + u] + radius * Math.cos(angle);
    p[v] = frame.position[3 * ring.i + v] + radius * Math.sin(angle);
    return p;
  };
  for (const ring of rings) {
    // A darker shade of the kind's colour: the cut face reads as solid material.
    const color = colors[ring.k].clone().multiplyScalar(0.75);
    for (let s = 0; s < SEGMENTS; s++) {
      const a0 = (2 * Math.PI * s) / SEGMENTS, a1 = (2 * Math.PI * (s + 1)) / SEGMENTS;
      const o0 = point(ring, ring.outer, a0), o1 = point(ring, ring.outer, a1);
      const i0 = point(ring, ring.inner, a0), i1 = point(ring, ring.inner, a1);
      for (const p of [o0, o1, i1, o0, i1, i0]) {
        vertices.set(p, at);
        vertexColors.set([color.r, color.g, color.b], at);
        at += 3;
      }
    }
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(vertices, 3));
  geometry.setAttribute('color', new THREE.BufferAttribute(vertexColors, 3));
  const material = new THREE.MeshBasicMaterial({ vertexColors: true, side: THREE.DoubleSide,
    polygonOffset: true, polygonOffsetFactor: -1 });
  return new THREE.Mesh(geometry, material);
}
