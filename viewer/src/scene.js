// The 3D scene: compartments as translucent shells (outer and inner membrane surface)
// with their membrane's cross-section drawn where the clipping plane cuts them,
// proteins as instanced spheres (one InstancedMesh per kind), or as points past
// POINTS_FROM proteins (the level of detail of very large frames).
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { buildCaps } from './caps.js';

export const POINTS_FROM = 1000000;

// How proteins are drawn, finest first: icosahedra of 320, 80 or 20 triangles, or
// points (a screen-facing square, counted as two triangles).
const LEVELS = [
  { detail: 2, triangles: 320 },
  { detail: 1, triangles: 80 },
  { detail: 0, triangles: 20 },
  { points: true, triangles: 2 },
];
const FIRST_TRIANGLES = 2e6;  // before any picture is timed: at most this many
const TARGET_MS = 50;         // the time a picture should take (20 per second)

// The finest level whose picture fits `budget` triangles; points from POINTS_FROM on.
function levelFor(proteins, budget) {
  if (proteins >= POINTS_FROM) return LEVELS.length - 1;
  const level = LEVELS.findIndex((l) => proteins * l.triangles <= budget);
  return level < 0 ? LEVELS.length - 1 : level;
}

export class Scene {
  constructor(container, kinds, colors, box) {
    this.kinds = kinds;
    this.colors = colors.map((c) => new THREE.Color(c));
    this.box = box;
    this.hidden = new Set();
    this.clip = { on: false, axis: 2, position: box[2] / 2 };
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(window.devicePixelRatio);
    this.renderer.setSize(container.clientWidth, container.clientHeight);
    this.renderer.setClearColor(0x101418);
    container.appendChild(this.renderer.domElement);
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(40, container.clientWidth / container.clientHeight,
      1, 1);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.addEventListener('change', () => this.render());
    this.scene.add(new THREE.AmbientLight(0xffffff, 0.55));
    const light = new THREE.DirectionalLight(0xffffff, 0.9);
    // Carried by the camera: the light comes from over the viewer's shoulder.
    light.position.set(1, 1.4, 2);
    light.target.position.set(0, 0, -1);
    this.camera.add(light, light.target);
    this.scene.add(this.camera);
    this.plane = new THREE.Plane(new THREE.Vector3(0, 0, -1), this.clip.position);
    this.groups = kinds.map(() => null);
    this.addBox();
    this.caps = null;
    this.frame = null;
    this.proteins = 0;
    this.level = null;           // index into LEVELS, chosen by setFrame
    this.msPerTriangle = null;   // measured on the first pictures
    this.lastPictureMs = null;
    this.floor = 0;              // the finest level allowed after a slow picture
    this.baseMs = null;          // a picture without the proteins (timedRender)
    this.onDetail = null;        // called after each timed picture
    this.fixedLevel = null;      // a level set by the page's ?detail=N (no adapting)
    this.resetView();
    window.addEventListener('resize', () => {
      this.camera.aspect = container.clientWidth / container.clientHeight;
      this.camera.updateProjectionMatrix();
      this.renderer.setSize(container.clientWidth, container.clientHeight);
      this.render();
    });
  }

  addBox() {
    const [x, y, z] = this.box;
    const edges = new THREE.EdgesGeometry(new THREE.BoxGeometry(x, y, z));
    const lines = new THREE.LineSegments(edges, new THREE.LineBasicMaterial({ color: 0x3a4452 }));
    lines.position.set(x / 2, y / 2, z / 2);
    this.scene.add(lines);
  }

  resetView() {
    const [x, y, z] = this.box;
    const centre = new THREE.Vector3(x / 2, y / 2, z / 2);
    const size = Math.hypot(x, y, z);
    this.camera.near = size / 1000;
    this.camera.far = size * 20;
    this.camera.position.copy(centre).add(new THREE.Vector3(0.35, 0.3, 1).multiplyScalar(1.25 * size));
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(centre);
    this.controls.update();
    this.render();
  }

  clippingPlanes() { return this.clip.on ? [this.plane] : []; }

  // The materials of a kind: shells for a compartment, a lit solid for a protein.
  makeGroup(k) {
    const color = this.colors[k];
    if (this.kinds[k].compartment) {
      const sphere = new THREE.SphereGeometry(1, 48, 32);
      const outer = new THREE.MeshLambertMaterial({ color, transparent: true, opacity: 0.28,
        depthWrite: false, side: THREE.DoubleSide });
      const inner = new THREE.MeshLambertMaterial({ color, transparent: true, opacity: 0.12,
        depthWrite: false, side: THREE.BackSide });
      return { shell: true, sphere, outer, inner, meshes: [], capacity: 0 };
    }
    const level = LEVELS[this.level];
    const material = level.points
      ? new THREE.PointsMaterial({ color, size: 2 * this.kinds[k].radius, sizeAttenuation: true })
      : new THREE.MeshLambertMaterial({ color });
    const geometry = level.points ? null : new THREE.IcosahedronGeometry(1, level.detail);
    return { shell: false, points: !!level.points, level: this.level, geometry, material,
      meshes: [], capacity: 0 };
  }

  // Shows `frame` (data.js parseFrame).
  setFrame(frame) {
    this.frame = frame;
    const byKind = this.kinds.map(() => []);
    for (let i = 0; i < frame.count; i++) {
      const k = frame.kind[i];
      if (k < byKind.length) byKind[k].push(i);
    }
    let proteins = 0;
    this.kinds.forEach((kind, k) => { if (!kind.compartment) proteins += byKind[k].length; });
    this.proteins = proteins;
    const budget = this.msPerTriangle ? TARGET_MS / this.msPerTriangle : FIRST_TRIANGLES;
    this.level = this.fixedLevel ?? Math.max(levelFor(proteins, budget), this.floor);
    this.kinds.forEach((kind, k) => this.updateKind(k, byKind[k]));
    this.updateCaps();
    this.timedRender();
  }

  // Renders and times the picture. The first time, the proteins' share of it is timed
  // too (a picture without them: the shells' fill, which no level changes, can dominate
  // in software GL), and sets the triangle budget, up or down; later, a picture whose
  // proteins take far longer than the target coarsens the level for good (`floor`).
  timedRender() {
    const first = this.msPerTriangle === null && this.fixedLevel === null;
    if (first) {
      this.render();  // compiles the shaders
      const proteins = this.groups.filter((g) => g && !g.shell);
      const shown = proteins.map((g) => g.meshes.map((m) => m.visible));
      proteins.forEach((g) => g.meshes.forEach((m) => { m.visible = false; }));
      this.baseMs = this.timePicture();
      proteins.forEach((g, i) => g.meshes.forEach((m, j) => { m.visible = shown[i][j]; }));
    }
    const ms = this.timePicture();
    this.lastPictureMs = ms;
    const proteinMs = Math.max(ms - (this.baseMs || 0), 0.1);
    const triangles = Math.max(1, this.proteins * LEVELS[this.level].triangles);
    const slow = proteinMs > 3 * TARGET_MS && this.level < LEVELS.length - 1 &&
      this.fixedLevel === null;
    if (first || slow) this.msPerTriangle = proteinMs / triangles;
    const wanted = levelFor(this.proteins, TARGET_MS / this.msPerTriangle);
    if (slow) this.floor = Math.max(this.level + 1, wanted);
    if ((first && wanted !== this.level) || slow) setTimeout(() => this.setFrame(this.frame), 0);
    if (this.onDetail) this.onDetail();
  }

  timePicture() {
    const start = performance.now();
    this.render();
    this.waitForGl();
    return performance.now() - start;
  }

  // Returns once the GL has drawn the picture: reading a pixel back waits for it, where
  // gl.finish() returns at once in Chromium (the drawing happens in its GPU process).
  waitForGl() {
    const gl = this.renderer.getContext();
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, this.pixel || (this.pixel = new Uint8Array(4)));
  }

  // What the page says about the level of detail; empty when bodies are drawn finely.
  detailText() {
    if (this.level === null || this.level === 0) return '';
    const l = LEVELS[this.level];
    const how = l.points ? 'as points' : `as ${l.triangles}-triangle spheres`;
    return `${this.proteins.toLocaleString('en-US')} proteins drawn ${how}` +
      ` (a picture takes ${Math.round(this.lastPictureMs)} ms)`;
  }

  updateKind(k, bodies) {
    let group = this.groups[k];
    const stale = group && !group.shell && group.level !== this.level;
    if (!group || stale || bodies.length > group.capacity) {
      if (group) for (const m of group.meshes) this.scene.remove(m);
      group = this.makeGroup(k);
      group.capacity = Math.max(16, Math.ceil(bodies.length * 1.5));
      this.groups[k] = group;
      this.allocate(group);
    }
    this.fill(group, bodies);
    for (const m of group.meshes) m.visible = !this.hidden.has(k);
  }

  allocate(g) {
    if (g.shell) {
      const outer = new THREE.InstancedMesh(g.sphere, g.outer, g.capacity);
      const inner = new THREE.InstancedMesh(g.sphere, g.inner, g.capacity);
      outer.renderOrder = 2;
      inner.renderOrder = 1;
      g.meshes = [inner, outer];
    } else if (g.points) {
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * g.capacity), 3));
      g.meshes = [new THREE.Points(geometry, g.material)];
    } else {
      g.meshes = [new THREE.InstancedMesh(g.geometry, g.material, g.capacity)];
    }
    for (const m of g.meshes) {
      m.frustumCulled = false;
      this.scene.add(m);
    }
  }

  fill(g, bodies) {
    const f = this.frame;
    const p = f.position;
    if (g.points) {
      const attribute = g.meshes[0].geometry.getAttribute('position');
      const a = attribute.array;
      bodies.forEach((i, j) => { a[3 * j] = p[3 * i]; a[3 * j + 1] = p[3 * i + 1]; a[3 * j + 2] = p[3 * i + 2]; });
      g.meshes[0].geometry.setDrawRange(0, bodies.length);
      attribute.needsUpdate = true;
      return;
    }
    // Each instance matrix is a scale by the radius and a translation.
    const write = (mesh, radiusOf) => {
      const m = mesh.instanceMatrix.array;
      bodies.forEach((i, j) => {
        const r = radiusOf(i);
        const o = 16 * j;
        m[o] = r; m[o + 1] = 0; m[o + 2] = 0; m[o + 3] = 0;
        m[o + 4] = 0; m[o + 5] = r; m[o + 6] = 0; m[o + 7] = 0;
        m[o + 8] = 0; m[o + 9] = 0; m[o + 10] = r; m[o + 11] = 0;
        m[o + 12] = p[3 * i]; m[o + 13] = p[3 * i + 1]; m[o + 14] = p[3 * i + 2]; m[o + 15] = 1;
      });
      mesh.count = bodies.length;
      mesh.instanceMatrix.needsUpdate = true;
    };
    if (g.shell) {
      write(g.meshes[0], (i) => Math.max(f.radius[i] - f.thickness[i], 1e-6));
      write(g.meshes[1], (i) => f.radius[i]);
    } else {
      write(g.meshes[0], (i) => f.radius[i]);
    }
  }

  // The membranes' cross-sections in the clipping plane (caps.js).
  updateCaps() {
    if (this.caps) {
      this.scene.remove(this.caps);
      this.caps.geometry.dispose();
      this.caps = null;
    }
    const planes = this.clippingPlanes();
    for (const g of this.groups) {
      if (!g) continue;
      const materials = g.shell ? [g.outer, g.inner] : [g.material];
      for (const m of materials) { m.clippingPlanes = planes; m.needsUpdate = true; }
    }
    if (!this.clip.on || !this.frame) return;
    this.caps = buildCaps(this.frame, this.kinds, this.colors, this.hidden, this.clip);
    if (this.caps) this.scene.add(this.caps);
  }

  setClip(on, axis, position) {
    this.clip = { on, axis, position };
    const normal = new THREE.Vector3(0, 0, 0);
    normal.setComponent(axis, -1);
    this.plane.set(normal, position);  // keeps coordinate <= position
    this.updateCaps();
    this.render();
  }

  setHidden(k, hidden) {
    if (hidden) this.hidden.add(k); else this.hidden.delete(k);
    const g = this.groups[k];
    if (g) for (const m of g.meshes) m.visible = !hidden;
    this.updateCaps();
    this.render();
  }

  render() {
    this.renderer.localClippingEnabled = true;
    this.renderer.render(this.scene, this.camera);
  }

  // Frames per second while the camera turns around the target for `ms` milliseconds.
  measureFps(ms) {
    return new Promise((resolve) => {
      const start = performance.now();
      let frames = 0;
      const tick = () => {
        const now = performance.now();
        if (now - start >= ms) {
          resolve({ fps: frames / ((now - start) / 1000), frames });
          return;
        }
        const offset = this.camera.position.clone().sub(this.controls.target);
        offset.applyAxisAngle(new THREE.Vector3(0, 1, 0), 0.01);
        this.camera.position.copy(this.controls.target).add(offset);
        this.camera.lookAt(this.controls.target);
        this.renderer.render(this.scene, this.camera);
        this.waitForGl();
        frames++;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
  }
}
