// Frame rate of the viewer's page in headless chromium while the camera turns, on a
// trajectory (make_synthetic_trajectory writes ones of any size), and the time from
// asking for a frame to its picture. Prints one line per trajectory.
//
// usage: NODE_PATH=BUILD/viewer/npm/node_modules node fps_benchmark.cjs NESTSIM OUT.h5...
//        [--gpu]   (--gpu: chromium's hardware GL instead of SwiftShader)
'use strict';
const { startView, stopView, launchBrowser, closeBrowser, waitForFrame } = require('./browser.cjs');

async function measureOne(context, nestsim, file) {
  const view = await startView(nestsim, file);
  try {
    const page = await context.newPage();
    const t0 = Date.now();
    await page.goto(view.url);
    await waitForFrame(page, 0, 600000);
    const firstMs = Date.now() - t0;
    const info = await page.evaluate(() => {
      const v = window.nestsimViewer;
      const f = v.app.scene.frame;
      const gl = v.app.scene.renderer.getContext();
      const debug = gl.getExtension('WEBGL_debug_renderer_info');
      return { live: f.live, sent: f.count, stride: f.stride, level: v.app.scene.level,
        detail: v.app.scene.detailText() || 'finest spheres',
        gl: debug ? gl.getParameter(debug.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER) };
    });
    const t1 = Date.now();
    await page.evaluate(() => window.nestsimViewer.show(1));
    await waitForFrame(page, 1, 600000);
    const nextMs = Date.now() - t1;
    const { fps, frames } = await page.evaluate(() => window.nestsimViewer.measureFps(10000));
    console.log(`${file}: ${info.live} bodies (${info.sent} sent, stride ${info.stride}; ${info.detail}), ` +
      `${fps.toFixed(2)} fps over ${frames} pictures; first frame shown after ${firstMs} ms, ` +
      `next frame after ${nextMs} ms; renderer ${info.gl}`);
    await page.close();
  } finally {
    await stopView(view);
  }
}

async function main() {
  const args = process.argv.slice(2).filter((a) => a !== '--gpu');
  const [nestsim, ...files] = args;
  const context = await launchBrowser(1280, 800, { gpu: process.argv.includes('--gpu') });
  try {
    for (const file of files) await measureOne(context, nestsim, file);
  } finally {
    await closeBrowser(context);
  }
}

main().catch((e) => { console.error(`FAIL ${e.stack || e}`); process.exit(1); });
